// Test support for the JSON output constraint: random byte walks over what JsonPrefix takes, a
// vocabulary of given pieces, and the check that MaskJsonLogits leaves exactly the tokens
// JsonPrefix takes byte by byte in every state random walks from a start state reach.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "worker/sample/json_constraint.h"
#include "worker/tokenizer/token_bytes.h"
#include "worker/tokenizer/tokenizer.h"

namespace smallmind::worker::testing {

// Feeds `state` bytes it takes, drawn at random (3 times in 4 among `closers` when it takes one of
// them, so that walks finish), until it is complete or `max_steps` bytes went in; returns them.
// `dead_end`: a state took no byte at all.
inline std::string RandomByteWalk(JsonPrefix& state, std::string_view closers, std::mt19937& rng,
                                  int max_steps, bool* dead_end) {
  std::string text;
  *dead_end = false;
  for (int step = 0; step < max_steps && !state.complete(); step++) {
    std::vector<unsigned char> ok, ok_closers;
    for (int c = 0; c < 256; c++) {
      JsonPrefix s = state;
      if (!s.Feed(static_cast<unsigned char>(c))) continue;
      ok.push_back(static_cast<unsigned char>(c));
      if (closers.find(static_cast<char>(c)) != std::string_view::npos) {
        ok_closers.push_back(static_cast<unsigned char>(c));
      }
    }
    if (ok.empty()) {
      *dead_end = true;
      return text;
    }
    const auto& from = !ok_closers.empty() && rng() % 4 != 0 ? ok_closers : ok;
    const unsigned char c = from[rng() % from.size()];
    state.Feed(c);
    text.push_back(static_cast<char>(c));
  }
  return text;
}

// A vocabulary of the given pieces, ids 0 and 1 BOS and EOS.
class PieceTokenizer : public Tokenizer {
 public:
  explicit PieceTokenizer(std::vector<std::string> pieces) : pieces_(std::move(pieces)) {}
  TokenizerKind kind() const override { return TokenizerKind::kSpm; }
  int vocab_size() const override { return static_cast<int>(pieces_.size()); }
  TokenId bos_id() const override { return 0; }
  TokenId eos_id() const override { return 1; }
  bool add_bos_default() const override { return true; }
  std::vector<TokenId> Encode(std::string_view, bool) const override { return {}; }
  void AppendTokenBytes(TokenId, TokenId id, std::string* out) const override {
    out->append(pieces_[id]);
  }
  std::string_view Piece(TokenId id) const override { return pieces_[id]; }

 private:
  std::vector<std::string> pieces_;
};

// BOS, EOS, every single byte, then `extra` pieces.
inline std::vector<std::string> EveryByteAnd(std::initializer_list<const char*> extra) {
  std::vector<std::string> pieces = {"<s>", "</s>"};
  for (int c = 0; c < 256; c++) pieces.emplace_back(1, static_cast<char>(c));
  for (const char* p : extra) pieces.emplace_back(p);
  return pieces;
}

// `walks` walks of at most `steps` tokens from `start`, each token drawn among those the mask
// left: in every state the mask leaves exactly the tokens that Feed takes, never none.
inline void ExpectMaskAgreesWithFeeding(const std::vector<std::string>& pieces,
                                        const JsonPrefix& start, int walks, int steps,
                                        unsigned seed) {
  const PieceTokenizer tokenizer(pieces);
  const TokenBytes vocab(tokenizer);
  std::mt19937 rng(seed);
  std::vector<float> logits(pieces.size());
  for (int walk = 0; walk < walks; walk++) {
    JsonPrefix state = start;
    for (int step = 0; step < steps && !state.complete(); step++) {
      std::fill(logits.begin(), logits.end(), 0.0f);
      const int left = MaskJsonLogits(state, vocab, logits);
      std::vector<TokenId> ok;
      for (TokenId id = 0; id < static_cast<TokenId>(pieces.size()); id++) {
        JsonPrefix s = state;
        const bool takes = !vocab.Of(id).empty() && s.Feed(vocab.Of(id));
        ASSERT_EQ(!std::isinf(logits[id]), takes) << "token " << nlohmann::json(pieces[id]).dump();
        if (takes) ok.push_back(id);
      }
      ASSERT_EQ(left, static_cast<int>(ok.size()));
      ASSERT_FALSE(ok.empty());
      ASSERT_TRUE(state.Feed(vocab.Of(ok[rng() % ok.size()])));
    }
  }
}

}  // namespace smallmind::worker::testing
