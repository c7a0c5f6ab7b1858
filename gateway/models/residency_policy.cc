#include "gateway/models/residency_policy.h"

#include <algorithm>

namespace smallmind::gateway {

EvictionPlan PlanEvictions(uint64_t budget_bytes, uint64_t need,
                           std::span<const ResidentModel> resident) {
  EvictionPlan plan;
  if (budget_bytes == 0) return plan;
  if (need > budget_bytes) {
    plan.verdict = EvictionPlan::Verdict::kTooLarge;
    return plan;
  }
  uint64_t held = 0;
  std::vector<const ResidentModel*> idle;
  for (const ResidentModel& m : resident) {
    held += m.bytes;
    if (!m.busy) idle.push_back(&m);
  }
  std::sort(idle.begin(), idle.end(), [](const ResidentModel* a, const ResidentModel* b) {
    return a->last_used != b->last_used ? a->last_used < b->last_used : a->index < b->index;
  });
  for (const ResidentModel* m : idle) {
    if (held + need <= budget_bytes) break;
    plan.victims.push_back(m->index);
    held -= m->bytes;
  }
  if (held + need > budget_bytes) {
    plan.verdict = EvictionPlan::Verdict::kWait;
    plan.victims.clear();
  }
  return plan;
}

}  // namespace smallmind::gateway
