#include "worker/modelgen/llama3_rope.h"

#include <cmath>
#include <numbers>

namespace smallmind::worker {

std::vector<float> Llama3RopeFactors(int head_dim, float theta, const Llama3RopeScaling& s) {
  const double low_wavelength = s.original_context / s.low_freq_factor;
  const double high_wavelength = s.original_context / s.high_freq_factor;
  std::vector<float> out(static_cast<size_t>(head_dim / 2));
  for (int i = 0; i < head_dim / 2; i++) {
    const double freq = std::pow(static_cast<double>(theta), -2.0 * i / head_dim);
    const double wavelength = 2.0 * std::numbers::pi / freq;
    double divisor = 1.0;
    if (wavelength > low_wavelength) {
      divisor = s.factor;
    } else if (wavelength >= high_wavelength) {
      const double smooth = (s.original_context / wavelength - s.low_freq_factor) /
                            (s.high_freq_factor - s.low_freq_factor);
      divisor = 1.0 / ((1.0 - smooth) / s.factor + smooth);
    }
    out[i] = static_cast<float>(divisor);
  }
  return out;
}

}  // namespace smallmind::worker
