// SpmTokenizer: SentencePiece-style BPE over scored pieces with byte fallback, encoding as
// llama2.c's run.c and llama.cpp's SPM tokenizer do (Llama 1/2, Mistral, Mixtral, Phi-3, Gemma
// 2/3). Built once by a loader (llama2.c tokenizer.bin, GGUF metadata, builtin); immutable
// afterwards, so every method is const and thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "shared/status.h"
#include "worker/tokenizer/tokenizer.h"

namespace smallmind::worker {

// Values as in GGUF `tokenizer.ggml.token_type`.
enum class SpmTokenType : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

// A vocabulary as a loader reads it. Spaces may be stored as U+2581 '▁' (GGUF) or ' ' (llama2.c);
// SpmTokenizer::Create normalises both to ' '.
struct SpmVocab {
  std::vector<std::string> pieces;  // [n_vocab]
  std::vector<float> scores;        // [n_vocab] merge priority, higher merges first
  std::vector<SpmTokenType> types;  // [n_vocab]
  TokenId bos_id = -1;
  TokenId eos_id = -1;
  TokenId unk_id = -1;
  // End of turn of chat models; -1: found by its spelling (<end_of_turn>, <|end|>, ...), if any.
  // Create applies llama.cpp's type overrides by spelling first (special_spellings.h).
  TokenId eot_id = -1;
  bool add_bos = true;
  bool add_space_prefix = true;  // SentencePiece "dummy prefix": encode " " + text (not Gemma)
};

class SpmTokenizer final : public Tokenizer {
 public:
  // Validates `vocab` (sizes agree, ids in range, scores not NaN, byte tokens spelled <0xHH>) and
  // returns InvalidArgument naming the first problem. `kind` is kSpm, or kByte for the builtin
  // model.
  static shared::Result<std::unique_ptr<SpmTokenizer>> Create(
      SpmVocab vocab, TokenizerKind kind = TokenizerKind::kSpm);

  TokenizerKind kind() const override { return kind_; }
  int vocab_size() const override { return static_cast<int>(pieces_.size()); }
  TokenId bos_id() const override { return bos_id_; }
  TokenId eos_id() const override { return eos_id_; }
  bool add_bos_default() const override { return add_bos_; }

  // User-defined pieces (Gemma's <start_of_turn>, its runs of newlines) are cut out of the raw
  // text first, by their spelling as stored (leftmost-longest), and emitted whole, as llama.cpp
  // and Hugging Face do. Each run of text between them is encoded as run.c's encode() does: the
  // dummy prefix (when the vocabulary has one), one symbol per code point (byte fallback when the
  // code point is no piece), then the best-scoring adjacent pair merged (leftmost on ties) until
  // none merges. O(n log n) with a heap; a NUL byte is an ordinary byte (run.c would stop there).
  std::vector<TokenId> Encode(std::string_view text, bool add_bos) const override;
  // Byte tokens give their byte; control and unused tokens nothing; the unknown token its piece
  // ("<unk>", as run.c prints it); out-of-range ids nothing. With the dummy prefix, a leading
  // space right after BOS is dropped (it is the prefix, not text).
  void AppendTokenBytes(TokenId prev, TokenId id, std::string* out) const override;
  // The normalised piece: ' ' for space, "<s>"/"</s>" for BOS/EOS in either source convention.
  std::string_view Piece(TokenId id) const override;

  TokenId eot_id() const override { return eot_id_; }
  float Score(TokenId id) const { return scores_[id]; }
  SpmTokenType Type(TokenId id) const { return types_[id]; }
  const AddedTokenMatcher* special_tokens() const override { return &special_; }

 private:
  struct Symbol;  // one node of the merge list, defined in the .cc
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  SpmTokenizer() = default;
  // Mergeable pieces only (normal, user-defined); -1 when `text` is none.
  TokenId Lookup(std::string_view text) const;
  // Encodes one run of text without user-defined pieces, appending its ids.
  void EncodeRun(std::string_view text, std::vector<TokenId>* out) const;
  void SplitCodePoints(std::string_view input, std::vector<Symbol>* symbols) const;
  void MergeSymbols(std::string_view input, std::vector<Symbol>* symbols) const;

  TokenizerKind kind_ = TokenizerKind::kSpm;
  std::vector<std::string> pieces_;        // [n_vocab] normalised
  std::vector<float> scores_;              // [n_vocab]
  std::vector<SpmTokenType> types_;        // [n_vocab]
  std::vector<uint8_t> byte_value_;        // [n_vocab] the byte of a kByte token, else 0
  std::array<TokenId, 256> byte_token_{};  // byte -> its kByte token, -1 when absent
  std::unordered_map<std::string, TokenId, StringHash, std::equal_to<>> lookup_;
  // Both by the spelling as stored (a "\xE2\x96\x81" in it never matches raw text, as in
  // llama.cpp).
  AddedTokenMatcher added_;    // user-defined pieces, cut out before SentencePiece
  AddedTokenMatcher special_;  // control and user-defined pieces, for EncodeSpecial
  TokenId bos_id_ = -1;
  TokenId eos_id_ = -1;
  TokenId unk_id_ = -1;
  TokenId eot_id_ = -1;
  bool add_bos_ = true;
  bool add_space_prefix_ = true;
};

// Reads a llama2.c tokenizer.bin holding `vocab_size` tokens (the count comes from the model
// header). Detects BOS "\n<s>\n", EOS "\n</s>\n", "<unk>" and "<0xHH>" byte pieces. Truncated or
// malformed files give InvalidArgument naming the file and the offending token.
shared::Result<std::unique_ptr<SpmTokenizer>> LoadLlama2cTokenizer(const std::string& path,
                                                                   int vocab_size);
// The same from the bytes of a whole tokenizer.bin in memory (e.g. embedded in the binary);
// `name` stands for the path in messages.
shared::Result<std::unique_ptr<SpmTokenizer>> LoadLlama2cTokenizerFromMemory(
    std::string_view bytes, const std::string& name, int vocab_size);

// The builtin test model's 259-token vocabulary: 0 <unk>, 1 <s>, 2 </s>, 3..258 <0x00>..<0xFF>.
// Every text encodes to byte tokens (no dummy prefix); BOS is added by default.
std::unique_ptr<SpmTokenizer> MakeByteLevelTokenizer();

}  // namespace smallmind::worker
