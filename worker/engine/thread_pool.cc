#include "worker/engine/thread_pool.h"

#include <immintrin.h>
#include <spdlog/spdlog.h>

#include "shared/check.h"
#include "shared/cpu_topology.h"

namespace smallmind::worker {
namespace {

// Pause-loop iterations a pinned thread spins before sleeping on the futex: about 50-100 us on
// current x86 cores, longer than the single-threaded gaps between the ops of one step, much
// shorter than an idle engine.
constexpr int kSpinIterations = 4096;

constexpr uint32_t kThreadBits = 8;
constexpr uint32_t kThreadMask = (1u << kThreadBits) - 1;
constexpr uint32_t kInitialEpoch = 1u << kThreadBits;          // generation 1, no threads (unused)
constexpr uint32_t kGenMask = (1u << (32 - kThreadBits)) - 1;  // a generation's bits

// A thread's range word: generation << 32 | first unclaimed part << 16 | end of its run.
uint64_t RangeWord(uint32_t gen, int lo, int hi) {
  return static_cast<uint64_t>(gen) << 32 | static_cast<uint64_t>(lo) << 16 |
         static_cast<uint64_t>(hi);
}
uint32_t RangeGeneration(uint64_t word) { return static_cast<uint32_t>(word >> 32); }
int RangeLo(uint64_t word) { return static_cast<int>((word >> 16) & 0xffff); }
int RangeHi(uint64_t word) { return static_cast<int>(word & 0xffff); }

// Spins (only when `spin`) then sleeps until `word` no longer equals `old`; returns the new value.
template <typename T>
T WaitWhileEqual(const std::atomic<T>& word, T old, bool spin) {
  if (spin) {
    for (int i = 0; i < kSpinIterations; i++) {
      const T v = word.load(std::memory_order_acquire);
      if (v != old) return v;
      _mm_pause();
    }
  }
  while (true) {
    const T v = word.load(std::memory_order_acquire);
    if (v != old) return v;
    word.wait(old, std::memory_order_acquire);
  }
}

}  // namespace

ThreadPool::ThreadPool(int num_threads, std::vector<int> cpus)
    : num_threads_(num_threads), cpus_(std::move(cpus)) {
  SM_CHECK(num_threads_ >= 1 && num_threads_ <= kMaxThreads)
      << "thread pool size " << num_threads_ << " out of [1, " << kMaxThreads << "]";
  // Workers report their pinning before any job, so pinned_ is settled when the constructor ends.
  std::atomic<int> reported{0};
  std::atomic<int> failed{0};
  workers_.reserve(static_cast<size_t>(num_threads_ - 1));
  for (int i = 1; i < num_threads_; i++) {
    workers_.emplace_back([this, i, &reported, &failed] {
      if (!cpus_.empty()) {
        const int cpu = cpus_[static_cast<size_t>(i) % cpus_.size()];
        if (!shared::PinCurrentThread({cpu}).ok()) failed.fetch_add(1);
      }
      reported.fetch_add(1, std::memory_order_release);
      reported.notify_one();
      WorkerMain(i);
    });
  }
  for (int r = reported.load(std::memory_order_acquire); r < num_threads_ - 1;
       r = reported.load(std::memory_order_acquire)) {
    reported.wait(r, std::memory_order_acquire);
  }
  pinned_.store(!cpus_.empty() && failed.load() == 0, std::memory_order_relaxed);
  if (cpus_.empty()) {
    spdlog::debug("thread pool: {} threads, not pinned (no CPU set), waiting without spinning",
                  num_threads_);
  } else if (pinned()) {
    spdlog::info("thread pool: {} threads pinned to CPUs {}", num_threads_,
                 shared::FormatCpuList(cpus_));
  } else {
    spdlog::warn(
        "thread pool: pinning {} of {} worker threads to CPUs {} failed; threads run "
        "unpinned and wait without spinning",
        failed.load(), num_threads_ - 1, shared::FormatCpuList(cpus_));
  }
}

ThreadPool::~ThreadPool() {
  // Generation bumped with 0 threads: the stop signal.
  const uint32_t gen = (epoch_.load(std::memory_order_relaxed) >> kThreadBits) + 1;
  epoch_.store(gen << kThreadBits, std::memory_order_release);
  epoch_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::PinCaller() {
  pinned_caller_ = std::this_thread::get_id();
  const shared::Status s = shared::PinCurrentThread({cpus_[0]});
  if (!s.ok()) spdlog::warn("thread pool: pinning the engine thread failed: {}", s.ToString());
}

void ThreadPool::Run(int n_items, int n_parts, int n_threads, PartFn fn, const void* ctx) {
  job_fn_ = fn;
  job_ctx_ = ctx;
  job_items_ = n_items;
  job_parts_ = n_parts;
  done_.store(0, std::memory_order_relaxed);
  const uint32_t gen = ((epoch_.load(std::memory_order_relaxed) >> kThreadBits) + 1) & kGenMask;
  // Thread t's own run of consecutive parts, [t * parts / threads, (t + 1) * parts / threads). A
  // thread that walks consecutive parts walks consecutive rows: the weight streams of a matmul
  // (the tiles' prefetch of the next rows, the hardware prefetchers) run on from one part into the
  // next instead of starting cold at every part. Measured on Zen 3 (bench-110M Q8_0, 2 threads,
  // the two claim orders alternated every 2 steps in one process, 6 runs): a step of 8 streams
  // took 0.937x the time (0.90-0.97) against 1.00 for the same order alternated with itself, one
  // stream 0.87-0.97x.
  for (int t = 0; t < n_threads; t++) {
    ranges_[t].word.store(RangeWord(gen, t * n_parts / n_threads, (t + 1) * n_parts / n_threads),
                          std::memory_order_relaxed);
  }
  // The ranges and the job fields go with the wake-up word (release).
  epoch_.store((gen << kThreadBits) | static_cast<uint32_t>(n_threads), std::memory_order_release);
  epoch_.notify_all();
  Help(gen, 0, n_threads);
  // Parts still running were claimed by workers; wait for them.
  for (int done = done_.load(std::memory_order_acquire); done != n_parts;) {
    done = WaitWhileEqual(done_, done, pinned());
  }
}

void ThreadPool::RunPart(int part, int thread) const {
  job_fn_(job_ctx_, kernels::StaticRows(job_items_, job_parts_, part), thread);
}

void ThreadPool::Help(uint32_t gen, int thread, int n_threads) {
  int ran = 0;
  // Its own run upward, from its own cache line; a claim holds the job open (Run waits for every
  // part), so the job's fields are stable while the part runs.
  std::atomic<uint64_t>& own = ranges_[thread].word;
  uint64_t word = own.load(std::memory_order_acquire);
  while (RangeGeneration(word) == gen && RangeLo(word) < RangeHi(word)) {
    const int lo = RangeLo(word);
    if (own.compare_exchange_weak(word, RangeWord(gen, lo + 1, RangeHi(word)),
                                  std::memory_order_acq_rel, std::memory_order_acquire)) {
      RunPart(lo, thread);
      ran++;
      word = own.load(std::memory_order_acquire);
    }
  }
  // Then what is left of the others' runs from their far ends, the highest part first.
  for (int victim = n_threads - 1; victim >= 0;) {
    std::atomic<uint64_t>& range = ranges_[victim].word;
    word = range.load(std::memory_order_acquire);
    if (victim == thread || RangeGeneration(word) != gen || RangeLo(word) >= RangeHi(word)) {
      victim--;
      continue;
    }
    const int hi = RangeHi(word) - 1;
    if (range.compare_exchange_weak(word, RangeWord(gen, RangeLo(word), hi),
                                    std::memory_order_acq_rel, std::memory_order_acquire)) {
      RunPart(hi, thread);
      ran++;
    }
  }
  // Counted once. The job's part count is read before: the count that completes the job lets the
  // caller return and publish the next one.
  if (ran == 0) return;
  const int parts = job_parts_;
  if (done_.fetch_add(ran, std::memory_order_acq_rel) + ran == parts) done_.notify_one();
}

void ThreadPool::WorkerMain(int index) {
  uint32_t seen = kInitialEpoch;
  while (true) {
    seen = WaitWhileEqual(epoch_, seen, pinned());
    const int active = static_cast<int>(seen & kThreadMask);
    if (active == 0) return;  // stop
    if (index < active) Help(seen >> kThreadBits, index, active);
  }
}

}  // namespace smallmind::worker
