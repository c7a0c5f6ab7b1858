#include "worker/embed_request_builder.h"

#include <algorithm>
#include <optional>
#include <string>

#include "worker/tokenizer/rerank_pair.h"

namespace smallmind::worker {
namespace {

using shared::InvalidArgument;

// The pooling `req` gets from this model (ModelInfo.pooling says which the model's is).
shared::Result<PoolingType> ResolvePooling(const v1::EmbedRequest& req, const ModelConfig& c) {
  if (req.pooling() == v1::POOLING_LAST) {
    if (c.encoder && c.pooling != PoolingType::kLast) {
      return InvalidArgument("pooling LAST: this encoder pools by " +
                             std::string(PoolingTypeName(c.pooling)) +
                             " (its file's pooling_type); leave pooling unset");
    }
    return PoolingType::kLast;
  }
  if (req.pooling() != v1::POOLING_MODEL) {
    return InvalidArgument("pooling must be POOLING_MODEL (0) or POOLING_LAST (1), got " +
                           std::to_string(static_cast<int>(req.pooling())));
  }
  if (c.pooling == PoolingType::kRank) {
    return InvalidArgument(
        "the model is a reranker (pooling rank: a classification head scores query-document "
        "pairs): it gives no embeddings; use Rerank (HTTP POST /v1/rerank)");
  }
  if (c.pooling == PoolingType::kNone) {
    return InvalidArgument(
        "the model (" + c.architecture +
        ") names no pooling in its file (a generation model, not an embedding model): ask "
        "last-token pooling explicitly (gRPC pooling = POOLING_LAST, HTTP \"pooling\": \"last\") "
        "to embed with the final state of each input's last token");
  }
  return c.pooling;
}

// Input i's tokens: its ids as given, or its text by the model's rule (BERT: [CLS] ... [SEP]).
shared::Result<std::vector<TokenId>> InputTokens(const v1::EmbedInput& in, int i,
                                                 const LoadedModel& model) {
  const ModelConfig& c = model.llama.config;
  const std::string name = "inputs[" + std::to_string(i) + "]";
  std::vector<TokenId> ids;
  if (in.has_token_ids()) {
    for (uint32_t id : in.token_ids().ids()) {
      if (id >= static_cast<uint32_t>(c.vocab_size)) {
        return InvalidArgument(name + " holds token id " + std::to_string(id) + ", outside [0, " +
                               std::to_string(c.vocab_size) + ") (the vocabulary)");
      }
      ids.push_back(static_cast<TokenId>(id));
    }
  } else if (in.input_case() == v1::EmbedInput::kText) {
    const Tokenizer& tok = *model.tokenizer;
    const size_t per_token = model.max_token_text_bytes;
    if (per_token > 0 && in.text().size() / per_token > static_cast<size_t>(c.context_length)) {
      return InvalidArgument(name + " is " + std::to_string(in.text().size()) +
                             " bytes, more tokens than the model's context of " +
                             std::to_string(c.context_length));
    }
    ids = tok.Encode(in.text(), tok.add_bos_default());
    // Encode's [CLS] and [SEP] alone stand for an empty text.
    if (in.text().empty()) ids.clear();
  }
  if (ids.empty()) return InvalidArgument(name + " is empty: every input needs a token");
  if (static_cast<int>(ids.size()) > c.context_length) {
    return InvalidArgument(name + " has " + std::to_string(ids.size()) +
                           " tokens, more than the model's context of " +
                           std::to_string(c.context_length) + " tokens");
  }
  return ids;
}

// The reranker's inputs: document i joined with the query (rerank_pair.h), pooled by rank.
shared::Result<std::vector<std::vector<TokenId>>> RerankInputs(const v1::EmbedWork& work,
                                                               const LoadedModel& model) {
  const ModelConfig& c = model.llama.config;
  const Tokenizer& tok = *model.tokenizer;
  if (c.pooling != PoolingType::kRank) {
    return InvalidArgument("the model is not a reranker: its pooling is " +
                           std::string(PoolingTypeName(c.pooling)) +
                           " (its file's pooling_type), a reranker's is rank with a "
                           "classification head (a cross-encoder such as bge-reranker)");
  }
  const std::optional<RerankPairFormat> format = tok.rerank_pair_format();
  if (!format) {
    return InvalidArgument(
        "the reranker's vocabulary has no query-document pair rule here (only a bert WordPiece "
        "vocabulary has one)");
  }
  const std::string& query = work.rerank_query();
  const size_t per_token = std::max<size_t>(1, model.max_token_text_bytes);
  const std::vector<TokenId> query_ids = tok.Encode(query, false);
  std::vector<std::vector<TokenId>> out;
  for (int i = 0; i < work.request().inputs_size(); i++) {
    const v1::EmbedInput& in = work.request().inputs(i);
    const std::string name = "documents[" + std::to_string(i) + "]";
    if (in.input_case() != v1::EmbedInput::kText) {
      return InvalidArgument(name + " must be text");
    }
    if (in.text().size() / per_token > static_cast<size_t>(c.context_length)) {
      return InvalidArgument(name + " is " + std::to_string(in.text().size()) +
                             " bytes, more tokens than the model's context of " +
                             std::to_string(c.context_length));
    }
    std::vector<TokenId> ids = JoinRerankPair(*format, query_ids, tok.Encode(in.text(), false));
    if (static_cast<int>(ids.size()) > c.context_length) {
      return InvalidArgument("the query with " + name + " is " + std::to_string(ids.size()) +
                             " tokens, more than the model's context of " +
                             std::to_string(c.context_length) + " tokens");
    }
    if (ids.empty()) return InvalidArgument(name + " and the query give no token");
    out.push_back(std::move(ids));
  }
  return out;
}

}  // namespace

shared::Result<EmbedRequests> BuildEmbedRequests(const v1::EmbedWork& work,
                                                 const LoadedModel& model) {
  const v1::EmbedRequest& req = work.request();
  const ModelConfig& c = model.llama.config;
  if (req.inputs_size() == 0 || req.inputs_size() > kMaxEmbedInputs) {
    return InvalidArgument("inputs must hold [1, " + std::to_string(kMaxEmbedInputs) +
                           "] inputs, got " + std::to_string(req.inputs_size()));
  }
  if (req.dimensions() > static_cast<uint32_t>(c.dim)) {
    return InvalidArgument("dimensions must be in [1, " + std::to_string(c.dim) +
                           "] (the model's embedding width; 0 = all), got " +
                           std::to_string(req.dimensions()));
  }
  EmbedRequests out;
  out.rerank = work.has_rerank_query();
  std::vector<std::vector<TokenId>> pairs;
  PoolingType pooling = PoolingType::kRank;
  if (out.rerank) {
    SM_ASSIGN_OR_RETURN(pairs, RerankInputs(work, model));
  } else {
    SM_ASSIGN_OR_RETURN(pooling, ResolvePooling(req, c));
  }
  out.dimensions = out.rerank             ? c.rank_outputs
                   : req.dimensions() > 0 ? static_cast<int>(req.dimensions())
                                          : c.dim;
  for (int i = 0; i < req.inputs_size(); i++) {
    SequenceRequest seq;
    seq.request_id = req.request_id() + "#" + std::to_string(i);
    if (out.rerank) {
      seq.prompt = std::move(pairs[i]);
    } else {
      SM_ASSIGN_OR_RETURN(seq.prompt, InputTokens(req.inputs(i), i, model));
    }
    seq.embed = pooling;
    seq.stopping.max_new_tokens = 1;  // the picker's contract; an embedding picks nothing
    seq.stopping.eos_id = model.tokenizer->eos_id();
    seq.mode = req.runtime().deterministic() ? kernels::ExecMode::kDeterministic
                                             : kernels::ExecMode::kParallel;
    seq.max_threads = static_cast<int>(req.runtime().max_threads());
    seq.parallel_threshold = static_cast<int>(req.runtime().parallel_threshold());
    seq.speculate = false;
    seq.gateway_queue_ms = work.gateway_queue_ms();
    out.inputs.push_back(std::move(seq));
  }
  return out;
}

}  // namespace smallmind::worker
