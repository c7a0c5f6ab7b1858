// DraftController: how many draft tokens one sequence proposes next, weighing what drafting is
// expected to save against what it costs. It only decides the draft's length: it never changes
// which tokens the sequence produces. One per sequence; not thread-safe.
//
// The model of cost, in target decode steps (the time one decode of the target alone takes):
// a proposal of k drafts, made g tokens after the drafter last saw the sequence, costs
//   C(k, g) = r * (1 + (g - 1) * c + (k - 1)) + v * k
// r: one draft-model step (0 for the n-gram drafter); the first draft step feeds the g tokens
// the target accepted since (its catch-up, each token past the first c draft steps) and each
// further draft one more step; v: what each draft adds to the target's verification chunk. It
// saves the drafts accepted: with a per-draft acceptance p (each draft accepted with probability
// p once the ones before it were), E(k) = p + p^2 + ... + p^k decode steps. The k-th draft is
// worth proposing while p^k > r + v; a proposal is made when E(k) > C(k, g). p is estimated from
// the recent verifications (accepted drafts over accepted + rejected ones, decayed).
// Below that, drafting does not pay on expectation, and the controller only probes (one draft)
// from a budget that each decode step fills by `probe_share` of a step and each verification
// charges with its cost less what it saved, so a drafter that never agrees costs at most about
// probe_share of the decode time beyond the first proposals that taught p. The first proposal's
// catch-up (the draft prefilling the prompt) is the draft's prefill, paid once, and is not
// charged: g counts the decode steps since the last proposal.
#pragma once

namespace smallmind::worker {

struct DraftControllerOptions {
  int max_draft = 8;  // --spec-max-draft
  // r: one draft-model step over one target decode step; 0 for a drafter that costs nothing (the
  // n-gram lookup). The worker sets it from the two models' weight bytes (--spec-draft-cost).
  double draft_step_cost = 0.0;
  // c: each catch-up token past the first, in draft steps (a chunk's token is compute, not a
  // read of the weights: bench-110M Q8_0, 2 threads, Zen 1, pp128 ~800 tok/s against tg64 ~150:
  // about 0.2).
  double catch_up_token_cost = 0.2;
  // v: each draft token in the target's verification chunk, in target decode steps. A chunk's
  // matmuls are compute-bound on 2 cores from a few tokens on (decode_bench pp9@d64 against tg64,
  // grown108 Q8_0, Zen 1 shared with other builds: 9 tokens 4.4 decode steps, v ~0.4; the quiet
  // machine's pp128 / tg64 ratio suggests ~0.2). --spec-verify-cost sets it.
  double verify_token_cost = 0.2;
  // Of each decode step, what probes of a drafter that does not pay may spend.
  double probe_share = 0.02;
};

class DraftController {
 public:
  explicit DraftController(const DraftControllerOptions& options = {});

  // Draft tokens to ask the drafter for at the next decode step (0: none). Pure, so a scheduler
  // may ask again when it plans a step twice.
  int length() const;
  // A decode step ran without a draft (not worth it, or the drafter had nothing).
  void OnStepWithoutDraft();
  // A verification step's outcome: `drafted` proposed, the first `accepted` of them accepted.
  void OnVerified(int drafted, int accepted);

  // p: the estimated chance that a draft is accepted once the drafts before it were.
  double acceptance() const { return accepted_ / (accepted_ + rejected_); }
  // C(k, g) for the next proposal.
  double Cost(int k) const;
  // Whether drafting pays on expectation now (else only a probe from the budget drafts).
  bool pays() const { return PayingLength() > 0; }
  double budget() const { return budget_; }

 private:
  // The longest k whose last draft still pays (p^k > r + v), or 0 when E(k) <= C(k, g).
  int PayingLength() const;

  DraftControllerOptions options_;
  double accepted_;    // decayed count of accepted drafts (with a prior)
  double rejected_;    // decayed count of rejections (a verification cut short)
  int gap_ = 1;        // tokens since the last proposal: its catch-up
  double budget_ = 0;  // probe budget, in target decode steps
};

}  // namespace smallmind::worker
