#include "worker/sample/sampler.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "kernels/vector_math.h"
#include "worker/sample/rng.h"

namespace smallmind::worker {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kInf = std::numeric_limits<float>::infinity();
// Up to this k a bounded heap over one pass beats nth_element (O(V + k log k) with a well-predicted
// skip branch); past it nth_element's O(V) is cheaper than O(V log k) heap replacements.
constexpr int kHeapSelectMaxK = 1024;
// The draw's block: small enough that scanning the crossing block is short, large enough that the
// block sums (kept in Sampler::block_mass_) are few.
constexpr int kDrawBlock = 256;
// top-p's histogram: the bit pattern of a non-negative float orders like its value, so its
// exponent and top 4 mantissa bits give monotone buckets 1/16 of an octave wide. Values are
// probabilities in [0, 1], and 1.0f (0x3F800000) lands in the last bucket.
constexpr int kMassBucketShift = 19;
constexpr int kMassBuckets = (0x3F800000 >> kMassBucketShift) + 1;

int MassBucket(float v) { return static_cast<int>(std::bit_cast<uint32_t>(v) >> kMassBucketShift); }

// The largest float in bucket b (b < kMassBuckets).
float BucketTop(int b) {
  return std::bit_cast<float>((static_cast<uint32_t>(b + 1) << kMassBucketShift) - 1u);
}

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
  for (size_t i = 0; i < p.logit_bias.size(); ++i) {
    const auto [id, bias] = p.logit_bias[i];
    if (id < 0 || (i > 0 && id <= p.logit_bias[i - 1].first)) {
      return shared::InvalidArgument(
          "sampling.logit_bias ids must be distinct, >= 0 and ascending, got " +
          std::to_string(id) + " at " + std::to_string(i));
    }
    if (!std::isfinite(bias)) return Bad("logit_bias[" + std::to_string(id) + "]", "finite", bias);
  }
  if (p.logprobs < 0 || p.logprobs > kMaxLogprobs) {
    return Bad("logprobs", "in [0, " + std::to_string(kMaxLogprobs) + "]",
               static_cast<float>(p.logprobs));
  }
  return shared::Status::Ok();
}

Sampler::Sampler(const SamplingParams& params, int vocab_size)
    : params_(params), vocab_size_(vocab_size), vm_(&kernels::VectorMathFor(kernels::Isa::kBest)) {
  shared::Status valid = ValidateSamplingParams(params);
  SM_CHECK(valid.ok()) << valid.ToString();
  SM_CHECK(vocab_size > 0) << "vocab_size " << vocab_size;
  SM_CHECK(params.logit_bias.empty() || params.logit_bias.back().first < vocab_size)
      << "logit_bias token " << params.logit_bias.back().first << " outside vocab " << vocab_size;
  if (has_penalties()) {
    seen_ids_.reserve(vocab_size);
    seen_.assign(vocab_size, 0);
  }
  if (params.presence_penalty != 0.0f || params.frequency_penalty != 0.0f) {
    gen_counts_.assign(vocab_size, 0);
  }
  if (params.temperature > 0.0f || params.logprobs > 0) weights_.resize(vocab_size);
  if (params.temperature > 0.0f) {
    block_mass_.resize((vocab_size + kDrawBlock - 1) / kDrawBlock);
    if (params.top_k > 0 || params.top_p < 1.0f) candidates_.resize(vocab_size);
    if (params.top_p < 1.0f) bucket_mass_.resize(kMassBuckets);
  }
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

void Sampler::CopyHistoryFrom(const Sampler& other) {
  SM_CHECK(other.vocab_size_ == vocab_size_ && other.seen_.size() == seen_.size() &&
           other.gen_counts_.size() == gen_counts_.size())
      << "samplers with other vocabularies or penalties";
  for (TokenId id : seen_ids_) {
    seen_[id] = 0;
    if (!gen_counts_.empty()) gen_counts_[id] = 0;
  }
  seen_ids_.assign(other.seen_ids_.begin(), other.seen_ids_.end());  // within the reserved vocab
  for (TokenId id : seen_ids_) {
    seen_[id] = 1;
    if (!gen_counts_.empty()) gen_counts_[id] = other.gen_counts_[id];
  }
  num_generated_ = other.num_generated_;
}

TokenId Sampler::Sample(std::span<float> logits, SampleLogprobs* logprobs) {
  SM_CHECK(logits.size() == static_cast<size_t>(vocab_size_))
      << "logits " << logits.size() << " != vocab " << vocab_size_;
  for (const auto& [id, bias] : params_.logit_bias) logits[id] += bias;
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
  return vm_->arg_max(logits.data(), static_cast<int>(logits.size()));
}

TokenId Sampler::Draw(std::span<const float> logits) {
  if (params_.top_k > 0 && params_.top_k < vocab_size_) return DrawTopK(logits);
  const int n = vocab_size_;
  const float max_logit = vm_->max_value(logits.data(), n);  // NaN counts as -inf
  // Nothing has any mass, or +inf tokens have all of it: the first best token.
  if (!(max_logit > kNegInf) || max_logit == kInf) return Greedy(logits);
  float* w = weights_.data();
  // exp(0) = 1 for the best token, so min-p's threshold needs no division; NaN logits get 0.
  vm_->exp_of_scaled(logits.data(), w, n, max_logit, params_.temperature);
  if (params_.top_p < 1.0f) KeepTopPWeights();
  if (params_.min_p > 0.0f) {
    const float threshold = params_.min_p;
    for (int i = 0; i < n; ++i) w[i] = w[i] >= threshold ? w[i] : 0.0f;
  }
  return DrawWeighted();
}

// Draws from weights_ in id order. The mass up to token i is the sum of the whole blocks before it
// (each by SumToDouble, block sums added left to right) plus the block's own weights up to i, added
// left to right in double; the draw is the first token whose running mass passes
// r = UniformDouble(seed, num_generated) * total, total being the sum of all block sums.
TokenId Sampler::DrawWeighted() {
  const float* w = weights_.data();
  const int n = vocab_size_;
  const int n_blocks = static_cast<int>(block_mass_.size());
  double total = 0.0;
  int last_block = 0;  // the last block with any mass; the best token's (weight 1) is one
  for (int b = 0; b < n_blocks; ++b) {
    const int begin = b * kDrawBlock;
    block_mass_[b] = vm_->sum_to_double(w + begin, std::min(kDrawBlock, n - begin));
    total += block_mass_[b];
    if (block_mass_[b] > 0.0) last_block = b;
  }
  const double r = UniformDouble(params_.seed, static_cast<uint64_t>(num_generated_)) * total;
  double acc = 0.0;
  int b = 0;
  for (; b < last_block && !(r < acc + block_mass_[b]); ++b) acc += block_mass_[b];
  const int end = std::min(n, (b + 1) * kDrawBlock);
  int last_kept = -1;
  for (int i = b * kDrawBlock; i < end; ++i) {
    if (!(w[i] > 0.0f)) continue;
    acc += w[i];
    last_kept = i;
    if (r < acc) return i;
  }
  return last_kept;  // r landed on the rounding slack between the block sum and the scan
}

// top-k: truncation and the draw work on the k best candidates, best first.
TokenId Sampler::DrawTopK(std::span<const float> logits) {
  int n = SelectTopK(logits);
  Candidate* c = candidates_.data();
  const float max_logit = c[0].value;
  if (!(max_logit > kNegInf) || max_logit == kInf) return Greedy(logits);
  float* w = weights_.data();  // [n] the same exponentials the full-vocabulary path computes
  for (int i = 0; i < n; ++i) w[i] = c[i].value;
  vm_->exp_of_scaled(w, w, n, max_logit, params_.temperature);
  for (int i = 0; i < n; ++i) c[i].value = w[i];
  if (params_.top_p < 1.0f) n = KeepTopPSorted(n);
  if (params_.min_p > 0.0f) {
    int keep = 1;  // the best candidate (weight 1) always survives
    while (keep < n && c[keep].value >= params_.min_p) ++keep;
    n = keep;
  }
  double total = 0.0;
  for (int i = 0; i < n; ++i) total += c[i].value;
  const double r = UniformDouble(params_.seed, static_cast<uint64_t>(num_generated_)) * total;
  double acc = 0.0;
  for (int i = 0; i < n; ++i) {
    acc += c[i].value;
    if (r < acc) return c[i].id;
  }
  return c[n - 1].id;  // r landed on the rounding slack past the last sum
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
    // Only a logit above the worst kept one enters (a tie loses: it has the higher id; NaN never
    // compares greater), so a SIMD search skips to the next one that does.
    for (int i = k; i < n; ++i) {
      i += vm_->find_first_greater(logits.data() + i, n - i, c[0].value);
      if (i >= n) break;
      std::pop_heap(c, c + k, better);
      c[k - 1] = {logits[i], i};
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

// Keeps the smallest prefix of the sorted candidates_[0, n) whose mass reaches top_p of the total.
int Sampler::KeepTopPSorted(int n) {
  const Candidate* c = candidates_.data();
  double total = 0.0;
  for (int i = 0; i < n; ++i) total += c[i].value;
  const double target = static_cast<double>(params_.top_p) * total;
  double kept = 0.0;
  for (int i = 0; i < n; ++i) {
    kept += c[i].value;
    if (kept >= target) return i + 1;
  }
  return n;
}

// Zeroes the weights outside the smallest set of best tokens (by weight desc, id asc) whose mass
// reaches target = top_p * total (total by SumToDouble), in O(vocab) without a full sort: a mass
// histogram over MassBucket() (each bucket summed in id order) finds the bucket where the running
// mass, best first, crosses the target; every token in a better bucket is kept, and only the
// crossing bucket is sorted to find the cut. The kept set is the one a full sort would give.
// Buckets below `floor_bucket` are skipped: their tokens weigh < (total - target) / (2 * vocab)
// each, so together less than half of what the target leaves out, and the crossing bucket cannot
// be among them; the histogram then visits only the heavier tokens (SIMD search between them).
void Sampler::KeepTopPWeights() {
  float* w = weights_.data();
  const int n = vocab_size_;
  const double total = vm_->sum_to_double(w, n);
  const double target = static_cast<double>(params_.top_p) * total;
  const int floor_bucket = MassBucket(static_cast<float>(0.5 * (total - target) / n));
  // The heaviest weight below floor_bucket (-1 when there is none).
  const float skip = floor_bucket > 0 ? BucketTop(floor_bucket - 1) : -1.0f;
  std::fill(bucket_mass_.begin() + floor_bucket, bucket_mass_.end(), 0.0);
  for (int i = vm_->find_first_greater(w, n, skip); i < n;
       i += 1 + vm_->find_first_greater(w + i + 1, n - i - 1, skip)) {
    bucket_mass_[MassBucket(w[i])] += w[i];
  }
  int cross = kMassBuckets - 1;
  double kept = 0.0;
  for (; cross > floor_bucket && kept + bucket_mass_[cross] < target; --cross) {
    kept += bucket_mass_[cross];
  }

  // [m] the crossing bucket's tokens (w in (lo, hi]), sorted best first.
  const float lo = cross > 0 ? BucketTop(cross - 1) : -1.0f;
  const float hi = BucketTop(cross);
  Candidate* c = candidates_.data();
  int m = 0;
  for (int i = vm_->find_first_greater(w, n, lo); i < n;
       i += 1 + vm_->find_first_greater(w + i + 1, n - i - 1, lo)) {
    if (w[i] <= hi) c[m++] = {w[i], i};
  }
  std::sort(c, c + m, [](const Candidate& a, const Candidate& b) { return Better(a, b); });
  int cut = m - 1;  // c[cut] is the worst token kept
  for (int j = 0; j < m; ++j) {
    kept += c[j].value;
    if (kept >= target) {
      cut = j;
      break;
    }
  }
  // Everything worse than c[cut] goes: a lower weight, or the same weight and a higher id. (m == 0
  // only if rounding let the target pass every bucket's mass: the better buckets stay.)
  const Candidate last = m > 0 ? c[cut] : Candidate{hi, -1};
  const int split = std::min(last.id + 1, n);  // two branch-free (vectorisable) loops
  for (int i = 0; i < split; ++i) w[i] = w[i] < last.value ? 0.0f : w[i];
  for (int i = split; i < n; ++i) w[i] = w[i] <= last.value ? 0.0f : w[i];
}

void Sampler::FillLogprobs(std::span<const float> logits, TokenId chosen, SampleLogprobs* out) {
  // log Z = max + log(sum exp(l - max)), the exponentials by the vector kernels (NaN logits have no
  // mass), summed in double in the kernels' fixed order.
  const int n_vocab = static_cast<int>(logits.size());
  const float max_logit = vm_->max_value(logits.data(), n_vocab);
  float log_z = max_logit;
  if (max_logit > kNegInf && max_logit < kInf) {
    vm_->exp_of_scaled(logits.data(), weights_.data(), n_vocab, max_logit, 1.0f);
    log_z += static_cast<float>(std::log(vm_->sum_to_double(weights_.data(), n_vocab)));
  }

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
