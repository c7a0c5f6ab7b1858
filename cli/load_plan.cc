#include "cli/load_plan.h"

#include <charconv>
#include <cmath>
#include <utility>

#include <spdlog/fmt/fmt.h>

namespace smallmind::cli {
namespace {

// SplitMix64: request `index`'s draws are a function of (seed, index, draw number) alone, so any
// request can be planned on any thread in any order.
class Draws {
 public:
  Draws(uint64_t seed, uint64_t index) : state_(seed ^ (index * 0xD1B54A32D192ED03ull)) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform in [lo, hi] (the modulo bias is below 2^-32 for the ranges used here).
  uint32_t Between(uint32_t lo, uint32_t hi) {
    return lo + static_cast<uint32_t>(Next() % (uint64_t{hi} - lo + 1));
  }

 private:
  uint64_t state_;
};

shared::Result<uint32_t> ParseCount(std::string_view flag, std::string_view text) {
  uint32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    return shared::InvalidArgument(
        fmt::format("{} takes N or MIN:MAX (whole numbers), got '{}'", flag, text));
  }
  return value;
}

}  // namespace

shared::Result<CountRange> ParseCountRange(std::string_view flag, std::string_view text,
                                           uint32_t lo, uint32_t hi) {
  const size_t colon = text.find(':');
  CountRange range;
  SM_ASSIGN_OR_RETURN(range.min, ParseCount(flag, text.substr(0, colon)));
  range.max = range.min;
  if (colon != std::string_view::npos) {
    SM_ASSIGN_OR_RETURN(range.max, ParseCount(flag, text.substr(colon + 1)));
  }
  if (range.min > range.max) {
    return shared::InvalidArgument(fmt::format("{} {}: MIN must not exceed MAX", flag, text));
  }
  if (range.min < lo || range.max > hi) {
    return shared::InvalidArgument(
        fmt::format("{} must be within [{}, {}], got {}", flag, lo, hi, text));
  }
  return range;
}

shared::Result<std::chrono::duration<double>> ParseDuration(std::string_view flag,
                                                            std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string_view unit = text.substr(static_cast<size_t>(end - text.data()));
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  if (unit == "ms") scale = 1e-3;
  if (unit == "m") scale = 60;
  if (unit == "h") scale = 3600;
  if (error != std::errc() || text.empty() || scale == 0 || !std::isfinite(value) || value <= 0) {
    return shared::InvalidArgument(fmt::format(
        "{} takes a positive duration such as 90, 90s, 500ms, 2m or 1h, got '{}'", flag, text));
  }
  return std::chrono::duration<double>(value * scale);
}

shared::Result<LoadPlan> LoadPlan::Make(LoadPlanOptions options) {
  const bool token_prompts = options.prompt_tokens.max > 0;
  if (token_prompts == !options.prompts.empty()) {
    return shared::InvalidArgument(
        "give exactly one prompt source: a prompt (or --prompt-file), --prompt-list or "
        "--prompt-tokens");
  }
  if (token_prompts && options.vocab_size <= kFirstPlainTokenId) {
    return shared::InvalidArgument(
        fmt::format("--prompt-tokens needs a vocabulary of more than {} tokens, the model has {}",
                    kFirstPlainTokenId, options.vocab_size));
  }
  if (options.shared_prefixes > 0 && (!token_prompts || options.prefix_tokens == 0)) {
    return shared::InvalidArgument(
        "--shared-prefixes needs token prompts (--prompt-tokens) and --prefix-tokens > 0");
  }
  if (!(options.cancel_fraction >= 0 && options.cancel_fraction <= 1)) {
    return shared::InvalidArgument(
        fmt::format("--cancel-fraction must be in [0, 1], got {}", options.cancel_fraction));
  }
  return LoadPlan(std::move(options));
}

LoadPlan::LoadPlan(LoadPlanOptions options) : options_(std::move(options)) {
  // Prefix p is drawn from its own stream (the seed with its top bit flipped, index p), apart from
  // every request's draws.
  prefixes_.resize(options_.shared_prefixes);
  for (uint32_t p = 0; p < options_.shared_prefixes; ++p) {
    Draws draws(options_.seed ^ (1ull << 63), p);
    prefixes_[p].resize(options_.prefix_tokens);
    for (uint32_t& id : prefixes_[p])
      id = draws.Between(kFirstPlainTokenId, options_.vocab_size - 1);
  }
}

PlannedRequest LoadPlan::Request(uint64_t index) const {
  Draws draws(options_.seed, index);
  PlannedRequest planned;
  smallmind::v1::GenerateRequest& request = planned.request;
  request = options_.base;
  if (request.sampling().has_seed()) {
    request.mutable_sampling()->set_seed(request.sampling().seed() + index);
  }
  if (options_.prompt_tokens.max > 0) {
    const uint32_t n = draws.Between(options_.prompt_tokens.min, options_.prompt_tokens.max);
    auto* ids = request.mutable_prompt_token_ids();
    if (!prefixes_.empty()) {
      const std::vector<uint32_t>& prefix = prefixes_[index % prefixes_.size()];
      ids->mutable_ids()->Add(prefix.begin(), prefix.end());
    }
    for (uint32_t i = 0; i < n; ++i) {
      ids->add_ids(draws.Between(kFirstPlainTokenId, options_.vocab_size - 1));
    }
  } else {
    const auto pick = options_.prompts.size() == 1
                          ? 0
                          : draws.Between(0, static_cast<uint32_t>(options_.prompts.size() - 1));
    request.set_prompt(options_.prompts[pick]);
  }
  const uint32_t max_tokens = draws.Between(options_.max_tokens.min, options_.max_tokens.max);
  request.mutable_stopping()->set_max_new_tokens(max_tokens);
  if (draws.Unit() < options_.cancel_fraction) {
    planned.cancel_after_tokens = max_tokens >= 2 ? draws.Between(1, max_tokens - 1) : 1;
  }
  return planned;
}

}  // namespace smallmind::cli
