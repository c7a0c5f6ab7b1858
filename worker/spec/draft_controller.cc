#include "worker/spec/draft_controller.h"

#include <algorithm>

namespace smallmind::worker {
namespace {

constexpr double kWeight = 0.25;  // of the newest verification in the recent acceptance rate

}  // namespace

DraftController::DraftController(const DraftControllerOptions& options)
    : options_(options),
      length_(std::max(1, std::min(4, options.max_draft))),
      next_cooldown_(std::max(1, options.first_cooldown)) {}

void DraftController::OnStepWithoutDraft() {
  if (cooldown_left_ > 0) --cooldown_left_;
}

void DraftController::OnVerified(int drafted, int accepted) {
  if (drafted <= 0) return;
  rate_ += kWeight * (static_cast<double>(accepted) / drafted - rate_);
  length_ =
      accepted == drafted ? std::min(options_.max_draft, drafted + 2) : std::max(1, accepted + 1);
  if (rate_ < options_.off_below) {
    cooldown_left_ = next_cooldown_;
    next_cooldown_ = std::min(options_.max_cooldown, 2 * next_cooldown_);
    rate_ = options_.off_below;  // the probe after the cool-down starts at the threshold
    length_ = 1;
  } else if (accepted > 0) {
    next_cooldown_ = std::max(1, options_.first_cooldown);
  }
}

}  // namespace smallmind::worker
