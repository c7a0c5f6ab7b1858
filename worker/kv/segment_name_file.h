// StandaloneSegmentName: the KV segment name of a worker started on its own (no --kv-segment):
// the name derived from --listen plus 16 random hex digits from getrandom, so that another local
// user cannot plant a segment under it before the worker first runs (issue 40). The name is kept
// in a file in an owner-only directory, <runtime dir>/smallmind-kv-<uid>/ (mode 0700), so a
// restarted worker finds its own segment again (the warm restart). Called once at worker start;
// thread-compatible.
#pragma once

#include <string>

#include "shared/status.h"

namespace smallmind::worker {

// <parent>/smallmind-kv-<euid>, made with mode 0700 when absent. Refused (FAILED_PRECONDITION,
// naming the path) when it is not a directory, a symlink, not owned by the effective uid, or has
// any group/other permission bit.
shared::Result<std::string> OwnerOnlyKvDir(const std::string& parent);

// The name recorded in <dir>/<base>.name, or a new one (base + "-" + 16 hex digits of getrandom)
// written there (O_EXCL, mode 0600) when the file is absent. A file that is not a regular file
// owned by the effective uid with no group/other bit, or that holds anything but a name of this
// base, is refused with FAILED_PRECONDITION naming it. `dir` should come from OwnerOnlyKvDir.
shared::Result<std::string> StandaloneSegmentName(const std::string& dir, const std::string& base);

// Replaces the name in <dir>/<base>.name with a new random one (after the recorded name was
// taken by a segment the worker must refuse: another user's).
shared::Result<std::string> RenewSegmentName(const std::string& dir, const std::string& base);

// Removes <dir>/<base>.name and then `dir` when empty: on a clean exit, whose segment is removed
// too. Best effort.
void RemoveSegmentName(const std::string& dir, const std::string& base);

}  // namespace smallmind::worker
