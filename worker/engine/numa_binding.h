// NUMA placement of engine memory: moves a buffer's pages to the node of the engine's CPUs and
// binds them there (libnuma's mbind), when the machine has more than one node. Called by the
// Engine at construction for weights and activations; thread-safe (no shared state).
#pragma once

#include <cstddef>
#include <vector>

namespace smallmind::worker {

// The NUMA node whose memory `cpus` should use, or -1 when binding is pointless or impossible
// (one node, no libnuma, or an empty CPU set).
int NumaNodeToBind(const std::vector<int>& cpus);

// Binds the pages covering [data, data + bytes) to `node`, moving those already touched (best
// effort: a failure leaves the memory where it is and returns false). node < 0: nothing.
bool BindToNumaNode(const void* data, size_t bytes, int node);

}  // namespace smallmind::worker
