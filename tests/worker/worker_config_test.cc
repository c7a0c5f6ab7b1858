// The worker's command line: --kv-dtype takes f16 (the default), q8 or f32, any case, and refuses
// the rest with a message naming the choices.
#include "worker/worker_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smallmind::worker {
namespace {

shared::Result<WorkerConfig> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "smallmind-worker");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return ParseWorkerFlags(static_cast<int>(argv.size()), argv.data());
}

TEST(WorkerConfigTest, KvDTypeDefaultsToHalvesAndTakesFloats) {
  auto def = Parse({"--model", "builtin:tiny"});
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_EQ(def->kv.dtype, kernels::KvType::kF16);
  auto f32 = Parse({"--model", "builtin:tiny", "--kv-dtype", "f32"});
  ASSERT_TRUE(f32.ok()) << f32.status().ToString();
  EXPECT_EQ(f32->kv.dtype, kernels::KvType::kF32);
  auto f16 = Parse({"--model", "builtin:tiny", "--kv-dtype", "F16"});
  ASSERT_TRUE(f16.ok()) << f16.status().ToString();
  EXPECT_EQ(f16->kv.dtype, kernels::KvType::kF16);
  auto q8 = Parse({"--model", "builtin:tiny", "--kv-dtype", "q8"});
  ASSERT_TRUE(q8.ok()) << q8.status().ToString();
  EXPECT_EQ(q8->kv.dtype, kernels::KvType::kQ8);
}

TEST(WorkerConfigTest, AnUnknownKvDTypeIsRefusedWithTheChoices) {
  auto bad = Parse({"--model", "builtin:tiny", "--kv-dtype", "q4"});
  ASSERT_FALSE(bad.ok());
  const std::string m = bad.status().message();
  EXPECT_NE(m.find("--kv-dtype"), std::string::npos) << m;
  EXPECT_NE(m.find("f16"), std::string::npos) << m;
  EXPECT_NE(m.find("q8"), std::string::npos) << m;
}

}  // namespace
}  // namespace smallmind::worker
