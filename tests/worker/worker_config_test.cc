// The worker's command line: --kv-dtype takes f16 (the default), q8 or f32, any case, and refuses
// the rest with a message naming the choices; --isa takes best (the default) or a kernel set this
// CPU runs, and refuses one it does not run, naming the best it has.
#include "worker/worker_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/dispatch.h"

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

// The draft-length controller's costs: a draft step defaults to the weights' ratio (-1 until the
// draft model is loaded), a verified draft to 0.2 of a decode step; both may be set.
TEST(WorkerConfigTest, SpeculationCostsDefaultAndMayBeSet) {
  auto def = Parse({"--model", "builtin:tiny"});
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_LT(def->draft_step_cost, 0.0);
  EXPECT_DOUBLE_EQ(def->scheduler.speculation.draft.verify_token_cost, 0.2);
  auto set =
      Parse({"--model", "builtin:tiny", "--spec-draft-cost", "0.1", "--spec-verify-cost", "0.45"});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_DOUBLE_EQ(set->draft_step_cost, 0.1);
  EXPECT_DOUBLE_EQ(set->scheduler.speculation.draft.verify_token_cost, 0.45);
  auto bad = Parse({"--model", "builtin:tiny", "--spec-verify-cost", "-1"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--spec-verify-cost"), std::string::npos);
}

TEST(WorkerConfigTest, AnUnknownKvDTypeIsRefusedWithTheChoices) {
  auto bad = Parse({"--model", "builtin:tiny", "--kv-dtype", "q4"});
  ASSERT_FALSE(bad.ok());
  const std::string m = bad.status().message();
  EXPECT_NE(m.find("--kv-dtype"), std::string::npos) << m;
  EXPECT_NE(m.find("f16"), std::string::npos) << m;
  EXPECT_NE(m.find("q8"), std::string::npos) << m;
}

TEST(WorkerConfigTest, IsaDefaultsToTheBestAndTakesTheSetsThisCpuRuns) {
  auto def = Parse({"--model", "builtin:tiny"});
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_EQ(def->isa, kernels::Isa::kBest);
  for (kernels::Isa isa : {kernels::Isa::kRef, kernels::Isa::kAvx2, kernels::Isa::kAvxVnni,
                           kernels::Isa::kAvx512, kernels::Isa::kAmx}) {
    const std::string name = kernels::IsaName(isa);
    auto parsed = Parse({"--model", "builtin:tiny", "--isa", name});
    if (kernels::CpuSupports(isa)) {
      ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.status().ToString();
      EXPECT_EQ(parsed->isa, isa) << name;
    } else {
      ASSERT_FALSE(parsed.ok()) << name;
      const std::string m = parsed.status().message();
      EXPECT_NE(m.find("this CPU does not run it"), std::string::npos) << m;
      EXPECT_NE(m.find(kernels::IsaName(kernels::BestIsa())), std::string::npos) << m;
    }
  }
}

TEST(WorkerConfigTest, AnUnknownIsaIsRefusedWithTheChoices) {
  auto bad = Parse({"--model", "builtin:tiny", "--isa", "sse4"});
  ASSERT_FALSE(bad.ok());
  const std::string m = bad.status().message();
  EXPECT_NE(m.find("--isa"), std::string::npos) << m;
  EXPECT_NE(m.find("avx512"), std::string::npos) << m;
}

}  // namespace
}  // namespace smallmind::worker
