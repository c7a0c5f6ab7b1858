// StreamRecorder (test helper): takes what an OutputQueue carries and keeps each sequence's stream
// (ids, text, logprobs, finish) plus what a consumer must never see: two finishes, or events after
// the finish. Used by the scheduler and engine-loop tests; one test thread; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "worker/sched/output_queue.h"
#include "worker/sched/step_output.h"

namespace smallmind::worker::testing {

struct RecordedStream {
  std::vector<TokenId> ids;
  std::string text;
  std::vector<std::string> deltas;   // text of each token event, in order
  std::vector<TokenId> logprob_ids;  // chosen ids of the logprobs, in order
  std::vector<int> shifted_after;    // stream length (ids) at each reported context shift
  int finishes = 0;
  int events_after_finish = 0;
  FinishEvent finish;
};

class StreamRecorder {
 public:
  // Records one StepOutput's events in order.
  void Record(const StepOutput& out) {
    for (const OutputEvent& e : out.events()) {
      RecordedStream& s = streams_[e.sequence_id];
      if (s.finishes > 0) ++s.events_after_finish;
      if (e.finished) {
        ++s.finishes;
        s.finish = e.finish;
        continue;
      }
      for (TokenId id : out.token_ids(e)) s.ids.push_back(id);
      s.text.append(out.text(e));
      s.deltas.emplace_back(out.text(e));
      for (const SampleLogprobs& lp : out.logprobs(e)) s.logprob_ids.push_back(lp.chosen.id);
      for (uint32_t i = 0; i < e.context_shifts; ++i) {
        s.shifted_after.push_back(static_cast<int>(s.ids.size()));
      }
    }
  }
  // Takes and records whatever is pending; returns the number of events taken.
  int Drain(OutputQueue* queue) {
    if (!queue->TryTake(&taken_)) return 0;
    Record(taken_);
    return static_cast<int>(taken_.events().size());
  }
  // The stream of `sequence_id` (empty when it has produced nothing yet).
  const RecordedStream& operator[](uint64_t sequence_id) { return streams_[sequence_id]; }

 private:
  std::map<uint64_t, RecordedStream> streams_;
  StepOutput taken_;
};

}  // namespace smallmind::worker::testing
