#include "tests/testing/test_models.h"

#include <chrono>

#include "tests/testing/child_process.h"

namespace smallmind::testing {

std::string LongContextTinyModel(const ScopedTempDir& dir) {
  const std::string path = dir.File("tiny-8k.gguf");
  auto child = ChildProcess::Spawn(
      {BinaryPath("smallmind-modelgen"), "--preset", "tiny", "--context", "8192", "-o", path});
  if (!child.ok()) return "";
  return (*child)->Wait(std::chrono::milliseconds(60000)) == 0 ? path : "";
}

}  // namespace smallmind::testing
