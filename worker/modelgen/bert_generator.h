// BERT generator: GGUF files of the `bert` architecture (llama.cpp's keys and tensor names:
// token, token-type and position embeddings, the embedding LayerNorm, post-norm blocks with
// biases, GELU feed-forward; bert.attention.causal false, bert.pooling_type) with seeded
// pseudo-random weights and a WordPiece vocabulary: a small synthetic one, or the tokens of a
// vocabulary-only GGUF such as ../shared/tokenizer-vectors/ggml-vocab-bert-bge.gguf. The files are
// what the embeddings path and the llama.cpp oracle (bench/compare/llama_cpp_embed_oracle.mjs) run.
// Stateless functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dtype.h"
#include "shared/status.h"
#include "worker/types/pooling_type.h"

namespace smallmind::worker {

struct BertGeneratorOptions {
  std::string name = "smallmind-bert-tiny";  // general.name
  int dim = 64;
  int hidden_dim = 256;
  int n_layers = 2;
  int n_heads = 4;
  int context_length = 128;  // rows of position_embd
  float layer_norm_eps = 1e-12f;
  PoolingType pooling = PoolingType::kMean;  // bert.pooling_type
  // > 0: a cross-encoder reranker (pooling must be kRank): a classification head as llama.cpp
  // names it, cls.weight [dim, dim] + cls.bias (BERT's pooler) and cls.output.weight
  // [rank_outputs, dim] + cls.output.bias, in weight_type; more than one output also writes
  // bert.classifier.output_labels (llama.cpp sizes the head by it).
  int rank_outputs = 0;
  // Matrices (attention, FFN) in this type: F32, F16 or Q8_0; embeddings F32 unless F16 is asked
  // (as llama.cpp's converter stores them), norms and biases always F32.
  kernels::DType weight_type = kernels::DType::kF32;
  // A GGUF whose tokenizer.ggml.tokens (a bert vocabulary) and special ids are copied; empty: the
  // synthetic vocabulary (SyntheticWordPieceTokens).
  std::string vocab_file;
  uint64_t seed = 0x62657274736d6cULL;  // "bertsml"
};

// "bert-tiny" (the defaults), "bert-tiny-rerank" (bert-tiny with rank pooling and a one-output
// head), "bench-110M-bert" (BERT-base's shape: dim 768, 12 layers, 12 heads, ffn 3072, context
// 512) and "bench-110M-bert-rerank" (that shape as a reranker); unknown names are
// InvalidArgument listing them.
shared::Result<BertGeneratorOptions> BertGeneratorPreset(std::string_view preset);

// The synthetic vocabulary: [PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, [MASK] 4, then for every ASCII
// letter, digit and punctuation character its word-initial ("▁a") and continuation ("a") piece,
// then a few common English words ("▁the", "▁hello", ...). Every ASCII word tokenizes.
std::vector<std::string> SyntheticWordPieceTokens();

// Shapes in range (heads divide dim, row lengths whole blocks of the type), a supported type.
shared::Status ValidateBertGeneratorOptions(const BertGeneratorOptions& options);

// Writes the model to `path`; the same options give the same bytes on every machine.
shared::Status WriteBertModel(const BertGeneratorOptions& options, const std::string& path);

}  // namespace smallmind::worker
