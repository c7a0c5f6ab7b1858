// Reclaims what a gateway killed with SIGKILL left behind: its private worker socket directory
// (<runtime dir>/smallmind-<pid>-XXXXXX, see worker_supervisor.h) and the KV shared-memory
// segments of its workers (/dev/shm/smallmind-<pid>-XXXXXX-w<i>) that did not get to remove them.
// Its workers exit with it (PR_SET_PDEATHSIG), but nothing removes these, so the next gateway
// does. Called by Gateway before it spawns workers. Thread-safe.
#pragma once

#include <string>
#include <vector>

namespace smallmind::gateway {

// Removes every directory smallmind-<pid>-* in `runtime_dir` ("" = $TMPDIR, else /tmp) that this
// user owns, whose gateway process <pid> is gone (no such process, a zombie, or a process that
// started after the directory last changed: the pid was reused) and none of whose sockets accepts a
// connection (so a live gateway in another PID namespace sharing the directory is left alone),
// and every segment smallmind-<pid>-* of a gone <pid>, in the same sense, that no live process
// holds. Returns the paths removed; logs each one.
std::vector<std::string> ReclaimStaleRuntimeFiles(const std::string& runtime_dir);

}  // namespace smallmind::gateway
