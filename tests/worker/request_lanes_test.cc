// RequestLanes: a huge request's work never holds up a small one's, and Stop runs what was queued.
#include "worker/request_lanes.h"

#include <atomic>
#include <chrono>
#include <future>
#include <vector>

#include <gtest/gtest.h>

namespace smallmind::worker {
namespace {

// Bounds the waits, so a broken lane fails the test instead of hanging it (not a timing assert:
// each job takes microseconds).
constexpr std::chrono::seconds kBound{30};

TEST(RequestLanesTest, ASmallJobRunsWhileTheLargeLaneIsBusy) {
  RequestLanes lanes;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> large_started;
  lanes.Post(RequestLanes::kLargeBytes, [&] {
    large_started.set_value();
    released.wait();  // a 7 MB prompt still tokenizing
  });
  ASSERT_EQ(large_started.get_future().wait_for(kBound), std::future_status::ready);
  std::promise<void> small_done;
  lanes.Post(100, [&] { small_done.set_value(); });
  EXPECT_EQ(small_done.get_future().wait_for(kBound), std::future_status::ready)
      << "the small job waited for the large one";
  release.set_value();
}

TEST(RequestLanesTest, JobsOfOneLaneRunInOrder) {
  RequestLanes lanes;
  std::vector<int> order;  // written by the small lane's thread only
  std::promise<void> done;
  for (int i = 0; i < 50; ++i) lanes.Post(10, [&order, i] { order.push_back(i); });
  lanes.Post(10, [&] { done.set_value(); });
  ASSERT_EQ(done.get_future().wait_for(kBound), std::future_status::ready);
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[i], i);
}

TEST(RequestLanesTest, StopRunsTheQueuedJobsAndLaterPostsRunInline) {
  std::atomic<int> ran{0};
  RequestLanes lanes;
  for (int i = 0; i < 20; ++i) lanes.Post(i % 2 ? RequestLanes::kLargeBytes : 1, [&] { ++ran; });
  lanes.Stop();
  EXPECT_EQ(ran.load(), 20);
  lanes.Post(1, [&] { ++ran; });
  EXPECT_EQ(ran.load(), 21) << "a job posted after Stop must still run (its reactor waits)";
  lanes.Stop();  // idempotent
}

}  // namespace
}  // namespace smallmind::worker
