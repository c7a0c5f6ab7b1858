#include "worker/request_builder.h"

#include <algorithm>
#include <random>
#include <string>

#include "shared/prompt_prefix_key.h"

namespace smallmind::worker {
namespace {

constexpr int kDefaultMaxNewTokens = 256;

shared::Result<std::vector<TokenId>> PromptTokens(const v1::GenerateRequest& req,
                                                  const LoadedModel& model) {
  const Tokenizer& tok = *model.tokenizer;
  bool add_bos = req.has_add_bos() ? req.add_bos() : tok.add_bos_default();
  std::vector<TokenId> ids;
  if (req.has_prompt_token_ids()) {
    if (add_bos && tok.bos_id() >= 0) ids.push_back(tok.bos_id());
    for (uint32_t id : req.prompt_token_ids().ids()) {
      if (id >= static_cast<uint32_t>(model.llama.config.vocab_size)) {
        return shared::InvalidArgument("prompt_token_ids contains " + std::to_string(id) +
                                       ", outside the vocabulary [0, " +
                                       std::to_string(model.llama.config.vocab_size) + ")");
      }
      ids.push_back(static_cast<TokenId>(id));
    }
  } else {
    ids = tok.Encode(req.prompt(), add_bos);
  }
  if (ids.empty()) {
    return shared::InvalidArgument("the prompt is empty (give text, token ids, or add_bos=true)");
  }
  return ids;
}

SamplingParams ToSamplingParams(const v1::SamplingOptions& s, uint32_t logprobs) {
  SamplingParams p;
  p.temperature = s.has_temperature() ? s.temperature() : 1.0f;
  p.top_k = static_cast<int>(s.top_k());
  p.top_p = s.has_top_p() ? s.top_p() : 1.0f;
  p.min_p = s.min_p();
  p.repetition_penalty = s.has_repetition_penalty() ? s.repetition_penalty() : 1.0f;
  p.presence_penalty = s.presence_penalty();
  p.frequency_penalty = s.frequency_penalty();
  p.seed = s.has_seed()
               ? s.seed()
               : (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  p.logprobs = static_cast<int>(logprobs);
  return p;
}

}  // namespace

shared::Result<SequenceRequest> BuildSequenceRequest(const v1::SubmitRequest& submit,
                                                     const LoadedModel& model) {
  const v1::GenerateRequest& req = submit.request();
  const int context = model.llama.config.context_length;
  SequenceRequest out;
  out.request_id = req.request_id();
  SM_ASSIGN_OR_RETURN(out.prompt, PromptTokens(req, model));
  const int n_prompt = static_cast<int>(out.prompt.size());
  if (n_prompt >= context) {
    return shared::InvalidArgument("the prompt has " + std::to_string(n_prompt) +
                                   " tokens but the model's context is " + std::to_string(context) +
                                   "; at most " + std::to_string(context - 1) +
                                   " prompt tokens leave room for a new one");
  }
  out.sampling = ToSamplingParams(req.sampling(), req.logprobs());

  const Tokenizer& tok = *model.tokenizer;
  int requested =
      req.stopping().max_new_tokens() > 0
          ? static_cast<int>(std::min<uint32_t>(req.stopping().max_new_tokens(), 1u << 30))
          : kDefaultMaxNewTokens;
  out.stopping.max_new_tokens = std::min(requested, context - n_prompt);
  out.stopping.stop.assign(req.stopping().stop().begin(), req.stopping().stop().end());
  out.stopping.ignore_eos = req.stopping().ignore_eos();
  out.stopping.eos_id = tok.eos_id();
  out.stopping.eot_id = tok.eot_id();
  out.stopping.bos_id = tok.bos_id();
  // llama2.c-style models end a story by producing BOS (run.c stops there), so BOS ends too.
  out.stopping.bos_ends = tok.bos_id() >= 0 && tok.bos_id() != tok.eos_id();

  out.mode = req.runtime().deterministic() ? kernels::ExecMode::kDeterministic
                                           : kernels::ExecMode::kParallel;
  out.max_threads = static_cast<int>(req.runtime().max_threads());
  out.parallel_threshold = static_cast<int>(req.runtime().parallel_threshold());
  out.gateway_queue_ms = submit.gateway_queue_ms();
  out.prefix_keys = req.has_prompt_token_ids()
                        ? shared::TokenPromptPrefixKeys({req.prompt_token_ids().ids().data(),
                                                         req.prompt_token_ids().ids().size()})
                        : shared::TextPromptPrefixKeys(req.prompt());
  return out;
}

}  // namespace smallmind::worker
