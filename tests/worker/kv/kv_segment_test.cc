#include "worker/kv/kv_segment.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "worker/kv/block_hash.h"
#include "worker/kv/block_pool.h"

namespace smallmind::worker {
namespace {

using shared::ShmSegment;

shared::KvGeometry Geometry(uint32_t blocks = 8) {
  shared::KvGeometry g;
  g.block_size = 4;
  g.n_layers = 2;
  g.n_kv_heads = 2;
  g.head_dim = 4;
  g.dtype = static_cast<uint32_t>(shared::KvDType::kF32);
  g.block_count = blocks;
  return g;
}

struct NameGuard {
  NameGuard() {
    static std::atomic<int> counter{0};
    name = "smallmind-test-kvseg-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  }
  ~NameGuard() { ShmSegment::Remove(name); }
  std::string name;
};

KvSegmentSpec Spec(const std::string& name, uint64_t fingerprint = 77,
                   shared::KvGeometry g = Geometry()) {
  return KvSegmentSpec{name, g, fingerprint};
}

// In a child process: opens the segment, fills block 0 (K/V data and tokens) and seals it as the
// first block of a chain under `root`, leaves block 1 half written, then dies by SIGKILL, so
// nothing is cleaned up: what a crashed worker leaves behind.
// The data of an f32 segment (the geometry these tests use) as floats.
std::span<float> Floats(std::span<std::byte> data) {
  return {reinterpret_cast<float*>(data.data()), data.size() / sizeof(float)};
}

void CrashAfterSealingOneBlock(const std::string& name, uint64_t root) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto seg = KvSegment::Open(Spec(name));
    if (!seg.ok()) _exit(3);
    BlockPool pool((*seg)->meta(), (*seg)->tokens(), 4);
    const int32_t b0 = *pool.Allocate();
    const int32_t b1 = *pool.Allocate();
    const std::span<float> data = Floats((*seg)->data());
    const size_t per_block = data.size() / 8;
    for (size_t i = 0; i < per_block; ++i) data[b0 * per_block + i] = 1.5f + i;
    const std::vector<TokenId> t = {5, 6, 7, 8};
    pool.Seal(b0, root, KvBlockHash(root, t), t);
    pool.SetTokenCount(b1, 2);
    raise(SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
}

TEST(KvSegmentTest, OpenCreatesASealedHeaderInA0600SegmentRemovedOnDestruction) {
  NameGuard g;
  {
    auto seg = KvSegment::Open(Spec(g.name));
    ASSERT_TRUE(seg.ok()) << seg.status().ToString();
    EXPECT_TRUE((*seg)->in_shared_memory());
    EXPECT_FALSE((*seg)->reattached());
    EXPECT_EQ((*seg)->discard_reason(), "");
    EXPECT_EQ(shared::KvSegmentMismatch(&(*seg)->header(), (*seg)->bytes(), Geometry(), 77), "");
    EXPECT_EQ((*seg)->header().owner_pid, static_cast<uint32_t>(getpid()));
    EXPECT_EQ((*seg)->meta().size(), 8u);
    EXPECT_EQ((*seg)->tokens().size(), 32u);
    EXPECT_EQ((*seg)->data().size(),
              8u * 2 * 2 * 4 * 8 * sizeof(float));  // blocks x layers x K,V x slots x dim
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*seg)->data().data()) % 4096, 0u);
    EXPECT_TRUE((*seg)->Reserve().ok());
    struct stat st;
    ASSERT_EQ(stat(ShmSegment::PathOf(g.name).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
  EXPECT_FALSE(ShmSegment::Exists(g.name));
}

TEST(KvSegmentTest, ASuccessorReattachesACrashedOwnersSegmentAndKeepsItsSealedBlocks) {
  NameGuard g;
  const uint64_t root = KvChainRoot(77, 1);
  CrashAfterSealingOneBlock(g.name, root);
  ASSERT_TRUE(ShmSegment::Exists(g.name));
  auto seg = KvSegment::Open(Spec(g.name));
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  EXPECT_TRUE((*seg)->reattached());
  EXPECT_EQ((*seg)->header().owner_pid, static_cast<uint32_t>(getpid()));
  const uint64_t roots[] = {root};
  BlockPool pool((*seg)->meta(), (*seg)->tokens(), 4, roots);
  EXPECT_EQ(pool.restore_report().kept, 1);
  EXPECT_EQ(pool.restore_report().dropped_incomplete, 1);
  const std::vector<TokenId> t = {5, 6, 7, 8};
  const int32_t b0 = pool.FindSealed(KvBlockHash(root, t), t);
  ASSERT_GE(b0, 0);
  const std::span<float> data = Floats((*seg)->data());
  const size_t per_block = data.size() / 8;
  EXPECT_EQ(data[b0 * per_block + 3], 4.5f);  // the K/V bytes survived too
}

// The takeover: a crashed worker's sealed segment made world-readable (as one planted by
// another user would be) was reattached as a warm restart. Now the successor refuses it, naming
// the segment, and leaves its bytes alone.
TEST(KvSegmentTest, ASegmentOthersCanReadIsNotReattached) {
  NameGuard g;
  CrashAfterSealingOneBlock(g.name, KvChainRoot(77, 1));
  ASSERT_EQ(::chmod(ShmSegment::PathOf(g.name).c_str(), 0666), 0);
  auto seg = KvSegment::Open(Spec(g.name));
  ASSERT_FALSE(seg.ok());
  EXPECT_EQ(seg.status().code(), shared::StatusCode::kFailedPrecondition);
  EXPECT_NE(seg.status().message().find("refusing to use it"), std::string::npos)
      << seg.status().message();
  EXPECT_TRUE(ShmSegment::Exists(g.name));
}

TEST(KvSegmentTest, AnotherModelsSegmentIsDiscardedAndRecreatedWithTheReason) {
  NameGuard g;
  CrashAfterSealingOneBlock(g.name, KvChainRoot(77, 1));
  auto seg = KvSegment::Open(Spec(g.name, /*fingerprint=*/78));
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  EXPECT_FALSE((*seg)->reattached());
  EXPECT_NE((*seg)->discard_reason().find("another model"), std::string::npos)
      << (*seg)->discard_reason();
  EXPECT_EQ((*seg)->header().model_fingerprint, 78u);
  for (const shared::KvBlockMeta& m : (*seg)->meta()) EXPECT_EQ(m.seal, 0u);
}

TEST(KvSegmentTest, OtherGeometryIsDiscardedAndRecreatedAtTheNewSize) {
  NameGuard g;
  CrashAfterSealingOneBlock(g.name, KvChainRoot(77, 1));
  auto seg = KvSegment::Open(Spec(g.name, 77, Geometry(16)));
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  EXPECT_FALSE((*seg)->reattached());
  EXPECT_NE((*seg)->discard_reason().find("geometry"), std::string::npos);
  EXPECT_EQ((*seg)->meta().size(), 16u);
  struct stat st;
  ASSERT_EQ(stat(ShmSegment::PathOf(g.name).c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), (*seg)->bytes());
}

TEST(KvSegmentTest, ASegmentWithABadMagicOrVersionIsDiscarded) {
  for (int variant = 0; variant < 2; ++variant) {
    NameGuard g;
    CrashAfterSealingOneBlock(g.name, KvChainRoot(77, 1));
    {
      auto raw = ShmSegment::Attach(g.name);
      ASSERT_TRUE(raw.ok());
      auto* h = static_cast<shared::KvSegmentHeader*>((*raw)->data());
      if (variant == 0) {
        h->magic = 0;
      } else {
        h->layout_version = 0;
        h->header_seal = shared::KvHeaderSeal(*h);
      }
      (*raw)->set_remove_on_close(false);
    }
    auto seg = KvSegment::Open(Spec(g.name));
    ASSERT_TRUE(seg.ok());
    EXPECT_FALSE((*seg)->reattached());
    EXPECT_NE((*seg)->discard_reason().find(variant == 0 ? "magic" : "layout version 0"),
              std::string::npos)
        << (*seg)->discard_reason();
  }
}

TEST(KvSegmentTest, ASegmentInUseByALiveWorkerIsNotTaken) {
  NameGuard g;
  auto first = KvSegment::Open(Spec(g.name));
  ASSERT_TRUE(first.ok());
  auto second = KvSegment::Open(Spec(g.name));
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("in use"), std::string::npos);
  EXPECT_TRUE(ShmSegment::Exists(g.name));  // the live one is untouched
}

TEST(KvSegmentTest, WithNoNameTheSameLayoutLivesOnTheHeap) {
  auto seg = KvSegment::Open(Spec(""));
  ASSERT_TRUE(seg.ok());
  EXPECT_FALSE((*seg)->in_shared_memory());
  EXPECT_EQ(shared::KvSegmentMismatch(&(*seg)->header(), (*seg)->bytes(), Geometry(), 77), "");
  // blocks x layers x K,V x slots x dim floats
  EXPECT_EQ((*seg)->data().size(), 8u * 2 * 2 * 4 * 8 * sizeof(float));
  for (float v : Floats((*seg)->data())) ASSERT_EQ(v, 0.0f);
}

TEST(KvSegmentTest, NamesComeFromTheFlagOrTheListenAddress) {
  EXPECT_EQ(KvSegmentNameFor("smallmind-1-abc-w0", "unix:/x"), "smallmind-1-abc-w0");
  EXPECT_EQ(KvSegmentNameFor("none", "unix:/x"), "");
  EXPECT_EQ(KvSegmentNameFor("", "unix:/tmp/w.sock"), "smallmind-kv-unix-tmp-w.sock");
  EXPECT_EQ(KvSegmentNameFor("", "0.0.0.0:50052"), "smallmind-kv-0.0.0.0-50052");
  const std::string long_path = "unix:/" + std::string(300, 'd') + "/w.sock";
  const std::string name = KvSegmentNameFor("", long_path);
  EXPECT_TRUE(ShmSegment::CheckName(name).ok()) << name;
  EXPECT_NE(name, KvSegmentNameFor("", long_path + "2"));
  for (const std::string listen : {"unix:/a/b", "[::1]:5", "host-name:7"}) {
    EXPECT_TRUE(ShmSegment::CheckName(KvSegmentNameFor("", listen)).ok()) << listen;
  }
}

}  // namespace
}  // namespace smallmind::worker
