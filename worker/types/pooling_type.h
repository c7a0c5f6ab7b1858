// PoolingType: how an embedding model turns its last hidden states into one vector per input; the
// values are GGUF {arch}.pooling_type's (llama.cpp's enum llama_pooling_type).
#pragma once

namespace smallmind::worker {

enum class PoolingType {
  kNone = 0,  // one vector per token: no embedding of the whole input
  kMean = 1,  // the average of every token's hidden state
  kCls = 2,   // the first token's ([CLS])
  kLast = 3,  // the last token's (decoder embedders: Qwen3-Embedding)
  kRank = 4,  // a classification head over [CLS] scores a query-document pair (rerankers)
};

}  // namespace smallmind::worker
