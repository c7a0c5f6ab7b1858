#include "gateway/models/model_residency.h"

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gateway/admission/validate.h"
#include "tests/testing/scoped_temp_dir.h"

namespace smallmind::gateway {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kLoadTimeout{60000};

// A request's side of a gate: its one answer, for the test thread to wait on.
struct Waiter : AdmissionWaiter {
  void OnAdmitted(AdmissionAnswer answer) override { answer_.set_value(answer.status); }
  std::promise<shared::Status> answer_;
};

ValidatedRequest Request() {
  smallmind::v1::GenerateRequest request;
  request.set_prompt("hi");
  return *Validate(request, "residency-test");
}

// Real smallmind-worker processes on builtin:tiny (1 worker, 1 thread, a 16 MiB KV pool each),
// so that the estimate of one model is exactly 16 MiB.
class ModelResidencyTest : public ::testing::Test {
 protected:
  std::unique_ptr<ModelResidency> Make(const std::vector<std::string>& models, uint64_t budget_mb,
                                       KeepAlive keep_alive) {
    auto catalog = ModelCatalog::FromFlags(models, "", {});
    EXPECT_TRUE(catalog.ok()) << catalog.status().message();
    ResidencyOptions options;
    options.memory_budget_bytes = budget_mb << 20;
    options.keep_alive = keep_alive;
    options.workers = 1;
    options.supervisor.runtime_dir = dir_.path();
    options.supervisor.threads_per_worker = 1;
    options.supervisor.worker_flags = {"--kv-memory-mb", "16"};
    options.supervisor.stop_grace = milliseconds(5000);
    options.pool.poll_interval = milliseconds(100);
    return std::make_unique<ModelResidency>(std::move(*catalog), options);
  }

  testing::ScopedTempDir dir_;
};

TEST_F(ModelResidencyTest, LoadsOnFirstUseAndUnloadsTheLeastRecentlyUsedOverTheBudget) {
  auto residency = Make({"a=builtin:tiny", "b=builtin:tiny"}, 20, KeepAlive::Forever());
  EXPECT_EQ(residency->Status(0).estimated_bytes, 16u << 20);
  residency->Start();
  EXPECT_EQ(residency->Status(0).state, ModelState::kUnloaded);
  { ModelResidency::Use use = residency->Touch(0); }
  ASSERT_TRUE(residency->WaitForState(0, ModelState::kLoaded, kLoadTimeout));
  EXPECT_EQ(residency->pool(0)->HealthyCount(), 1u);
  ASSERT_TRUE(residency->Status(0).info.has_value());
  EXPECT_EQ(residency->Status(0).info->model(), "builtin:tiny");
  // b does not fit beside a: a (idle) goes first.
  { ModelResidency::Use use = residency->Touch(1); }
  ASSERT_TRUE(residency->WaitForState(1, ModelState::kLoaded, kLoadTimeout));
  EXPECT_EQ(residency->Status(0).state, ModelState::kUnloaded);
  EXPECT_EQ(residency->pool(0)->size(), 0u);
  residency->Stop();
  EXPECT_EQ(residency->pool(1)->size(), 1u);  // the pool stays; its worker process is gone
}

TEST_F(ModelResidencyTest, ARequestWaitingAtTheGateIsAdmittedOnceItsModelLoaded) {
  auto residency = Make({"a=builtin:tiny"}, 0, KeepAlive::Forever());
  residency->Start();
  Waiter waiter;
  std::future<shared::Status> answer = waiter.answer_.get_future();
  {
    ModelResidency::Use use = residency->Touch(0);
    residency->gate(0)->Enter(&waiter, Request(), std::chrono::system_clock::time_point::max());
  }
  ASSERT_EQ(answer.wait_for(kLoadTimeout), std::future_status::ready);
  EXPECT_TRUE(answer.get().ok());
  EXPECT_EQ(residency->Status(0).state, ModelState::kLoaded);
  residency->gate(0)->Leave(&waiter, std::nullopt);
}

TEST_F(ModelResidencyTest, KeepAliveZeroUnloadsAsSoonAsIdle) {
  auto residency = Make({"a=builtin:tiny"}, 0, KeepAlive::Forever());
  residency->Start();
  { ModelResidency::Use use = residency->Touch(0); }
  ASSERT_TRUE(residency->WaitForState(0, ModelState::kLoaded, kLoadTimeout));
  // A request's keep_alive replaces the model's: 0 unloads it once nothing is in flight.
  { ModelResidency::Use use = residency->Touch(0, KeepAlive{milliseconds(0)}); }
  ASSERT_TRUE(residency->WaitForState(0, ModelState::kUnloaded, kLoadTimeout));
  EXPECT_EQ(residency->Status(0).keep_alive.duration, milliseconds(0));
}

TEST_F(ModelResidencyTest, AModelLargerThanTheBudgetFailsItsRequestsUnavailable) {
  auto residency = Make({"big=builtin:tiny,kv-memory-mb=64"}, 20, KeepAlive::Forever());
  residency->Start();
  Waiter waiter;
  std::future<shared::Status> answer = waiter.answer_.get_future();
  {
    ModelResidency::Use use = residency->Touch(0);
    residency->gate(0)->Enter(&waiter, Request(), std::chrono::system_clock::time_point::max());
  }
  ASSERT_EQ(answer.wait_for(kLoadTimeout), std::future_status::ready);
  const shared::Status status = answer.get();
  EXPECT_EQ(status.code(), shared::StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("more than --memory-budget 20 MiB"), std::string::npos)
      << status.message();
  EXPECT_EQ(residency->Status(0).state, ModelState::kUnloaded);
}

TEST_F(ModelResidencyTest, LoadNowRefusesAModelLargerThanTheBudget) {
  auto residency = Make({"big=builtin:tiny,kv-memory-mb=64"}, 20, KeepAlive::Forever());
  const shared::Status status = residency->LoadNow(0);
  EXPECT_EQ(status.code(), shared::StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("it needs about 64 MiB"), std::string::npos) << status.message();
  EXPECT_EQ(residency->Status(0).state, ModelState::kUnloaded);
  EXPECT_EQ(residency->pool(0)->size(), 0u);
}

TEST_F(ModelResidencyTest, ALoadThatFailsAnswersUnavailableWithTheReason) {
  auto residency = Make({"gone=" + dir_.File("missing.gguf")}, 0, KeepAlive::Forever());
  residency->Start();
  Waiter waiter;
  std::future<shared::Status> answer = waiter.answer_.get_future();
  {
    ModelResidency::Use use = residency->Touch(0);
    residency->gate(0)->Enter(&waiter, Request(), std::chrono::system_clock::time_point::max());
  }
  ASSERT_EQ(answer.wait_for(kLoadTimeout), std::future_status::ready);
  const shared::Status status = answer.get();
  EXPECT_EQ(status.code(), shared::StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("the model `gone` could not be loaded"), std::string::npos)
      << status.message();
  EXPECT_FALSE(residency->Status(0).last_error.empty());
}

}  // namespace
}  // namespace smallmind::gateway
