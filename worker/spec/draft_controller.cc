#include "worker/spec/draft_controller.h"

#include <algorithm>

namespace smallmind::worker {
namespace {

// Of the counts before each verification, what is kept: the estimate follows the last ~4.
constexpr double kDecay = 0.75;
// The prior: p = 0.6 (a first proposal of 1 or 2 drafts), worth about two verifications.
constexpr double kPriorAccepted = 1.5;
constexpr double kPriorRejected = 1.0;
// The budget never holds more than one step's worth: a long paying phase buys no burst of
// probes when the drafter stops agreeing.
constexpr double kMaxBudget = 1.0;

}  // namespace

DraftController::DraftController(const DraftControllerOptions& options)
    : options_(options), accepted_(kPriorAccepted), rejected_(kPriorRejected) {}

double DraftController::Cost(int k) const {
  const double r = options_.draft_step_cost;
  return r * (1.0 + (gap_ - 1) * options_.catch_up_token_cost + (k - 1)) +
         options_.verify_token_cost * k;
}

int DraftController::PayingLength() const {
  const double p = acceptance();
  const double marginal = options_.draft_step_cost + options_.verify_token_cost;
  int k = 0;
  double expected = 0.0;  // E(k)
  double next = p;        // p^(k + 1)
  while (k < options_.max_draft && next > marginal) {
    ++k;
    expected += next;
    next *= p;
  }
  return k > 0 && expected > Cost(k) ? k : 0;
}

int DraftController::length() const {
  if (options_.max_draft <= 0) return 0;
  const int k = PayingLength();
  if (k > 0) return k;
  return budget_ >= Cost(1) ? 1 : 0;  // a probe, paid from the budget
}

void DraftController::OnStepWithoutDraft() {
  ++gap_;
  budget_ = std::min(kMaxBudget, budget_ + options_.probe_share);
}

void DraftController::OnVerified(int drafted, int accepted) {
  if (drafted <= 0) return;
  budget_ = std::min(kMaxBudget, budget_ + options_.probe_share + accepted - Cost(drafted));
  accepted_ = kDecay * accepted_ + accepted;
  rejected_ = kDecay * rejected_ + (accepted < drafted ? 1.0 : 0.0);
  gap_ = 1;
}

}  // namespace smallmind::worker
