// The attention kernel tests' prompt chunking (attention_window_test.cc, attention_sinks_test.cc):
// a kernel run over a query's tokens in calls of a few tokens each, and the check that a kernel
// matches the reference and gives the same bits however the prompt is chunked.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/ref/attention_ref.h"

namespace smallmind::kernels::testing {

// fn over a's tokens in calls of `chunk` tokens (their own start_pos), each over all its rows;
// the output's unwritten elements stay NaN.
inline std::vector<float> Chunked(AttentionFn fn, AttentionArgs a, int chunk) {
  const int64_t q_dim = a.QStride();
  std::vector<float> out(size_t(a.n_tokens) * q_dim, NAN);
  const AttentionArgs whole = a;
  for (int t0 = 0; t0 < whole.n_tokens; t0 += chunk) {
    a.q = whole.q + t0 * q_dim;
    a.out = out.data() + t0 * q_dim;
    a.start_pos = whole.start_pos + t0;
    a.n_tokens = std::min(chunk, whole.n_tokens - t0);
    fn(a, AllRows(a.n_tokens * a.n_heads));
  }
  return out;
}

// fn on `a` in one call within `tol` of AttentionRef's (which writes every element), and bit for
// bit itself in calls of 3 tokens and of one token: batch invariance.
inline void ExpectMatchesRefAndChunkInvariant(AttentionFn fn, const AttentionArgs& a, float tol,
                                              const std::string& what) {
  const std::vector<float> want = Chunked(&AttentionRef, a, a.n_tokens);
  const std::vector<float> got = Chunked(fn, a, a.n_tokens);
  for (size_t i = 0; i < want.size(); i++) {
    ASSERT_FALSE(std::isnan(want[i])) << what << " at " << i;
    ASSERT_NEAR(got[i], want[i], tol) << what << " at " << i;
  }
  for (int chunk : {3, 1}) {
    const std::vector<float> chunked = Chunked(fn, a, chunk);
    for (size_t i = 0; i < got.size(); i++) {
      ASSERT_EQ(std::bit_cast<uint32_t>(chunked[i]), std::bit_cast<uint32_t>(got[i]))
          << what << " chunk " << chunk << " at " << i;
    }
  }
}

}  // namespace smallmind::kernels::testing
