#include "worker/embed_reactor.h"

#include <utility>

namespace smallmind::worker {

bool EmbedReactor::PushSequences(std::vector<Command> submits, std::vector<uint64_t> ids) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_) return false;
  commands_->PushAll(std::move(submits));
  ids_ = std::move(ids);
  return true;
}

bool EmbedReactor::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

void EmbedReactor::OnCancel() {
  std::vector<Command> cancels;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    for (uint64_t id : ids_) cancels.emplace_back(CancelCommand{id});
  }
  // One round: every sequence of the call leaves at the same step. Ids already finished are
  // ignored by the scheduler.
  if (!cancels.empty()) commands_->PushAll(std::move(cancels));
}

}  // namespace smallmind::worker
