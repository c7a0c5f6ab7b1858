// PoolingType: how an embedding model turns its last hidden states into one vector per input; the
// values are GGUF {arch}.pooling_type's (llama.cpp's enum llama_pooling_type).
#pragma once

#include <string_view>

namespace smallmind::worker {

enum class PoolingType {
  kNone = 0,  // one vector per token: no embedding of the whole input
  kMean = 1,  // the average of every token's hidden state
  kCls = 2,   // the first token's ([CLS])
  kLast = 3,  // the last token's (decoder embedders: Qwen3-Embedding)
  kRank = 4,  // a classification head over [CLS] scores a query-document pair (rerankers)
};

// "none", "mean", "cls", "last" or "rank" (llama.cpp's names).
constexpr std::string_view PoolingTypeName(PoolingType p) {
  switch (p) {
    case PoolingType::kMean: return "mean";
    case PoolingType::kCls: return "cls";
    case PoolingType::kLast: return "last";
    case PoolingType::kRank: return "rank";
    case PoolingType::kNone: break;
  }
  return "none";
}

}  // namespace smallmind::worker
