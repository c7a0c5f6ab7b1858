// Sequence: one request's state inside the worker: its tokens, KV block table, positions and
// timings, and its TokenPicker (the sampling stage's per-request state: sampler, JSON constraint,
// stop checks, detokenizer). Created by a service thread, then owned by the scheduler thread;
// not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/exec_mode.h"
#include "shared/prompt_prefix_key.h"
#include "worker/sample/token_picker.h"
#include "worker/sched/draft_cache.h"
#include "worker/sched/step_output.h"
#include "worker/spec/draft_controller.h"
#include "worker/types/pooling_type.h"

namespace smallmind::worker {

using Clock = std::chrono::steady_clock;

// What happens when a sequence's tokens outgrow the model's context (stopping.context_overflow).
struct ContextOverflow {
  // false: the request finishes with LENGTH at the context limit (max_new_tokens is capped so that
  // it fits). true: a context shift keeps the first n_keep tokens and the most recent half of the
  // rest, and the kept tokens' K/V are recomputed at their new positions.
  bool shift = false;
  int n_keep = 0;          // shift: leading tokens every shift keeps; <= the prompt, < context / 2
  int context_length = 0;  // shift: the model's positions; a token past them triggers the shift
};

// What a request asks for, already validated by the gateway and checked against the model.
struct SequenceRequest {
  std::string request_id;
  std::vector<TokenId> prompt;  // non-empty; BOS already applied
  SamplingParams sampling;
  StopConfig stopping;  // max_new_tokens already capped by the context unless overflow.shift
  ContextOverflow overflow;
  kernels::ExecMode mode = kernels::ExecMode::kParallel;
  int max_threads = 0;
  int parallel_threshold = 0;  // 0 = the worker's default
  double gateway_queue_ms = 0;
  // Keys of the prompt input's prefixes, reported in Stats while its blocks stay cached.
  shared::PromptPrefixKeys prefix_keys;
  // response_format JSON_OBJECT or JSON_SCHEMA: the model's token bytes, for the output
  // constraint (MaskJsonLogits before each draw, JsonPrefix fed each token); null: any text.
  // Outlives the sequence.
  const TokenBytes* json_vocab = nullptr;
  // JSON_SCHEMA: the compiled schema the object must follow (null with json_vocab: any object).
  std::shared_ptr<const shared::JsonSchema> json_schema;
  // runtime.speculation: false (OFF) never drafts for this request; true (AUTO) drafts when the
  // worker has a drafter. Either way the tokens are the same (the target verifies every draft).
  bool speculate = true;
  // Not kNone: an embedding request's input (docs/embeddings.md): the prompt is computed and
  // pooled so (the engine's SeqStep::embed), nothing is generated, and the finish event carries
  // the embedding.
  PoolingType embed = PoolingType::kNone;
};

// A sequence's speculative decoding: the draft length controller, the tokens a verification step
// feeds ([its last accepted token, drafts...]), its part of the draft model's cache (with a draft
// model) and what was drafted and accepted so far.
struct SpeculationState {
  DraftController controller;
  std::vector<TokenId> feed;     // capacity 1 + max_draft, reserved by the scheduler at admission
  DraftCache draft_model;        // the draft model's K/V and drafts for this sequence
  int drafted = 0;               // draft tokens verified
  int accepted = 0;              // of those, accepted
  bool drafts_by_model = false;  // the drafts of the step in flight: the draft model's, or n-gram
};

struct Sequence {
  Sequence(uint64_t id, SequenceRequest request, const Tokenizer& tokenizer, int vocab_size,
           SequenceSink* sink);

  // Tokens in the context window: the prompt and the output, less what shifts dropped.
  int num_tokens() const { return static_cast<int>(tokens.size()); }
  int num_generated() const { return num_tokens() + num_dropped - num_prompt_tokens; }
  // Tokens not yet in the KV cache: the next step feeds tokens[num_computed..].
  int num_pending() const { return num_tokens() - num_computed; }
  // The last token accepted needs a position past the context, and the request shifts.
  bool needs_context_shift() const {
    return request.overflow.shift && num_tokens() > request.overflow.context_length;
  }

  // Books a picked token: appends it to the window and stamps the token times. Allocates nothing
  // (capacity reserved).
  void AppendToken(TokenId id, Clock::time_point now);
  // The finish event for `reason`: usage and timings as of now.
  FinishEvent MakeFinishEvent(FinishReason reason) const;
  // Context shift: drops tokens[n_keep, n_keep + (num_tokens() - n_keep) / 2) from the window
  // and marks every position for recomputation (num_computed = 0). The caller releases the
  // blocks first. Allocates nothing.
  void ShiftContext();

  const uint64_t id;
  SequenceRequest request;
  const int num_prompt_tokens;
  // [window]: prompt + generated, less the dropped; capacity reserved up front (a shifting
  // request's window never passes context_length + 1).
  std::vector<TokenId> tokens;
  int num_dropped = 0;  // tokens context shifts removed from the window
  int context_shifts = 0;
  int num_computed = 0;              // positions whose K/V are in the pool
  int cached_prompt_tokens = 0;      // prompt positions reused from the prefix cache at admission
  std::vector<int32_t> block_table;  // KV block ids, position p in block_table[p / block_size]
  int released_blocks = 0;  // leading entries kNoBlock: behind every layer's sliding window

  TokenPicker picker;  // the next token and the text it releases (SampleStep runs it)
  SequenceSink* sink;  // the stream's sink: carried in events, never called here

  bool finished = false;  // finish event emitted; removed at the end of the step
  int preemptions = 0;
  SpeculationState spec;
  ExecutionRecord execution;  // the kernels and threads of its steps (seed set at the finish)
  Clock::time_point arrived = Clock::now();
  Clock::time_point first_scheduled{};
  Clock::time_point first_token{};
  Clock::time_point last_token{};
};

}  // namespace smallmind::worker
