#include "worker/request_builder.h"

#include <algorithm>
#include <random>
#include <string>

#include <fmt/format.h>

#include "shared/json_schema.h"
#include "shared/prompt_prefix_key.h"
#include "shared/request_limits.h"

namespace smallmind::worker {
namespace {

using shared::InvalidArgument;

// The checks that need the model, made once here (the gateway checks the model-independent field
// ranges): token ids against the vocabulary, prompt and max_new_tokens against the context, top_k
// against the vocabulary. Messages name the field, its range and the value, as the gateway's do.
shared::Status CheckAgainstModel(const v1::GenerateRequest& req, int vocab_size, int context) {
  if (req.has_prompt_token_ids()) {
    const auto& ids = req.prompt_token_ids().ids();
    if (ids.empty() || ids.size() > context) {
      return InvalidArgument("prompt_token_ids must hold [1, " + std::to_string(context) +
                             "] ids (the context length), got " + std::to_string(ids.size()));
    }
    for (int i = 0; i < ids.size(); ++i) {
      if (ids[i] >= static_cast<uint32_t>(vocab_size)) {
        return InvalidArgument("prompt_token_ids[" + std::to_string(i) + "] must be in [0, " +
                               std::to_string(vocab_size) + ") (the vocabulary), got " +
                               std::to_string(ids[i]));
      }
    }
  }
  for (const auto& [id, bias] : req.sampling().logit_bias()) {
    if (id >= static_cast<uint32_t>(vocab_size)) {
      return InvalidArgument("sampling.logit_bias[" + std::to_string(id) +
                             "] names a token outside [0, " + std::to_string(vocab_size) +
                             ") (the vocabulary)");
    }
  }
  if (req.sampling().top_k() > static_cast<uint32_t>(vocab_size)) {
    return InvalidArgument("sampling.top_k must be in [0, " + std::to_string(vocab_size) +
                           "] (0 = off), got " + std::to_string(req.sampling().top_k()));
  }
  const v1::StoppingOptions& stop = req.stopping();
  if (stop.context_overflow() == v1::CONTEXT_OVERFLOW_SHIFT) {
    // A shift makes room: the context bounds n_keep instead of the output.
    if (stop.max_new_tokens() > shared::kMaxNewTokensWithShift) {
      return InvalidArgument(
          "stopping.max_new_tokens must be in [1, " +
          std::to_string(shared::kMaxNewTokensWithShift) +
          "] with context_overflow SHIFT (0 = " + std::to_string(shared::kDefaultMaxNewTokens) +
          "), got " + std::to_string(stop.max_new_tokens()));
    }
    if (stop.has_n_keep() && stop.n_keep() >= static_cast<uint32_t>(context / 2)) {
      return InvalidArgument("stopping.n_keep must be in [0, " + std::to_string(context / 2) +
                             ") (half the context length), got " + std::to_string(stop.n_keep()));
    }
  } else if (stop.context_overflow() != v1::CONTEXT_OVERFLOW_FINISH) {
    return InvalidArgument(
        "stopping.context_overflow must be CONTEXT_OVERFLOW_FINISH (0) or CONTEXT_OVERFLOW_SHIFT "
        "(1), got " +
        std::to_string(static_cast<int>(stop.context_overflow())));
  } else if (stop.max_new_tokens() > static_cast<uint32_t>(context)) {
    return InvalidArgument(
        "stopping.max_new_tokens must be in [1, " + std::to_string(context) +
        "] (the context length; 0 = " + std::to_string(shared::kDefaultMaxNewTokens) + "), got " +
        std::to_string(stop.max_new_tokens()));
  }
  return shared::Status::Ok();
}

// An encoder only embeds.
shared::Status CheckGenerates(const ModelConfig& c) {
  if (!c.encoder) return shared::Status::Ok();
  return InvalidArgument("the model (" + c.architecture +
                         ") is an encoder: it embeds (Embed, POST /v1/embeddings) and does not "
                         "generate text");
}

// stopping.context_overflow (checked above): SHIFT keeps n_keep leading tokens, by default the
// BOS when the prompt has one, and at most the whole prompt.
ContextOverflow Overflow(const v1::StoppingOptions& s, const std::vector<TokenId>& prompt,
                         const Tokenizer& tok, int context) {
  ContextOverflow out;
  if (s.context_overflow() != v1::CONTEXT_OVERFLOW_SHIFT) return out;
  const bool starts_with_bos = tok.bos_id() >= 0 && prompt.front() == tok.bos_id();
  const int n_keep = s.has_n_keep() ? static_cast<int>(s.n_keep()) : (starts_with_bos ? 1 : 0);
  out.shift = true;
  out.n_keep = std::min(n_keep, static_cast<int>(prompt.size()));
  out.context_length = context;
  return out;
}

// A text prompt that cannot fit the context whatever its tokens, refused before tokenizing it:
// a 7 MB prompt once cost ~6 s of a worker's CPU before the context check refused it, and four at
// once starved its health answers. What passes costs at most (context x the longest token) bytes.
shared::Status CheckTextFits(const v1::GenerateRequest& req, const LoadedModel& model) {
  const size_t per_token = model.max_token_text_bytes;
  if (req.has_prompt_token_ids() || per_token == 0) return shared::Status::Ok();
  const Tokenizer& tok = *model.tokenizer;
  const bool add_bos = req.has_add_bos() ? req.add_bos() : tok.add_bos_default();
  const size_t bytes = req.prompt().size();
  const size_t at_least = (bytes + per_token - 1) / per_token + (add_bos && tok.bos_id() >= 0);
  const auto context = static_cast<size_t>(model.llama.config.context_length);
  if (at_least < context) return shared::Status::Ok();
  return InvalidArgument(fmt::format(
      "the prompt is {} bytes, so at least {} tokens (no token of this model stands for more "
      "than {} bytes), but the model's context is {}; at most {} prompt tokens leave room for a "
      "new one",
      bytes, at_least, per_token, context, context - 1));
}

// The prompt as token ids, BOS applied by the request's or the model's rule.
std::vector<TokenId> PromptTokens(const v1::GenerateRequest& req, const Tokenizer& tok) {
  const bool add_bos = req.has_add_bos() ? req.add_bos() : tok.add_bos_default();
  if (!req.has_prompt_token_ids()) {
    return req.parse_special() ? tok.EncodeSpecial(req.prompt(), add_bos)
                               : tok.Encode(req.prompt(), add_bos);
  }
  std::vector<TokenId> ids;
  ids.reserve(req.prompt_token_ids().ids_size() + 1);
  if (add_bos && tok.bos_id() >= 0) ids.push_back(tok.bos_id());
  for (uint32_t id : req.prompt_token_ids().ids()) ids.push_back(static_cast<TokenId>(id));
  return ids;
}

// Unset fields take the documented defaults (the gateway fills them; a caller talking to the
// worker directly may not).
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
  p.logprobs = static_cast<int>(std::min<uint32_t>(logprobs, 1u << 30));
  // In id order (a protobuf map's order is unspecified); each token's sum is its own either way.
  p.logit_bias.reserve(s.logit_bias_size());
  for (const auto& [id, bias] : s.logit_bias()) {
    p.logit_bias.emplace_back(static_cast<TokenId>(id), bias);
  }
  std::sort(p.logit_bias.begin(), p.logit_bias.end());
  return p;
}

// runtime: the kernel path, thread limits and speculation.
void SetRuntime(const v1::RuntimeOptions& runtime, SequenceRequest* out) {
  out->mode =
      runtime.deterministic() ? kernels::ExecMode::kDeterministic : kernels::ExecMode::kParallel;
  out->max_threads = static_cast<int>(runtime.max_threads());
  out->parallel_threshold = static_cast<int>(runtime.parallel_threshold());
  out->speculate = runtime.speculation() != v1::SPECULATION_OFF;
}

}  // namespace

shared::Result<SequenceRequest> BuildSequenceRequest(const v1::SubmitRequest& submit,
                                                     const LoadedModel& model) {
  const v1::GenerateRequest& req = submit.request();
  const Tokenizer& tok = *model.tokenizer;
  const int context = model.llama.config.context_length;
  SM_RETURN_IF_ERROR(CheckGenerates(model.llama.config));
  SM_RETURN_IF_ERROR(CheckAgainstModel(req, model.llama.config.vocab_size, context));
  SequenceRequest out;
  out.request_id = req.request_id();
  SM_RETURN_IF_ERROR(CheckTextFits(req, model));
  out.prompt = PromptTokens(req, tok);
  const int n_prompt = static_cast<int>(out.prompt.size());
  if (n_prompt == 0) {
    return InvalidArgument("the prompt is empty (give text, token ids, or add_bos=true)");
  }
  if (n_prompt >= context) {
    return InvalidArgument("the prompt has " + std::to_string(n_prompt) +
                           " tokens but the model's context is " + std::to_string(context) +
                           "; at most " + std::to_string(context - 1) +
                           " prompt tokens leave room for a new one");
  }
  out.sampling = ToSamplingParams(req.sampling(), req.logprobs());
  // The sampler's own contract: only a caller that skipped the gateway can break it, and it gets
  // an error instead of an abort.
  SM_RETURN_IF_ERROR(ValidateSamplingParams(out.sampling));

  const int requested = req.stopping().max_new_tokens() > 0
                            ? static_cast<int>(req.stopping().max_new_tokens())
                            : static_cast<int>(shared::kDefaultMaxNewTokens);
  out.overflow = Overflow(req.stopping(), out.prompt, tok, context);
  // A shift makes room, so only FINISH caps the output by the room the prompt leaves.
  out.stopping.max_new_tokens =
      out.overflow.shift ? requested : std::min(requested, context - n_prompt);
  out.stopping.stop.assign(req.stopping().stop().begin(), req.stopping().stop().end());
  out.stopping.ignore_eos = req.stopping().ignore_eos();
  out.stopping.eos_id = tok.eos_id();
  out.stopping.eot_id = tok.eot_id();
  out.stopping.bos_id = tok.bos_id();
  // llama2.c-style models end a story by producing BOS (run.c stops there), so BOS ends too.
  out.stopping.bos_ends = tok.bos_id() >= 0 && tok.bos_id() != tok.eos_id();

  SM_ASSIGN_OR_RETURN(out.json_schema,
                      shared::OutputConstraint(req.response_format(), req.json_schema()));
  if (out.json_schema != nullptr) {
    if (model.token_bytes == nullptr) {
      return shared::Internal("response_format: the model has no token byte table");
    }
    out.json_vocab = model.token_bytes.get();
  }
  SetRuntime(req.runtime(), &out);
  out.gateway_queue_ms = submit.gateway_queue_ms();
  const auto& ids = req.prompt_token_ids().ids();
  out.prefix_keys =
      req.has_prompt_token_ids()
          ? shared::TokenPromptPrefixKeys({ids.data(), static_cast<size_t>(ids.size())})
          : shared::TextPromptPrefixKeys(req.prompt());
  return out;
}

}  // namespace smallmind::worker
