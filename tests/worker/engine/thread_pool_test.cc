#include "worker/engine/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "shared/cpu_topology.h"

namespace smallmind::worker {
namespace {

using kernels::RowRange;

// The parts of a kStaticRows op are exactly the StaticRows split over the threads used, whichever
// thread ends up running each one.
TEST(ThreadPoolTest, StaticRowsRunsExactlyTheStaticRowsParts) {
  ThreadPool pool(3, {});
  for (int n_items : {1, 2, 3, 10, 101}) {
    for (int threads : {1, 2, 3, 5}) {
      const int used = std::min({threads, 3, n_items});
      std::mutex mu;
      std::vector<std::pair<int, int>> got;
      pool.ParallelFor(n_items, threads, Partition::kStaticRows, [&](RowRange r, int thread) {
        EXPECT_LT(thread, used);
        std::lock_guard<std::mutex> lock(mu);
        got.emplace_back(r.begin, r.end);
      });
      std::vector<std::pair<int, int>> want;
      for (int t = 0; t < used; t++) {
        const RowRange r = kernels::StaticRows(n_items, used, t);
        want.emplace_back(r.begin, r.end);
      }
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want) << n_items << " items, " << threads << " threads";
    }
  }
}

// The dynamic split cuts the items into as many parts as the claim mask holds (fewer when there
// are fewer items), so a thread that was slowed leaves only a small part behind.
TEST(ThreadPoolTest, DynamicCoversEveryItemExactlyOnceInUpToMaxThreadsParts) {
  ThreadPool pool(3, {});
  for (int n_items : {1, 7, 64, 1000}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n_items));
    std::atomic<int> parts{0};
    pool.ParallelFor(n_items, 3, Partition::kDynamic, [&](RowRange r, int thread) {
      EXPECT_LT(thread, 3);
      parts.fetch_add(1);
      for (int i = r.begin; i < r.end; i++) hits[i].fetch_add(1);
    });
    for (int i = 0; i < n_items; i++) EXPECT_EQ(hits[i].load(), 1) << "item " << i;
    EXPECT_EQ(parts.load(), std::min(n_items, ThreadPool::kMaxThreads)) << n_items << " items";
  }
}

// Each thread of a dynamic split walks its own run of consecutive parts upward from the run's
// start (so its rows, and a matmul's weight stream, are consecutive), and takes what is left of
// the others' runs from the far end downward, whatever the timing of the threads.
TEST(ThreadPoolTest, DynamicThreadsWalkTheirOwnRunUpwardAndTakeOthersPartsFromTheFarEnd) {
  for (int n_threads : {2, 3, 4}) {
    ThreadPool pool(n_threads, {});
    constexpr int kParts = ThreadPool::kMaxThreads, kItemsPerPart = 3;
    for (int rep = 0; rep < 200; rep++) {
      std::vector<std::vector<int>> ran(static_cast<size_t>(n_threads));  // [thread] parts
      pool.ParallelFor(kParts * kItemsPerPart, n_threads, Partition::kDynamic,
                       [&](RowRange r, int thread) {
                         ran[thread].push_back(r.begin / kItemsPerPart);
                         if (thread == 1 && rep % 2 == 1) std::this_thread::yield();  // vary timing
                       });
      std::vector<int> all;
      for (int t = 0; t < n_threads; t++) {
        const int begin = t * kParts / n_threads, end = (t + 1) * kParts / n_threads;
        std::vector<int> own, others;
        for (int p : ran[t]) (p >= begin && p < end ? own : others).push_back(p);
        for (size_t i = 0; i < own.size(); i++) {
          ASSERT_EQ(own[i], begin + static_cast<int>(i))
              << "thread " << t << " of " << n_threads << ", rep " << rep;
        }
        // Its own parts come before the others' it takes, which go downward.
        ASSERT_TRUE(std::equal(own.begin(), own.end(), ran[t].begin())) << "thread " << t;
        ASSERT_TRUE(std::is_sorted(others.rbegin(), others.rend())) << "thread " << t;
        all.insert(all.end(), ran[t].begin(), ran[t].end());
      }
      std::sort(all.begin(), all.end());
      ASSERT_EQ(all.size(), static_cast<size_t>(kParts));
      for (int p = 0; p < kParts; p++) ASSERT_EQ(all[p], p);
    }
  }
}

// The thread argument names the OS thread running the part (0: the caller), always the same one.
TEST(ThreadPoolTest, ThreadIndexAlwaysNamesTheSameOsThreadAndZeroIsTheCaller) {
  ThreadPool pool(4, {});
  std::mutex mu;
  std::map<int, std::set<std::thread::id>> ids;
  for (int op = 0; op < 200; op++) {
    pool.ParallelFor(8, 4, op % 2 ? Partition::kDynamic : Partition::kStaticRows,
                     [&](RowRange, int thread) {
                       std::lock_guard<std::mutex> lock(mu);
                       ids[thread].insert(std::this_thread::get_id());
                     });
  }
  ASSERT_TRUE(ids.count(0));
  EXPECT_EQ(ids[0], std::set<std::thread::id>{std::this_thread::get_id()});
  std::set<std::thread::id> all;
  for (const auto& [thread, set] : ids) {
    EXPECT_LT(thread, 4);
    EXPECT_EQ(set.size(), 1u) << "thread index " << thread;
    all.insert(set.begin(), set.end());
  }
  EXPECT_EQ(all.size(), ids.size()) << "two indices shared an OS thread";
}

TEST(ThreadPoolTest, ManyConsecutiveOpsWithVaryingThreadCountsAllComplete) {
  ThreadPool pool(3, {});
  std::atomic<long> sum{0};
  long want = 0;
  for (int op = 0; op < 20000; op++) {
    const int threads = 1 + op % 3;
    const int n = 1 + op % 17;
    pool.ParallelFor(n, threads, op % 2 ? Partition::kDynamic : Partition::kStaticRows,
                     [&](RowRange r, int) {
                       for (int i = r.begin; i < r.end; i++) sum.fetch_add(i);
                     });
    want += static_cast<long>(n) * (n - 1) / 2;
  }
  EXPECT_EQ(sum.load(), want);
}

TEST(ThreadPoolTest, PinsItsThreadsWhenGivenAllowedCpus) {
  const std::vector<int> cpus = shared::AllowedCpus();
  ASSERT_FALSE(cpus.empty());
  std::mutex mu;
  std::vector<std::pair<int, int>> thread_cpu;  // (thread index, CPU it ran on)
  // A thread of its own plays the engine thread, so the test's main thread stays unpinned.
  std::thread engine_thread([&] {
    ThreadPool pool(2, cpus);
    EXPECT_TRUE(pool.pinned());
    for (int op = 0; op < 50; op++) {
      pool.ParallelFor(2, 2, Partition::kStaticRows, [&](RowRange, int thread) {
        std::lock_guard<std::mutex> lock(mu);
        thread_cpu.emplace_back(thread, sched_getcpu());
      });
    }
  });
  engine_thread.join();
  ASSERT_EQ(thread_cpu.size(), 100u);
  for (const auto& [thread, cpu] : thread_cpu) {
    EXPECT_EQ(cpu, cpus[static_cast<size_t>(thread) % cpus.size()]) << "thread " << thread;
  }
  ThreadPool unpinned(2, {});
  EXPECT_FALSE(unpinned.pinned());
}

}  // namespace
}  // namespace smallmind::worker
