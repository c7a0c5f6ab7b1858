// TokenBytes: the bytes each token of a vocabulary adds to the output text mid-stream
// (Tokenizer::AppendTokenBytes after an ordinary token), all in one flat array, for output
// constraints that try every token against a grammar at every step. Control tokens (BOS, EOS, end
// of turn, unused) add none, whatever their pieces. Built once per model; immutable and thread-safe
// after construction.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "worker/tokenizer/tokenizer.h"
#include "worker/types/token_id.h"

namespace smallmind::worker {

class TokenBytes {
 public:
  explicit TokenBytes(const Tokenizer& tokenizer);

  int vocab_size() const { return static_cast<int>(offsets_.size()) - 1; }
  // The bytes of token `id` (in [0, vocab_size())); empty for a control token.
  std::string_view Of(TokenId id) const {
    return std::string_view(bytes_).substr(offsets_[id], offsets_[id + 1] - offsets_[id]);
  }
  // Token `id` has bytes, all printable ASCII other than '"' and '\\': text that goes inside a
  // JSON (or C) string as it is, so a JSON constraint takes it there without reading it.
  bool Plain(TokenId id) const { return plain_[id] != 0; }

 private:
  std::vector<uint32_t> offsets_;  // [vocab_size + 1]: token id's bytes are [offsets_[id], +1)
  std::string bytes_;
  std::vector<uint8_t> plain_;  // [vocab_size]: Plain(id)
};

}  // namespace smallmind::worker
