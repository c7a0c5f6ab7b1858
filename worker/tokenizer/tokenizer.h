// Tokenizer: text <-> token ids for one model. Built once by a loader, then shared read-only by
// the scheduler thread and service threads. All methods are const and thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "worker/tokenizer/added_token_matcher.h"
#include "worker/tokenizer/rerank_pair.h"
#include "worker/types/token_id.h"

namespace smallmind::worker {

enum class TokenizerKind { kSpm, kBpe, kByte, kWordPiece };

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  virtual TokenizerKind kind() const = 0;
  virtual int vocab_size() const = 0;
  virtual TokenId bos_id() const = 0;  // -1 when the vocabulary has none
  virtual TokenId eos_id() const = 0;  // -1 when the vocabulary has none
  // End of turn of chat models (<|eot_id|>, <|im_end|>); ends generation like EOS. -1 when none.
  virtual TokenId eot_id() const { return -1; }
  // Whether the model wants BOS prepended by default.
  virtual bool add_bos_default() const = 0;

  // Encodes text; special-token text is treated as plain text. Prepends BOS when add_bos.
  virtual std::vector<TokenId> Encode(std::string_view text, bool add_bos) const = 0;

  // Encodes text in which the spelling of a control or user-defined token ("<s>", "<|im_start|>")
  // stands for that token, as a rendered chat prompt needs (llama.cpp's parse_special): such
  // spellings become their tokens (leftmost, longest first) and each run of text between them is
  // encoded by Encode on its own, so SentencePiece's dummy prefix starts each run, as Hugging
  // Face's legacy Llama tokenizer and llama.cpp do. Prepends BOS when add_bos.
  std::vector<TokenId> EncodeSpecial(std::string_view text, bool add_bos) const;
  // The control and user-defined tokens by spelling; null when the vocabulary has none.
  virtual const AddedTokenMatcher* special_tokens() const { return nullptr; }

  // Appends the raw bytes token `id` contributes when it follows `prev` (-1 at the start):
  // byte-fallback tokens give their one byte; a leading space after BOS is dropped (SentencePiece
  // rule); BOS/EOS and other control tokens give nothing. Bytes may be incomplete UTF-8; the
  // Detokenizer assembles code points. Never allocates when `out` has capacity.
  virtual void AppendTokenBytes(TokenId prev, TokenId id, std::string* out) const = 0;

  // The vocabulary entry of `id` as stored (for debugging / TokenizeResponse.pieces).
  virtual std::string_view Piece(TokenId id) const = 0;

  // How a reranker's query and document are joined (rerank_pair.h); nullopt when this kind of
  // vocabulary has no cross-encoder rule here (only WordPiece, BERT's, has one).
  virtual std::optional<RerankPairFormat> rerank_pair_format() const { return std::nullopt; }
};

// The most bytes of input text one token of `tokenizer` can stand for: its longest piece (a piece
// spells its text at least as long as the input: SentencePiece's '▁' is 3 bytes for a space,
// byte-level BPE 1-2 per byte, a special token its spelling) and at least 4 (an unknown symbol is
// one UTF-8 character). A text of n bytes is at least ceil(n / this) tokens, which lets a prompt
// too long for the context be refused before it is tokenized. O(vocabulary); call once.
size_t MaxTokenTextBytes(const Tokenizer& tokenizer);

}  // namespace smallmind::worker
