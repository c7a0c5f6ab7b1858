#include "worker/model/weights.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/testing/scoped_temp_dir.h"
#include "worker/modelgen/builtin_tiny.h"

namespace smallmind::worker {
namespace {

TEST(WeightsTest, AllocatedStorageIsZeroedAlignedAndKeepsItsBytesWhenMoved) {
  WeightStorage a = WeightStorage::Allocate(1000);
  ASSERT_EQ(a.size(), 1000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
  for (size_t i = 0; i < a.size(); i++) ASSERT_EQ(a.data()[i], std::byte{0});
  const std::byte* bytes = a.data();
  WeightStorage b = std::move(a);
  EXPECT_EQ(b.data(), bytes);
  EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
}

// Resident kilobytes of the mapping that contains p, from /proc/self/smaps (-1 if not found).
int64_t ResidentKb(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto addr = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = addr >= lo && addr < hi;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      return std::stoll(line.substr(4));
    }
  }
  return -1;
}

TEST(WeightsTest, DroppedPagesOfAMappedFileLeaveTheProcessAndReadBackUnchanged) {
  const testing::ScopedTempDir tmp;
  const std::string path = tmp.File("drop.bin");
  std::vector<char> bytes(4 << 20);
  for (size_t i = 0; i < bytes.size(); i++) bytes[i] = static_cast<char>(i * 131 % 251);
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  shared::Result<WeightStorage> mapped = WeightStorage::MapFile(path);
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  const WeightStorage& s = *mapped;
  int64_t sum = 0;
  for (size_t i = 0; i < s.size(); i += 4096) sum += static_cast<int64_t>(s.data()[i]);
  EXPECT_GT(sum, 0);
  EXPECT_GE(ResidentKb(s.data()), 4000);
  s.DropPages(s.data(), s.size());
  EXPECT_LT(ResidentKb(s.data()), 100);
  EXPECT_EQ(std::memcmp(s.data(), bytes.data(), bytes.size()), 0);
  // Heap storage keeps its bytes whatever the hint.
  WeightStorage heap = WeightStorage::Allocate(8192);
  heap.mutable_data()[5000] = std::byte{7};
  heap.DropPages(heap.data(), heap.size());
  EXPECT_EQ(heap.data()[5000], std::byte{7});
}

TEST(WeightsTest, ValidationNamesAMisshapenTensor) {
  LlamaModel model = MakeBuiltinTinyModel();
  EXPECT_TRUE(ValidateLlamaWeights(model.config, model.weights).ok());
  model.weights.layers[1].wk.rows = 7;
  const shared::Status s = ValidateLlamaWeights(model.config, model.weights);
  EXPECT_EQ(s.message(), "tensor layer 1 wk has shape [7, 64], expected [32, 64]");
}

TEST(WeightsTest, ValidationRequiresEveryTensorButTheBiases) {
  LlamaModel model = MakeBuiltinTinyModel();
  model.weights.layers[0].bq =
      TensorView{kernels::DType::kF32, model.weights.final_norm.data, 1, 64};
  EXPECT_TRUE(ValidateLlamaWeights(model.config, model.weights).ok());
  model.weights.final_norm.data = nullptr;
  EXPECT_EQ(ValidateLlamaWeights(model.config, model.weights).message(),
            "missing tensor final_norm");
}

}  // namespace
}  // namespace smallmind::worker
