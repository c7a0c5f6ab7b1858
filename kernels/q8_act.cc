// PackQ8ActOctets: the Q8 rows regrouped 8 tokens at a time (q8_act.h).
#include "kernels/q8_act.h"

#include <cstring>

namespace smallmind::kernels {

void PackQ8ActOctets(const void* xq, void* octets, int n_dim, int n_tokens, int first, int last) {
  const int nb = n_dim / 32;
  for (int o = first; o < last; o++) {
    const auto [q, d, s, c] = Q8ActOctetOutOf(octets, n_dim, o);
    for (int j = 0; j < kQ8ActOctet; j++) {
      const int t = o * kQ8ActOctet + j;
      if (t >= n_tokens) {
        for (int b = 0; b < nb; b++) {
          for (int k = 0; k < 8; k++) q[(b * 8 + k) * kQ8ActOctet + j] = 0;
          d[b * kQ8ActOctet + j] = 0;
          s[b * kQ8ActOctet + j] = 0;
          c[b * kQ8ActOctet + j] = 0;
        }
        continue;
      }
      const void* row = static_cast<const uint8_t*>(xq) + Q8ActRowBytes(n_dim) * t;
      const int8_t* qs = Q8ActQuants(row);
      const float* rd = Q8ActScales(row, n_dim);
      const float* rs = Q8ActSums(row, n_dim);
      const int32_t* rq = Q8ActQuantSums(row, n_dim);
      for (int b = 0; b < nb; b++) {
        for (int k = 0; k < 8; k++) {
          std::memcpy(&q[(b * 8 + k) * kQ8ActOctet + j], qs + 32 * b + 4 * k, 4);
        }
        d[b * kQ8ActOctet + j] = rd[b];
        s[b * kQ8ActOctet + j] = rs[b];
        c[b * kQ8ActOctet + j] = -128 * rq[b];
      }
    }
  }
}

}  // namespace smallmind::kernels
