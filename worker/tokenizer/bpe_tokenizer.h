// BpeTokenizer: GPT-2-style byte-level BPE: a family's regex pre-tokenizer, then merges ranked by
// their position in the merges list over tokens spelled in GPT-2's byte alphabet, encoding as the
// model's Hugging Face tokenizer does. Built once by a loader (GGUF tokenizer.ggml.model = gpt2);
// immutable afterwards, so every method is const and thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "shared/status.h"
#include "worker/tokenizer/added_token_matcher.h"
#include "worker/tokenizer/byte_level_map.h"
#include "worker/tokenizer/pre_tokenizer.h"
#include "worker/tokenizer/pre_tokenizer_families.h"
#include "worker/tokenizer/spm_tokenizer.h"  // SpmTokenType: GGUF's token types
#include "worker/tokenizer/tokenizer.h"

namespace smallmind::worker {

// A vocabulary as a loader reads it.
struct BpeVocab {
  // [n_vocab] Normal tokens are spelled in ByteLevelMap's alphabet ("Ġworld"); user-defined
  // (added) tokens are raw text.
  std::vector<std::string> tokens;
  std::vector<SpmTokenType> types;  // [n_vocab] GGUF token types; empty means all normal
  std::vector<std::string> merges;  // [n_merges] "left right"; index = rank, lower merges first
  PreTokenizerFamily pre;           // the regexes and options tokenizer.ggml.pre selects
  TokenId bos_id = -1;
  TokenId eos_id = -1;
  TokenId eot_id = -1;  // end of turn for chat models; -1: found by spelling, if any
  bool add_bos = false;
  bool add_eos = false;
};

class BpeTokenizer final : public Tokenizer {
 public:
  // Validates `vocab` (sizes agree, known token types, ids in range, merges spelled "a b",
  // patterns compile) and returns InvalidArgument naming the first problem. A merge whose halves
  // or result are not tokens can never apply and is skipped. Applies llama.cpp's token type
  // overrides by spelling and finds the end of turn when none is given (special_spellings.h).
  static shared::Result<std::unique_ptr<BpeTokenizer>> Create(BpeVocab vocab);

  TokenizerKind kind() const override { return TokenizerKind::kBpe; }
  int vocab_size() const override { return static_cast<int>(tokens_.size()); }
  TokenId bos_id() const override { return bos_id_; }
  TokenId eos_id() const override { return eos_id_; }
  bool add_bos_default() const override { return add_bos_; }

  // User-defined tokens are cut out of the raw text first (leftmost-longest); each remaining run
  // is pre-tokenized and every piece's bytes are merged lowest rank first (leftmost on ties).
  // Control tokens are never produced: their text is encoded as plain text. A byte whose
  // alphabet character is not a token is dropped, as Hugging Face does without an unk token.
  std::vector<TokenId> Encode(std::string_view text, bool add_bos) const override;
  const AddedTokenMatcher* special_tokens() const override { return &special_; }
  // Normal tokens give the bytes their spelling stands for, user-defined tokens their raw text,
  // control and unused tokens (BOS/EOS among them) nothing; out-of-range ids nothing.
  void AppendTokenBytes(TokenId prev, TokenId id, std::string* out) const override;
  // The vocabulary entry as stored (byte-alphabet spelling, e.g. "Ġworld").
  std::string_view Piece(TokenId id) const override;

  TokenId eot_id() const override { return eot_id_; }
  bool add_eos_default() const { return add_eos_; }
  SpmTokenType Type(TokenId id) const { return types_[id]; }
  const std::string& pre_tokenizer_name() const { return pre_name_; }
  int merge_count() const { return static_cast<int>(merges_.size()); }

 private:
  struct Symbol;  // one node of a word's merge list, defined in the .cc
  struct Merge {
    int32_t rank;
    TokenId result;
  };
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  BpeTokenizer() = default;
  shared::Status BuildLookups(const BpeVocab& vocab);
  shared::Status BuildMerges(const std::vector<std::string>& merges);
  void BuildDecodedBytes();
  TokenId Lookup(std::string_view spelling) const;
  const Merge* FindMerge(TokenId left, TokenId right) const;
  // Encodes one pre-token piece of raw bytes, appending its ids.
  void EncodePiece(std::string_view piece, std::vector<Symbol>* symbols, std::string* scratch,
                   std::vector<TokenId>* out) const;
  void MergeSymbols(std::vector<Symbol>* symbols) const;

  ByteLevelMap byte_map_;
  std::vector<std::string> tokens_;  // [n_vocab] as stored
  std::vector<SpmTokenType> types_;  // [n_vocab]
  // Spelling -> id of every non-control token (the lowest id keeps a duplicate spelling).
  std::unordered_map<std::string, TokenId, StringHash, std::equal_to<>> lookup_;
  std::array<TokenId, 256> byte_token_{};       // byte -> token of its alphabet character, or -1
  std::unordered_map<uint64_t, Merge> merges_;  // (left id << 32 | right id) -> merge
  std::string decoded_;                         // the raw bytes of every token, concatenated
  std::vector<uint32_t> decoded_offset_;        // [n_vocab + 1] token i is [off[i], off[i + 1])
  AddedTokenMatcher added_;                     // user-defined tokens
  AddedTokenMatcher special_;                   // control and user-defined, for EncodeSpecial
  std::unique_ptr<PreTokenizer> pre_;
  std::string pre_name_;
  bool ignore_merges_ = false;
  TokenId bos_id_ = -1;
  TokenId eos_id_ = -1;
  TokenId eot_id_ = -1;
  bool add_bos_ = false;
  bool add_eos_ = false;
};

}  // namespace smallmind::worker
