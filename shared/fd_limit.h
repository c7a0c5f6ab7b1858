// RaiseFdLimit: lifts this process's soft limit on open files (RLIMIT_NOFILE) to its hard limit at
// start, so that a few thousand client connections do not run the process out of descriptors at a
// default soft limit of 1024. Called once from each process's main(); not thread-safe.
#pragma once

#include <cstdint>

#include "shared/status.h"

namespace smallmind::shared {

struct FdLimit {
  uint64_t before = 0;  // the soft limit found
  uint64_t after = 0;   // the soft limit now (the hard limit, or before when that failed)
};

// Raises the soft limit to the hard one (capped where the kernel's nr_open is lower, which
// setrlimit refuses with EPERM); an error says why it could not.
Result<FdLimit> RaiseFdLimit();

}  // namespace smallmind::shared
