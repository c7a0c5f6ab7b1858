// OpProfile: where an engine step's time goes, op by op. Opt-in (Engine::set_op_profile; off, an
// op pays one null test): every op of every step adds its wall time, on the calling thread around
// the op's parallel region, to the entry of its kind and shape, so a batched step's matmuls,
// classifier, attention and small ops can be told apart on a machine where `perf` is not
// available (decode_bench --op-profile). Fixed-size, no allocation; one thread at a time.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

namespace smallmind::worker {

enum class OpKind : uint8_t {
  kEmbed,
  kRmsNorm,
  kQuantize,      // a matmul input into Q8 rows
  kMatmul,        // one region: `jobs` matrices of the same input, rows = their rows summed
  kExpertMatmul,  // one region of an MoE layer's expert matrices (jobs, rows 0; cols its input)
  kBias,
  kRope,
  kStoreKv,
  kAttention,
  kSwiGlu,  // and GeGLU
  kAdd,
  kScale,    // the embedding scale
  kSoftCap,  // final logit soft-capping
};

class OpProfile {
 public:
  struct Entry {
    OpKind kind;
    int jobs;  // matrices of a matmul region (0 for other ops)
    int rows;  // a matmul's output rows over all its matrices (0 for other ops)
    int cols;  // a matmul's input width (0 for other ops)
    int64_t ns;
    int64_t calls;
  };
  static constexpr int kMaxEntries = 48;

  void Add(OpKind kind, int jobs, int rows, int cols, int64_t ns);
  void AddStep(int64_t ns) {
    step_ns_ += ns;
    steps_++;
  }
  void Clear() { *this = OpProfile(); }

  const Entry* begin() const { return entries_.data(); }
  const Entry* end() const { return entries_.data() + n_; }
  int64_t step_ns() const { return step_ns_; }  // whole steps, ops and what lies between them
  int64_t steps() const { return steps_; }
  // Times that fitted no entry (more distinct ops than kMaxEntries).
  int64_t dropped_ns() const { return dropped_ns_; }

 private:
  std::array<Entry, kMaxEntries> entries_{};
  int n_ = 0;
  int64_t step_ns_ = 0;
  int64_t steps_ = 0;
  int64_t dropped_ns_ = 0;
};

// Adds the time from its construction to its destruction to `profile` (nothing when null).
class OpTimer {
 public:
  OpTimer(OpProfile* profile, OpKind kind, int jobs = 0, int rows = 0, int cols = 0)
      : profile_(profile), kind_(kind), jobs_(jobs), rows_(rows), cols_(cols) {
    if (profile_ != nullptr) start_ = std::chrono::steady_clock::now();
  }
  ~OpTimer() {
    if (profile_ == nullptr) return;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now() - start_)
                        .count();
    profile_->Add(kind_, jobs_, rows_, cols_, ns);
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  OpProfile* profile_;
  OpKind kind_;
  int jobs_, rows_, cols_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace smallmind::worker
