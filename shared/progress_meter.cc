#include "shared/progress_meter.h"

namespace smallmind::shared {

std::optional<int> ProgressMeter::Update(uint64_t done, Clock::time_point now) {
  if (total_ == 0 || done >= total_ || now - last_line_ < interval_) return std::nullopt;
  const int percent = static_cast<int>(done * 100 / total_);
  if (percent == last_percent_) return std::nullopt;
  last_percent_ = percent;
  last_line_ = now;
  return percent;
}

}  // namespace smallmind::shared
