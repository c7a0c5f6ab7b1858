// ThreadPool: persistent worker threads, optionally pinned one per CPU, running the engine's ops;
// the caller of ParallelFor is thread 0. Used by the engine thread only (one ParallelFor at a
// time); not otherwise thread-safe.
//
// An op costs no thread creation and no heap allocation: it is published through one atomic word
// and split into parts, each thread given its own run of consecutive parts in a range word on a
// cache line of its own: a thread claims its run's parts upward from its own word (no cache line
// moves between cores), then takes what is left of the others' runs from their far ends (a worker
// slow to wake on a busy machine delays nothing: another runs its parts), and counts the parts it
// ran into the op's done count once. Waiting spins briefly only when every thread was pinned, then
// sleeps on a futex.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "kernels/partition.h"

namespace smallmind::worker {

// How ParallelFor splits n items into parts.
enum class Partition {
  kStaticRows,  // part i = StaticRows(n, threads, i): fixed, the only split deterministic ops use
  // kMaxThreads parts (32; fewer for fewer items), each thread taking its own run of consecutive
  // parts in order, then what is left of the others' from their far ends:
  // evens out uneven work and a thread the OS or a neighbour slowed. Measured on Zen 3
  // (decode_bench tg64x8, 2 threads): with 4 parts per thread the threads waited for each
  // other 7.8% of the time, with 32 parts (16 per thread) 4.4%.
  kDynamic,
};

class ThreadPool {
 public:
  static constexpr int kMaxThreads = 32;

  // `num_threads` in [1, kMaxThreads] threads in all (the caller included). `cpus`: thread i is
  // pinned to cpus[i % cpus.size()] (the caller on its first ParallelFor); empty: no pinning.
  // The pinning outcome is logged once.
  ThreadPool(int num_threads, std::vector<int> cpus);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  bool pinned() const { return pinned_.load(std::memory_order_relaxed); }

  // Calls body(kernels::RowRange range, int thread) for parts covering [0, n_items) exactly once,
  // on at most min(threads, num_threads()) threads, and returns when all are done. `thread` is the
  // index (< num_threads()) of the thread running the part, for per-thread scratch. `body` must
  // not call ParallelFor.
  template <typename Body>
  void ParallelFor(int n_items, int threads, Partition partition, const Body& body);

 private:
  using PartFn = void (*)(const void* ctx, kernels::RowRange range, int thread);
  template <typename Body>
  static void RunPart(const void* ctx, kernels::RowRange range, int thread) {
    (*static_cast<const Body*>(ctx))(range, thread);
  }

  // Runs the parts of a job: fn(ctx, part range, executing thread) for every part.
  void Run(int n_items, int n_parts, int n_threads, PartFn fn, const void* ctx);
  // Claims and runs parts of generation `gen` as thread `thread` of `n_threads` (its own run of
  // parts first, then any left) until none is left, then counts them into done_.
  void Help(uint32_t gen, int thread, int n_threads);
  // Runs part `part` of the current job on `thread`.
  void RunPart(int part, int thread) const;
  void WorkerMain(int index);
  void PinCaller();  // pins the calling thread to cpus_[0], once per calling thread

  const int num_threads_;
  const std::vector<int> cpus_;
  std::atomic<bool> pinned_{false};  // every worker thread pinned (settled before any job)
  std::thread::id pinned_caller_;    // the caller thread pinned so far, if any
  // (generation << 8) | threads of the latest job; a generation with 0 threads: stop.
  std::atomic<uint32_t> epoch_{1u << 8};
  // Thread t's run of the current job: (generation << 32) | (first unclaimed part << 16) | end of
  // the run. Its owner claims from the front, others from the back; a claim only succeeds for the
  // generation the claimer woke for, so a late worker never touches a newer job's fields.
  struct alignas(64) PartRange {
    std::atomic<uint64_t> word{0};
  };
  PartRange ranges_[kMaxThreads];
  alignas(64) std::atomic<int> done_{0};  // parts of the current job finished
  // The current job, written before its generation is published.
  PartFn job_fn_ = nullptr;
  const void* job_ctx_ = nullptr;
  int job_items_ = 0;
  int job_parts_ = 0;
  std::vector<std::thread> workers_;  // threads 1 .. num_threads - 1
};

template <typename Body>
void ThreadPool::ParallelFor(int n_items, int threads, Partition partition, const Body& body) {
  if (n_items <= 0) return;
  if (!cpus_.empty() && pinned_caller_ != std::this_thread::get_id()) PinCaller();
  int n = threads < num_threads_ ? threads : num_threads_;
  if (n > n_items) n = n_items;
  if (n <= 1) {
    body(kernels::RowRange{0, n_items}, 0);
    return;
  }
  int parts = partition == Partition::kStaticRows ? n : kMaxThreads;
  if (parts > n_items) parts = n_items;
  Run(n_items, parts, n, &RunPart<Body>, &body);
}

}  // namespace smallmind::worker
