// Sampler: picks one request's next token from the model's logits: logit bias -> penalties ->
// temperature ->
// top-k -> top-p -> min-p -> a draw from the request's own counter-based RNG. One per request,
// built when the request is admitted; used by the scheduler thread only, not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "kernels/vector_math.h"
#include "shared/request_limits.h"
#include "shared/status.h"
#include "worker/types/token_id.h"

namespace smallmind::worker {

struct SamplingParams {
  float temperature = 1.0f;         // 0 = greedy argmax (lowest id wins ties)
  int top_k = 0;                    // 0 = off; keep the k most likely tokens
  float top_p = 1.0f;               // 1 = off; keep the smallest prefix with this much mass
  float min_p = 0.0f;               // 0 = off; drop tokens below min_p * p(most likely)
  float repetition_penalty = 1.0f;  // over prompt + generated tokens: l > 0 ? l / r : l * r
  float presence_penalty = 0.0f;    // over generated tokens: l -= presence * (count > 0)
  float frequency_penalty = 0.0f;   // over generated tokens: l -= frequency * count
  uint64_t seed = 0;
  int logprobs = 0;  // top-N alternatives to report, 0..kMaxLogprobs
  // (token, bias) added to the logits before anything else, ids ascending and distinct.
  std::vector<std::pair<TokenId, float>> logit_bias;
};

// The request limit (shared/request_limits.h), as the int the sampler counts in.
inline constexpr int kMaxLogprobs = static_cast<int>(shared::kMaxLogprobs);

// InvalidArgument naming the first bad field, e.g. "sampling.top_p must be in (0, 1], got 1.5".
shared::Status ValidateSamplingParams(const SamplingParams& params);

struct TokenLogprob {
  TokenId id = -1;
  float logprob = 0.0f;  // log-softmax of the biased, penalised, pre-temperature logits
};

// Filled by Sample() when asked: the chosen token and the top `n_top` tokens (highest first,
// lowest id first on ties).
struct SampleLogprobs {
  TokenLogprob chosen;
  int n_top = 0;
  std::array<TokenLogprob, kMaxLogprobs> top;
};

class Sampler {
 public:
  // `params` must pass ValidateSamplingParams. Allocates all scratch here; Sample() never does.
  Sampler(const SamplingParams& params, int vocab_size);

  // Records prompt tokens for the repetition penalty. Call before the first Sample().
  void AddPromptTokens(std::span<const TokenId> ids);

  // Chooses the next token from `logits` [vocab_size]. The logit bias, then the penalties, are
  // applied to `logits` in place;
  // temperature and truncation work on private scratch. NaN logits count as -inf; when a logit is
  // +inf (or none is above -inf) the result is the greedy one. Weights are exp((l - max) / t) from
  // kernels::ExpOfScaled (SIMD, within 2 ulp of std::exp: a draw can differ from a std::exp
  // sampler's where u lands within that rounding of a boundary). With u = UniformDouble(seed,
  // num_generated()), the draw is the first token whose running mass passes u * total: in id order
  // (blocked sums, see DrawWeighted) without top-k, best first with it. The draw index is
  // num_generated(), so calling Sample twice before Accept gives the same token. Fills `logprobs`
  // when not null and params.logprobs > 0 (n_top = params.logprobs).
  TokenId Sample(std::span<float> logits, SampleLogprobs* logprobs = nullptr);

  // Records a generated token (for penalties and the draw index).
  void Accept(TokenId id);

  // Takes `other`'s history (the tokens seen and generated, the draw index): the next Sample()
  // draws as other's next would, given the same logits and penalty parameters. Both samplers must
  // have the same vocabulary and penalties. Allocates nothing (O(tokens seen) when penalised).
  void CopyHistoryFrom(const Sampler& other);

  int num_generated() const { return num_generated_; }
  int vocab_size() const { return vocab_size_; }
  const SamplingParams& params() const { return params_; }

 private:
  struct Candidate {
    float value;  // logit while selecting top-k, then unnormalised probability
    TokenId id;
  };

  bool has_penalties() const;
  void MarkSeen(TokenId id);
  void ApplyPenalties(std::span<float> logits) const;
  TokenId Greedy(std::span<const float> logits) const;
  TokenId Draw(std::span<const float> logits);
  TokenId DrawWeighted();
  TokenId DrawTopK(std::span<const float> logits);
  int SelectTopK(std::span<const float> logits);
  int KeepTopPSorted(int n);
  void KeepTopPWeights();
  // Uses weights_ as scratch (the draw is over by then).
  void FillLogprobs(std::span<const float> logits, TokenId chosen, SampleLogprobs* out);

  SamplingParams params_;
  int vocab_size_;
  const kernels::VectorMathOps* vm_;  // the best ISA's vector math, chosen once
  int num_generated_ = 0;
  std::vector<TokenId> seen_ids_;  // [<= vocab] distinct prompt + generated ids, first-seen order
  std::vector<uint8_t> seen_;      // [vocab] 1 when the id is in seen_ids_; empty without penalties
  std::vector<int32_t> gen_counts_;  // [vocab] times generated; empty without presence/frequency
  // [vocab] exp((logit - max) / t), 0 once dropped; FillLogprobs' scratch after the draw
  std::vector<float> weights_;
  std::vector<double> block_mass_;     // [ceil(vocab / 256)] sums of weights_ per draw block
  std::vector<Candidate> candidates_;  // [vocab] top-k / top-p scratch; empty without them
  std::vector<double> bucket_mass_;    // [kMassBuckets] top-p histogram; empty without top-p
};

}  // namespace smallmind::worker
