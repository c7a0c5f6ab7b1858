#include "worker/worker_service.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "shared/grpc_status.h"
#include "shared/huge_region.h"
#include "worker/embed_job.h"
#include "worker/embed_reactor.h"
#include "worker/submit_reactor.h"
#include "worker/tokenizer/detokenizer.h"

namespace smallmind::worker {
namespace {

grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* context, const shared::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(shared::ToGrpcStatus(status));
  return reactor;
}

const char* TokenizerKindName(TokenizerKind kind) {
  switch (kind) {
    case TokenizerKind::kSpm: return "spm";
    case TokenizerKind::kBpe: return "bpe";
    case TokenizerKind::kByte: return "byte";
    case TokenizerKind::kWordPiece: return "wordpiece";
  }
  return "unknown";
}

// Tokenize's answer (on a lane thread): text -> ids, or ids -> text, each with its pieces.
shared::Status TokenizeOn(const LoadedModel& model, const v1::TokenizeRequest& request,
                          v1::TokenizeResponse* response) {
  const Tokenizer& tok = *model.tokenizer;
  if (request.has_token_ids()) {
    Detokenizer detok(tok);
    std::string text;
    for (uint32_t id : request.token_ids().ids()) {
      if (id >= static_cast<uint32_t>(tok.vocab_size())) {
        return shared::InvalidArgument("token_ids contains " + std::to_string(id) +
                                       ", outside the vocabulary [0, " +
                                       std::to_string(tok.vocab_size()) + ")");
      }
      detok.Push(static_cast<TokenId>(id), &text);
      std::string piece;
      tok.AppendTokenBytes(-1, static_cast<TokenId>(id), &piece);
      response->add_pieces(std::move(piece));
    }
    detok.Flush(&text);
    response->set_text(std::move(text));
  } else {
    bool add_bos = request.has_add_bos() ? request.add_bos() : tok.add_bos_default();
    const std::vector<TokenId> ids = request.parse_special()
                                         ? tok.EncodeSpecial(request.text(), add_bos)
                                         : tok.Encode(request.text(), add_bos);
    for (TokenId id : ids) {
      response->add_token_ids(static_cast<uint32_t>(id));
      std::string piece;
      tok.AppendTokenBytes(-1, id, &piece);
      response->add_pieces(std::move(piece));
    }
  }
  return shared::Status::Ok();
}

// ModelInfo's per-layer positions and soft-caps (fields 50-59).
void FillLayerPositions(const ModelConfig& c, v1::ModelInfo* info) {
  info->set_rotary_dims(static_cast<uint32_t>(c.rotary_dims()));
  info->set_no_rope_period(static_cast<uint32_t>(std::max(0, c.no_rope_period)));
  uint32_t windowed = 0;
  for (int l = 0; l < c.n_layers; ++l) windowed += c.LayerWindow(l) > 0 ? 1 : 0;
  info->set_windowed_layers(windowed);
  info->set_rope_theta_windowed(windowed > 0 && c.rope_theta_swa > 0 ? c.rope_theta_swa : 0.0f);
  info->set_rope_attn_factor(c.rope_attn_factor);
  info->set_attn_softcap(c.attn_softcap);
  info->set_final_softcap(c.final_softcap);
}

// ModelInfo's shape and position fields (30-39) and the tensor-type mix.
void FillShape(const LoadedModel& model, v1::ModelInfo* info) {
  const ModelConfig& c = model.llama.config;
  info->set_head_dim(c.head_dim());
  info->set_rope_theta(c.rope_theta);
  const bool scaled = c.rope_freq_scale != 1.0f && c.rope_freq_scale > 0;
  info->set_rope_scaling(c.rope_yarn ? "yarn" : scaled ? "linear" : "none");
  info->set_rope_scaling_factor(scaled ? 1.0f / c.rope_freq_scale : 1.0f);
  info->set_rope_freqs(model.llama.weights.rope_freqs.present());
  info->set_rope_style(c.rope_style == RopeStyle::kNeox ? "neox" : "interleaved");
  info->set_sliding_window(static_cast<uint32_t>(std::max(0, c.sliding_window)));
  info->set_experts(static_cast<uint32_t>(c.n_experts));
  info->set_experts_used(static_cast<uint32_t>(c.n_experts_used));
  info->set_expert_ffn_dim(static_cast<uint32_t>(c.expert_ffn_dim));
  info->set_shared_expert_ffn_dim(static_cast<uint32_t>(c.shared_expert_ffn_dim));
  FillLayerPositions(c, info);
  for (const LoadedModel::TensorTypeUse& use : model.tensor_mix) {
    v1::TensorTypeUse* out = info->add_tensor_mix();
    out->set_type(use.type);
    out->set_tensors(use.tensors);
    out->set_bytes(use.bytes);
  }
}

}  // namespace

WorkerService::WorkerService(const LoadedModel& model, RunFacts facts, CommandQueue* commands,
                             RequestLanes* lanes, const SchedulerStats* stats, int worker_id,
                             std::vector<std::span<const std::byte>> weight_memory)
    : model_(model),
      facts_(std::move(facts)),
      commands_(commands),
      lanes_(lanes),
      stats_(stats),
      worker_id_(worker_id),
      weight_memory_(std::move(weight_memory)),
      start_time_unix_ms_(std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count()) {}

grpc::ServerWriteReactor<v1::SubmitResponse>* WorkerService::Submit(
    grpc::CallbackServerContext* context, const v1::SubmitRequest* request) {
  return new SubmitReactor(*request, model_, facts_, commands_, lanes_,
                           next_sequence_id_.fetch_add(1));
}

grpc::ServerUnaryReactor* WorkerService::Tokenize(grpc::CallbackServerContext* context,
                                                  const v1::TokenizeRequest* request,
                                                  v1::TokenizeResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const size_t input_bytes = request->text().size() + request->token_ids().ids_size() * 4;
  lanes_->Post(input_bytes, [this, reactor, request, response] {
    reactor->Finish(shared::ToGrpcStatus(TokenizeOn(model_, *request, response)));
  });
  return reactor;
}

grpc::ServerUnaryReactor* WorkerService::Embed(grpc::CallbackServerContext* /*context*/,
                                               const v1::EmbedWork* request,
                                               v1::EmbedResponse* response) {
  // Its own reactor (not the default one): a cancelled call cancels its sequences.
  auto* reactor = new EmbedReactor(commands_);
  size_t input_bytes = 0;
  for (const v1::EmbedInput& in : request->request().inputs()) {
    input_bytes += in.text().size() + in.token_ids().ids_size() * sizeof(uint32_t);
  }
  input_bytes += request->rerank_query().size();  // a rerank's query is tokenized once
  lanes_->Post(input_bytes, [this, reactor, request, response] {
    EmbedJob::Start(*request, model_, &next_sequence_id_, worker_id_, reactor, response);
  });
  return reactor;
}

void FillModelInfo(const LoadedModel& model, v1::ModelInfo* info) {
  const ModelConfig& c = model.llama.config;
  info->set_model(model.source);
  info->set_architecture(c.architecture);
  info->set_parameter_count(model.parameter_count);
  info->set_vocab_size(c.vocab_size);
  info->set_context_length(c.context_length);
  info->set_quantization(model.quantization);
  info->set_tokenizer(TokenizerKindName(model.tokenizer->kind()));
  info->set_file_size_bytes(model.file_size);
  info->set_workers(1);
  info->set_embedding_dim(c.dim);
  info->set_layers(c.n_layers);
  info->set_heads(c.n_heads);
  info->set_kv_heads(c.n_kv_heads);
  info->set_bos_token_id(static_cast<uint32_t>(model.tokenizer->bos_id()));
  info->set_eos_token_id(static_cast<uint32_t>(model.tokenizer->eos_id()));
  for (const std::string& t : model.tensor_types) info->add_tensor_types(t);
  const Tokenizer& tok = *model.tokenizer;
  info->set_chat_template(model.chat_template);
  if (tok.bos_id() >= 0) info->set_bos_token(std::string(tok.Piece(tok.bos_id())));
  if (tok.eos_id() >= 0) info->set_eos_token(std::string(tok.Piece(tok.eos_id())));
  info->set_add_bos_token(tok.add_bos_default());
  info->set_encoder(c.encoder);
  // "" when the model pools nothing (a generation model).
  if (c.pooling != PoolingType::kNone) info->set_pooling(std::string(PoolingTypeName(c.pooling)));
  FillShape(model, info);
}

grpc::ServerUnaryReactor* WorkerService::GetModelInfo(grpc::CallbackServerContext* context,
                                                      const v1::GetModelInfoRequest* request,
                                                      v1::ModelInfo* response) {
  FillModelInfo(model_, response);
  return Done(context, shared::Status::Ok());
}

grpc::ServerUnaryReactor* WorkerService::Stats(grpc::CallbackServerContext* context,
                                               const v1::StatsRequest* request,
                                               v1::WorkerStats* response) {
  auto load = [](const auto& a) { return a.load(std::memory_order_relaxed); };
  response->set_worker_id(worker_id_);
  response->set_pid(static_cast<uint32_t>(getpid()));
  auto& values = *response->mutable_values();
  for (const shared::WorkerStatDescriptor& d : shared::kWorkerStatTable) {
    values[std::string(d.name)] = stats_->Get(d.id);
  }
  size_t resident = 0;  // measured now, off the engine thread
  for (std::span<const std::byte> m : weight_memory_) {
    resident += shared::ResidentBytes(m.data(), m.size());
  }
  values[std::string(shared::Describe(shared::WorkerStat::kWeightsResidentBytes).name)] =
      static_cast<double>(resident);
  const uint32_t n_keys =
      std::min<uint32_t>(load(stats_->cached_prefix_key_count), SchedulerStats::kMaxPrefixKeys);
  for (uint32_t i = 0; i < n_keys; ++i) {
    response->add_cached_prefix_keys(load(stats_->cached_prefix_keys[i]));
  }
  response->set_start_time_unix_ms(start_time_unix_ms_);
  return Done(context, shared::Status::Ok());
}

}  // namespace smallmind::worker
