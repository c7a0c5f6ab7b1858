// CPU sets and NUMA placement: parse "0-3,6", list online CPUs, pin the calling thread, find the
// NUMA node of a CPU set (libnuma when present; one node otherwise). Free functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "shared/status.h"

namespace smallmind::shared {

// "0-3,6" -> {0,1,2,3,6}. Sorted, unique. Errors name the bad piece.
Result<std::vector<int>> ParseCpuList(std::string_view text);
// {0,1,2,3,6} -> "0-3,6".
std::string FormatCpuList(const std::vector<int>& cpus);
// CPUs this process may run on (its affinity mask).
std::vector<int> AllowedCpus();
// Pins the calling thread to `cpus`. Fails (without side effects) when none is allowed.
Status PinCurrentThread(const std::vector<int>& cpus);
// NUMA node holding most of `cpus`; 0 when libnuma is absent or reports one node.
int NumaNodeOfCpus(const std::vector<int>& cpus);

}  // namespace smallmind::shared
