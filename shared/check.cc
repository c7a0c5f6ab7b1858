#include "shared/check.h"

#include <cstdio>
#include <cstdlib>

namespace smallmind::shared {

CheckFailure::CheckFailure(const char* file, int line, const char* cond) {
  stream_ << file << ":" << line << ": check failed: " << cond << ": ";
}

CheckFailure::~CheckFailure() {
  std::fprintf(stderr, "%s\n", stream_.str().c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace smallmind::shared
