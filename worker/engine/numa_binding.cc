#include "worker/engine/numa_binding.h"

#include <unistd.h>

#include <cstdint>

#include "shared/cpu_topology.h"

#ifdef SMALLMIND_HAVE_NUMA
#include <numa.h>
#include <numaif.h>
#endif

namespace smallmind::worker {

int NumaNodeToBind(const std::vector<int>& cpus) {
#ifdef SMALLMIND_HAVE_NUMA
  if (cpus.empty() || numa_available() < 0 || numa_max_node() == 0) return -1;
  return shared::NumaNodeOfCpus(cpus);
#else
  (void)cpus;
  return -1;
#endif
}

bool BindToNumaNode(const void* data, size_t bytes, int node) {
#ifdef SMALLMIND_HAVE_NUMA
  if (node < 0 || data == nullptr || bytes == 0) return false;
  // mbind works on whole pages: widen the range to the pages it touches.
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data) / page * page;
  const auto end = (reinterpret_cast<uintptr_t>(data) + bytes + page - 1) / page * page;
  constexpr int kMaskBits = 8 * sizeof(unsigned long);
  if (node >= kMaskBits) return false;
  const unsigned long mask = 1ul << node;
  return mbind(reinterpret_cast<void*>(begin), end - begin, MPOL_BIND, &mask, kMaskBits,
               MPOL_MF_MOVE) == 0;
#else
  (void)data;
  (void)bytes;
  (void)node;
  return false;
#endif
}

}  // namespace smallmind::worker
