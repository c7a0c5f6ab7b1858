#include "worker/sample/sampler.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "worker/sample/rng.h"

namespace smallmind::worker {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// Up to this k a bounded heap over one pass beats nth_element (O(V + k log k) with a well-predicted
// skip branch); past it nth_element's O(V) is cheaper than O(V log k) heap replacements.
constexpr int kHeapSelectMaxK = 1024;
// top-p's histogram: the bit pattern of a non-negative float orders like its value, so its
// exponent and top 4 mantissa bits give monotone buckets 1/16 of an octave wide. Values are
// probabilities in [0, 1], and 1.0f (0x3F800000) lands in the last bucket.
constexpr int kMassBucketShift = 19;
constexpr int kMassBuckets = (0x3F800000 >> kMassBucketShift) + 1;

int MassBucket(float v) { return static_cast<int>(std::bit_cast<uint32_t>(v) >> kMassBucketShift); }

// The total order every truncation uses: higher value first, then lower id.
template <typename C>
bool Better(const C& a, const C& b) {
  return a.value > b.value || (a.value == b.value && a.id < b.id);
}

float NanToNegInf(float v) { return v == v ? v : kNegInf; }

shared::Status Bad(const std::string& field, const std::string& rule, float got) {
  return shared::InvalidArgument("sampling." + field + " must be " + rule + ", got " +
                                 std::to_string(got));
}

}  // namespace

shared::Status ValidateSamplingParams(const SamplingParams& p) {
  if (!(p.temperature >= 0.0f) || std::isinf(p.temperature)) {
    return Bad("temperature", "finite and >= 0", p.temperature);
  }
  if (p.top_k < 0) return Bad("top_k", ">= 0", static_cast<float>(p.top_k));
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) return Bad("top_p", "in (0, 1]", p.top_p);
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) return Bad("min_p", "in [0, 1]", p.min_p);
  if (!(p.repetition_penalty > 0.0f) || std::isinf(p.repetition_penalty)) {
    return Bad("repetition_penalty", "finite and > 0", p.repetition_penalty);
  }
  if (!std::isfinite(p.presence_penalty))
    return Bad("presence_penalty", "finite", p.presence_penalty);
  if (!std::isfinite(p.frequency_penalty)) {
    return Bad("frequency_penalty", "finite", p.frequency_penalty);
  }
  if (p.logprobs < 0 || p.logprobs > kMaxLogprobs) {
    return Bad("logprobs", "in [0, " + std::to_string(kMaxLogprobs) + "]",
               static_cast<float>(p.logprobs));
  }
  return shared::Status::Ok();
}

Sampler::Sampler(const SamplingParams& params, int vocab_size)
    : params_(params), vocab_size_(vocab_size) {
  shared::Status valid = ValidateSamplingParams(params);
  SM_CHECK(valid.ok()) << valid.ToString();
  SM_CHECK(vocab_size > 0) << "vocab_size " << vocab_size;
  if (has_penalties()) {
    seen_ids_.reserve(vocab_size);
    seen_.assign(vocab_size, 0);
  }
  if (params.presence_penalty != 0.0f || params.frequency_penalty != 0.0f) {
    gen_counts_.assign(vocab_size, 0);
  }
  if (params.temperature > 0.0f) candidates_.resize(vocab_size);
  if (params.temperature > 0.0f && params.top_p < 1.0f) bucket_mass_.resize(kMassBuckets);
}

bool Sampler::has_penalties() const {
  return params_.repetition_penalty != 1.0f || params_.presence_penalty != 0.0f ||
         params_.frequency_penalty != 0.0f;
}

void Sampler::MarkSeen(TokenId id) {
  SM_CHECK(id >= 0 && id < vocab_size_) << "token " << id << " outside vocab " << vocab_size_;
  if (seen_.empty() || seen_[id]) return;
  seen_[id] = 1;
  seen_ids_.push_back(id);
}

void Sampler::AddPromptTokens(std::span<const TokenId> ids) {
  for (TokenId id : ids) MarkSeen(id);
}

void Sampler::Accept(TokenId id) {
  MarkSeen(id);
  if (!gen_counts_.empty()) ++gen_counts_[id];
  ++num_generated_;
}

TokenId Sampler::Sample(std::span<float> logits, SampleLogprobs* logprobs) {
  SM_CHECK(logits.size() == static_cast<size_t>(vocab_size_))
      << "logits " << logits.size() << " != vocab " << vocab_size_;
  if (has_penalties()) ApplyPenalties(logits);
  const TokenId chosen = params_.temperature == 0.0f ? Greedy(logits) : Draw(logits);
  if (logprobs != nullptr && params_.logprobs > 0) FillLogprobs(logits, chosen, logprobs);
  return chosen;
}

void Sampler::ApplyPenalties(std::span<float> logits) const {
  const float rep = params_.repetition_penalty;
  for (TokenId id : seen_ids_) {
    float& l = logits[id];
    if (rep != 1.0f) l = l > 0.0f ? l / rep : l * rep;
    if (!gen_counts_.empty() && gen_counts_[id] > 0) {
      l -= params_.frequency_penalty * static_cast<float>(gen_counts_[id]) +
           params_.presence_penalty;
    }
  }
}

TokenId Sampler::Greedy(std::span<const float> logits) const {
  TokenId best = 0;
  float best_value = kNegInf;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] > best_value) {  // strict: the lowest id keeps a tie
      best_value = logits[i];
      best = static_cast<TokenId>(i);
    }
  }
  return best;
}

TokenId Sampler::Draw(std::span<const float> logits) {
  int n = vocab_size_;
  bool sorted = false;  // otherwise candidates are in id order (or, after top-p, mass order)
  if (params_.top_k > 0 && params_.top_k < n) {
    n = SelectTopK(logits);
    sorted = true;
  } else {
    for (int i = 0; i < n; ++i) candidates_[i] = {NanToNegInf(logits[i]), i};
  }
  float max_logit = kNegInf;
  for (int i = 0; i < n; ++i) max_logit = std::max(max_logit, candidates_[i].value);
  if (!(max_logit > kNegInf)) return Greedy(logits);  // nothing has any mass
  const float t = params_.temperature;
  for (int i = 0; i < n; ++i) {
    // exp(0) = 1 for the best token, so min-p's threshold needs no division. Dividing (not
    // multiplying by 1/t) keeps that 0 exact even when 1/t overflows for a denormal t.
    candidates_[i].value = std::exp((candidates_[i].value - max_logit) / t);
  }
  if (params_.top_p < 1.0f) {
    n = KeepTopP(n, sorted);
    sorted = false;
  }
  if (params_.min_p > 0.0f) n = KeepMinP(n, sorted);

  double total = 0.0;
  for (int i = 0; i < n; ++i) total += candidates_[i].value;
  const double r = UniformDouble(params_.seed, static_cast<uint64_t>(num_generated_)) * total;
  double acc = 0.0;
  for (int i = 0; i < n; ++i) {
    acc += candidates_[i].value;
    if (r < acc) return candidates_[i].id;
  }
  return candidates_[n - 1].id;  // r landed on the rounding slack past the last sum
}

// Writes the top_k best tokens by (logit desc, id asc) to candidates_[0, top_k), best first.
int Sampler::SelectTopK(std::span<const float> logits) {
  const int k = params_.top_k;
  const int n = vocab_size_;
  Candidate* c = candidates_.data();
  auto better = [](const Candidate& a, const Candidate& b) { return Better(a, b); };
  if (k <= kHeapSelectMaxK) {
    for (int i = 0; i < k; ++i) c[i] = {NanToNegInf(logits[i]), i};
    std::make_heap(c, c + k, better);  // front = the worst of the k kept so far
    for (int i = k; i < n; ++i) {
      const Candidate x = {NanToNegInf(logits[i]), i};
      if (x.value <= c[0].value) continue;  // a tie loses too: x has the higher id
      std::pop_heap(c, c + k, better);
      c[k - 1] = x;
      std::push_heap(c, c + k, better);
    }
    std::sort_heap(c, c + k, better);
  } else {
    for (int i = 0; i < n; ++i) c[i] = {NanToNegInf(logits[i]), i};
    std::nth_element(c, c + k, c + n, better);
    std::sort(c, c + k, better);
  }
  return k;
}

// Keeps the smallest set of best candidates whose mass reaches top_p of the total, leaving it at
// the front. Sorted input is scanned. Otherwise, in O(n) without a full sort: a mass histogram over
// MassBucket() finds the bucket where the running mass (best first) crosses the target; every
// candidate in a better bucket is kept, and only the crossing bucket is sorted to find the cut.
// The kept set is the one a full sort by (value desc, id asc) would give.
int Sampler::KeepTopP(int n, bool sorted) {
  Candidate* c = candidates_.data();
  double total = 0.0;
  for (int i = 0; i < n; ++i) total += c[i].value;
  const double target = static_cast<double>(params_.top_p) * total;
  int begin = 0;  // c[0, begin) are kept without sorting
  int end = n;    // c[begin, end) are sorted and scanned for the cut
  double kept = 0.0;
  if (!sorted) {
    std::fill(bucket_mass_.begin(), bucket_mass_.end(), 0.0);
    for (int i = 0; i < n; ++i) bucket_mass_[MassBucket(c[i].value)] += c[i].value;
    int cross = kMassBuckets - 1;
    for (; cross > 0 && kept + bucket_mass_[cross] < target; --cross) kept += bucket_mass_[cross];
    begin = static_cast<int>(
        std::partition(c, c + n,
                       [cross](const Candidate& x) { return MassBucket(x.value) > cross; }) -
        c);
    end = static_cast<int>(
        std::partition(c + begin, c + n,
                       [cross](const Candidate& x) { return MassBucket(x.value) == cross; }) -
        c);
    std::sort(c + begin, c + end,
              [](const Candidate& a, const Candidate& b) { return Better(a, b); });
  }
  for (int i = begin; i < end; ++i) {
    kept += c[i].value;
    if (kept >= target) return i + 1;
  }
  return end;
}

// Keeps candidates with probability >= min_p * p(best). The best candidate always survives
// truncation and has weight exp(0) = 1, so the threshold is min_p itself.
int Sampler::KeepMinP(int n, bool sorted) {
  Candidate* c = candidates_.data();
  const float threshold = params_.min_p;
  if (sorted) {
    int keep = 1;
    while (keep < n && c[keep].value >= threshold) ++keep;
    return keep;
  }
  int kept = 0;
  for (int i = 0; i < n; ++i) {
    if (c[i].value >= threshold) c[kept++] = c[i];
  }
  return kept;
}

void Sampler::FillLogprobs(std::span<const float> logits, TokenId chosen,
                           SampleLogprobs* out) const {
  float max_logit = kNegInf;
  for (float l : logits) max_logit = l > max_logit ? l : max_logit;
  double sum = 0.0;
  for (float l : logits) sum += std::exp(l - max_logit);
  const float log_z = max_logit + static_cast<float>(std::log(sum));

  const int want = params_.logprobs;
  int n = 0;  // out->top[0, n) holds raw logits, best first, lowest id first on ties
  for (size_t i = 0; i < logits.size(); ++i) {
    const float v = logits[i];
    if (n == want && !(v > out->top[n - 1].logprob)) continue;
    int pos = n < want ? n++ : want - 1;
    for (; pos > 0 && v > out->top[pos - 1].logprob; --pos) out->top[pos] = out->top[pos - 1];
    out->top[pos] = {static_cast<TokenId>(i), v};
  }
  for (int i = 0; i < n; ++i) out->top[i].logprob -= log_z;
  out->n_top = n;
  out->chosen = {chosen, logits[chosen] - log_z};
}

}  // namespace smallmind::worker
