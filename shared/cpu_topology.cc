#include "shared/cpu_topology.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <map>

#ifdef SMALLMIND_HAVE_NUMA
#include <numa.h>
#endif

namespace smallmind::shared {
namespace {

constexpr int kMaxCpu = CPU_SETSIZE;

bool ParseInt(std::string_view s, int* out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

Result<std::vector<int>> ParseCpuList(std::string_view text) {
  std::vector<int> cpus;
  if (text.empty()) return InvalidArgument("empty CPU list");
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view piece = text.substr(start, comma - start);
    size_t dash = piece.find('-');
    int lo = 0, hi = 0;
    bool ok = dash == std::string_view::npos
                  ? ParseInt(piece, &lo) && (hi = lo, true)
                  : ParseInt(piece.substr(0, dash), &lo) && ParseInt(piece.substr(dash + 1), &hi);
    if (!ok || lo < 0 || hi < lo || hi >= kMaxCpu) {
      return InvalidArgument("bad CPU list piece '" + std::string(piece) + "' in '" +
                             std::string(text) + "' (expected N or N-M with 0 <= N <= M < " +
                             std::to_string(kMaxCpu) + ")");
    }
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    start = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(cpus[j]);
    }
    i = j + 1;
  }
  return out;
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < kMaxCpu; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

Status PinCurrentThread(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (c >= 0 && c < kMaxCpu) CPU_SET(c, &set);
  }
  if (CPU_COUNT(&set) == 0) return InvalidArgument("cannot pin to an empty CPU set");
  int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0) {
    return FailedPrecondition("pthread_setaffinity_np(" + FormatCpuList(cpus) +
                              ") failed with error " + std::to_string(rc));
  }
  return Status::Ok();
}

int NumaNodeOfCpus(const std::vector<int>& cpus) {
#ifdef SMALLMIND_HAVE_NUMA
  if (numa_available() < 0 || numa_max_node() == 0) return 0;
  std::map<int, int> votes;
  for (int c : cpus) {
    int node = numa_node_of_cpu(c);
    if (node >= 0) ++votes[node];
  }
  int best = 0, best_votes = -1;
  for (auto [node, n] : votes) {
    if (n > best_votes) best = node, best_votes = n;
  }
  return best;
#else
  (void)cpus;
  return 0;
#endif
}

}  // namespace smallmind::shared
