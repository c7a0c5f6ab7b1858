// CompareStep: one greedy step of smallmind (its raw logits) against llama.cpp's recorded step,
// by the rule of issue 42: the same greedy token unless llama.cpp's top-2 gap is <= kNearTie (a
// near-tie; the caller stops comparing the prompt there), and top-5 logprobs within a tolerance.
// Header-only test helper; pure functions, thread-safe.
//
// Logprobs are compared by token id. Each of llama.cpp's top-5 tokens is looked up in smallmind's
// full-vocabulary log-softmax, whatever its rank here. A token in smallmind's top-5 but not in
// llama.cpp's has a llama.cpp logprob at most llama.cpp's 5th, so its logprob here may exceed that
// 5th by at most the tolerance.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "tests/worker/conformance/oracle_case.h"

namespace smallmind::worker::testing {

inline constexpr double kNearTie = 0.02;  // bench/compare/make_conformance_data.mjs: the same
inline constexpr int kTopN = 5;

// log-softmax of `logits` over the whole vocabulary, in double precision.
inline std::vector<double> LogSoftmax(std::span<const float> logits) {
  double max = -INFINITY;
  for (float l : logits) max = std::max(max, static_cast<double>(l));
  double sum = 0;
  for (float l : logits) sum += std::exp(l - max);
  const double log_sum = max + std::log(sum);
  std::vector<double> out(logits.size());
  for (size_t i = 0; i < logits.size(); i++) out[i] = logits[i] - log_sum;
  return out;
}

// The kTopN ids of `logprobs`, best first, the lower id first among equals (llama.cpp's greedy
// sampler keeps the first maximum).
inline std::vector<TokenId> TopIds(const std::vector<double>& logprobs) {
  std::vector<TokenId> ids(logprobs.size());
  std::iota(ids.begin(), ids.end(), 0);
  const size_t n = std::min<size_t>(kTopN, ids.size());
  std::partial_sort(ids.begin(), ids.begin() + n, ids.end(), [&](TokenId a, TokenId b) {
    return logprobs[a] > logprobs[b] || (logprobs[a] == logprobs[b] && a < b);
  });
  ids.resize(n);
  return ids;
}

struct StepComparison {
  TokenId token = 0;      // smallmind's greedy token
  double max_diff = 0;    // largest |logprob difference| over llama.cpp's top-5 tokens
  bool near_tie = false;  // llama.cpp's gap <= kNearTie: the prompt's comparison ends here
  std::string error;      // "" when the step conforms
};

inline std::string Fmt(const char* format, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), format, args...);
  return buf;
}

inline StepComparison CompareStep(const OracleStep& want, std::span<const float> logits,
                                  double tolerance) {
  StepComparison r;
  const std::vector<double> lp = LogSoftmax(logits);
  const std::vector<TokenId> top = TopIds(lp);
  r.token = top[0];
  r.near_tie = want.gap <= kNearTie;
  for (const auto& [id, want_lp] : want.top) {
    if (id < 0 || static_cast<size_t>(id) >= lp.size()) {
      r.error += Fmt("llama.cpp's top token %d is outside the vocabulary (%zu); ", id, lp.size());
      continue;
    }
    const double diff = std::abs(lp[id] - want_lp);
    r.max_diff = std::max(r.max_diff, diff);
    if (diff > tolerance) {
      r.error += Fmt("token %d: logprob %.6f here, %.6f in llama.cpp (|diff| %.6f > %.2f); ", id,
                     lp[id], want_lp, diff, tolerance);
    }
  }
  const double fifth = want.top.empty() ? -INFINITY : want.top.back().second;
  for (TokenId id : top) {
    const bool listed = std::any_of(want.top.begin(), want.top.end(),
                                    [id](const auto& t) { return t.first == id; });
    if (!listed && lp[id] > fifth + tolerance) {
      r.error +=
          Fmt("token %d is in the top-5 here (logprob %.6f) but not in llama.cpp's, whose 5th is "
              "%.6f (more than %.2f below); ",
              id, lp[id], fifth, tolerance);
    }
  }
  if (!r.near_tie && r.token != want.token) {
    r.error +=
        Fmt("greedy token %d here (logprob %.6f), llama.cpp's %d (logprob %.6f here, %.6f there, "
            "llama.cpp's top-2 gap %.6f); ",
            r.token, lp[r.token], want.token, lp[want.token], want.top[0].second, want.gap);
  }
  return r;
}

}  // namespace smallmind::worker::testing
