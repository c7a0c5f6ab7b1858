// The worker's KV pool in its shared-memory segment, in process: the segment stays within
// --kv-memory-mb, a second worker cannot take a live worker's segment, and Shutdown plus
// destruction remove it.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <string>

#include "shared/kv_segment_layout.h"
#include "shared/shm_segment.h"
#include "tests/testing/scoped_temp_dir.h"
#include "worker/modelgen/model_generator.h"
#include "worker/worker.h"

namespace smallmind::worker {
namespace {

using shared::ShmSegment;

struct SegmentGuard {
  SegmentGuard() {
    static std::atomic<int> counter{0};
    name = "smallmind-test-worker-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  }
  ~SegmentGuard() { ShmSegment::Remove(name); }
  std::string name;
};

WorkerConfig Config(const testing::ScopedTempDir& dir, const std::string& socket,
                    const std::string& segment) {
  WorkerConfig c;
  c.model.model = "builtin:tiny";
  c.listen = "unix:" + dir.File(socket);
  c.threads = 1;
  c.kv.memory_mb = 2;
  c.kv.segment = segment;
  return c;
}

TEST(WorkerKvTest, TheSegmentStaysWithinTheMemoryBudgetAndIsRemovedOnShutdown) {
  testing::ScopedTempDir dir("wkv");
  SegmentGuard seg;
  {
    Worker worker(Config(dir, "a.sock", seg.name));
    const shared::Status started = worker.Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    struct stat st;
    ASSERT_EQ(::stat(ShmSegment::PathOf(seg.name).c_str(), &st), 0);
    EXPECT_LE(st.st_size, 2 << 20);
    EXPECT_GT(st.st_size, 1 << 20) << "the budget is used, not wasted";
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    worker.Shutdown();
  }
  EXPECT_FALSE(ShmSegment::Exists(seg.name));
}

// The header of a live worker's segment, read from its file.
shared::KvSegmentHeader ReadHeader(const std::string& name) {
  shared::KvSegmentHeader h{};
  std::ifstream in(ShmSegment::PathOf(name), std::ios::binary);
  in.read(reinterpret_cast<char*>(&h), sizeof(h));
  EXPECT_TRUE(in.good()) << ShmSegment::PathOf(name);
  return h;
}

// --kv-dtype: halves (the default) hold twice the blocks of floats in the same budget, and the
// segment header says which the blocks hold (a successor of another dtype discards them).
TEST(WorkerKvTest, AHalfCacheHoldsTwiceTheBlocksOfAFloatCache) {
  testing::ScopedTempDir dir("wkv");
  uint32_t blocks[2] = {};
  for (kernels::KvType type : {kernels::KvType::kF16, kernels::KvType::kF32}) {
    SegmentGuard seg;
    WorkerConfig c = Config(dir, "a.sock", seg.name);
    c.kv.memory_mb = 4;
    c.kv.dtype = type;
    Worker worker(c);
    const shared::Status started = worker.Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    const shared::KvSegmentHeader h = ReadHeader(seg.name);
    EXPECT_EQ(h.geometry.dtype, static_cast<uint32_t>(type));
    blocks[type == kernels::KvType::kF16 ? 0 : 1] = h.geometry.block_count;
    worker.Shutdown();
  }
  EXPECT_EQ(WorkerConfig().kv.dtype, kernels::KvType::kF16);
  EXPECT_GT(blocks[1], 0u);
  EXPECT_GE(blocks[0], 2 * blocks[1] * 9 / 10) << blocks[0] << " vs " << blocks[1];
}

// --kv-dtype q8: 8-bit rows (1.125 bytes a value) hold 16/9 the blocks of halves in the same
// budget, and the header says q8; a model whose heads are not a multiple of 32 dims (builtin:tiny
// has 16) is refused at start with a message naming the fix, leaving no segment behind.
TEST(WorkerKvTest, AQ8CacheHoldsMoreBlocksAndNeedsHeadsOf32) {
  testing::ScopedTempDir dir("wkv");
  GeneratorOptions heads32;  // tiny with 2 heads of 32 dims
  heads32.n_heads = 2;
  heads32.n_kv_heads = 2;
  const std::string model = dir.File("heads32.gguf");
  ASSERT_TRUE(WriteGeneratedModel(heads32, model).ok());
  uint32_t blocks[2] = {};
  for (kernels::KvType type : {kernels::KvType::kF16, kernels::KvType::kQ8}) {
    SegmentGuard seg;
    WorkerConfig c = Config(dir, "a.sock", seg.name);
    c.model.model = model;
    c.kv.memory_mb = 4;
    c.kv.dtype = type;
    Worker worker(c);
    const shared::Status started = worker.Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    EXPECT_EQ(ReadHeader(seg.name).geometry.dtype, static_cast<uint32_t>(type));
    blocks[type == kernels::KvType::kF16 ? 0 : 1] = ReadHeader(seg.name).geometry.block_count;
    worker.Shutdown();
  }
  EXPECT_GT(blocks[0], 0u);
  EXPECT_GE(blocks[1] * 9, blocks[0] * 16 * 9 / 10) << blocks[1] << " vs " << blocks[0];

  SegmentGuard seg;
  WorkerConfig tiny = Config(dir, "b.sock", seg.name);
  tiny.kv.dtype = kernels::KvType::kQ8;
  Worker worker(tiny);
  const shared::Status started = worker.Start();
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.message().find("--kv-dtype q8"), std::string::npos) << started.ToString();
  EXPECT_NE(started.message().find("16 dims"), std::string::npos) << started.ToString();
  struct stat st;
  EXPECT_NE(stat(ShmSegment::PathOf(seg.name).c_str(), &st), 0) << "a refused start left a segment";
}

TEST(WorkerKvTest, ASecondWorkerCannotTakeALiveWorkersSegment) {
  testing::ScopedTempDir dir("wkv");
  SegmentGuard seg;
  Worker first(Config(dir, "a.sock", seg.name));
  ASSERT_TRUE(first.Start().ok());
  Worker second(Config(dir, "b.sock", seg.name));
  const shared::Status s = second.Start();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("in use"), std::string::npos) << s.ToString();
  EXPECT_TRUE(ShmSegment::Exists(seg.name)) << "the live worker keeps its segment";
}

}  // namespace
}  // namespace smallmind::worker
