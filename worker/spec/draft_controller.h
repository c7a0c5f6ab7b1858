// DraftController: how many draft tokens one sequence proposes next, from how many of its recent
// drafts the target accepted. Grows the draft while drafts are accepted whole, shrinks it to just
// past the last accepted length when one is cut short, and switches speculation off for a
// cool-down (doubling, bounded) while the acceptance rate stays low, so a drafter that never
// agrees costs a verification step only now and then. It only decides the draft's length: it
// never changes which tokens the sequence produces. One per sequence; not thread-safe.
#pragma once

namespace smallmind::worker {

struct DraftControllerOptions {
  int max_draft = 8;        // --spec-max-draft
  double off_below = 0.25;  // acceptance rate (recent average) that turns drafting off
  int first_cooldown = 8;   // decode steps without drafting after the first switch-off
  int max_cooldown = 256;   // the cool-down doubles up to this
};

class DraftController {
 public:
  explicit DraftController(const DraftControllerOptions& options = {});

  // Draft tokens to ask the drafter for at the next decode step (0: none). Pure, so a scheduler
  // may ask again when it plans a step twice.
  int length() const { return options_.max_draft <= 0 || cooldown_left_ > 0 ? 0 : length_; }
  // A decode step ran without a draft (cooling down, or the drafter had nothing).
  void OnStepWithoutDraft();
  // A verification step's outcome: `drafted` proposed, the first `accepted` of them accepted.
  void OnVerified(int drafted, int accepted);

  double acceptance_rate() const { return rate_; }
  bool cooling_down() const { return cooldown_left_ > 0; }

 private:
  DraftControllerOptions options_;
  int length_;             // next draft length when not cooling down
  double rate_ = 1.0;      // recent acceptance rate (accepted / drafted), weighted average
  int cooldown_left_ = 0;  // decode steps until drafting is tried again
  int next_cooldown_;      // the cool-down the next switch-off starts
};

}  // namespace smallmind::worker
