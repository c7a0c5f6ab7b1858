// Reclaims what a gateway killed with SIGKILL left behind: its private worker socket directory
// (<runtime dir>/smallmind-<pid>-XXXXXX, see worker_supervisor.h). Its workers exit with it
// (PR_SET_PDEATHSIG), but nothing removes the directory, so the next gateway started on the same
// runtime directory does. Called by Gateway before it spawns workers. Thread-safe.
#pragma once

#include <string>
#include <vector>

namespace smallmind::gateway {

// Removes every directory smallmind-<pid>-* in `runtime_dir` ("" = $TMPDIR, else /tmp) that this
// user owns, whose gateway process <pid> no longer exists and none of whose sockets accepts a
// connection (so a live gateway in another PID namespace sharing the directory is left alone).
// Returns the directories removed; logs each one.
std::vector<std::string> ReclaimStaleSocketDirs(const std::string& runtime_dir);

}  // namespace smallmind::gateway
