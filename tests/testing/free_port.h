// FreePort: a TCP port free on 127.0.0.1 now, for tests that start servers on fixed ports (workers
// attached by address). Thread-safe.
#pragma once

namespace smallmind::testing {

// The kernel's pick for a throwaway socket bound to 127.0.0.1:0; 0 on failure. Another process may
// take it before the caller binds it: good enough on a test machine's loopback.
int FreePort();

}  // namespace smallmind::testing
