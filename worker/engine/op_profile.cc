#include "worker/engine/op_profile.h"

namespace smallmind::worker {

void OpProfile::Add(OpKind kind, int jobs, int rows, int cols, int64_t ns) {
  for (int i = 0; i < n_; i++) {
    Entry& e = entries_[i];
    if (e.kind == kind && e.jobs == jobs && e.rows == rows && e.cols == cols) {
      e.ns += ns;
      e.calls++;
      return;
    }
  }
  if (n_ == kMaxEntries) {
    dropped_ns_ += ns;
    return;
  }
  entries_[n_++] = Entry{kind, jobs, rows, cols, ns, 1};
}

}  // namespace smallmind::worker
