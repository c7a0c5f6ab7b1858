// RerankPair: how a cross-encoder reranker's input joins a query and a document, as llama.cpp's
// server builds it (format_prompt_rerank without a rerank template): [BOS] query [EOS] [SEP] doc
// [EOS], each special only when its vocabulary flag asks it and the token exists, and the EOS
// falling back to SEP when the vocabulary has no EOS. Plain data and a pure function; thread-safe.
#pragma once

#include <span>
#include <vector>

#include "worker/types/token_id.h"

namespace smallmind::worker {

struct RerankPairFormat {
  TokenId bos = -1;      // -1: none
  TokenId eos = -1;      // -1: none (SEP ends the parts instead)
  TokenId sep = -1;      // -1: none
  bool add_bos = false;  // tokenizer.ggml.add_bos_token (WordPiece default true)
  bool add_eos = false;  // tokenizer.ggml.add_eos_token (WordPiece default false)
  bool add_sep = false;  // tokenizer.ggml.add_sep_token (WordPiece default true)
};

// The reranker input of `query` and `doc` (each tokenized without specials). For a BERT
// vocabulary with llama.cpp's defaults (no EOS, add_eos false): [CLS] query [SEP] doc; with an
// EOS and add_eos (a converted Hugging Face reranker's [CLS] $A [SEP] $B [SEP]) the trailing one.
std::vector<TokenId> JoinRerankPair(const RerankPairFormat& format, std::span<const TokenId> query,
                                    std::span<const TokenId> doc);

}  // namespace smallmind::worker
