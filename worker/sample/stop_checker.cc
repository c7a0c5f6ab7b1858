#include "worker/sample/stop_checker.h"

#include <algorithm>
#include <utility>

#include "shared/check.h"

namespace smallmind::worker {

namespace {

// Room for a held-back stop-string prefix plus a few tokens of text without reallocating.
constexpr size_t kHeldSlack = 64;

}  // namespace

StopChecker::StopChecker(StopConfig config) : config_(std::move(config)) {
  SM_CHECK(config_.max_new_tokens >= 1) << "max_new_tokens " << config_.max_new_tokens;
  std::erase_if(config_.stop, [](const std::string& s) { return s.empty(); });
  size_t longest = 0;
  for (const std::string& s : config_.stop) longest = std::max(longest, s.size());
  held_.reserve(longest * 2 + kHeldSlack);
}

FinishReason StopChecker::OnToken(TokenId id, std::string_view new_text, std::string* emit_text) {
  ++num_tokens_;
  const bool is_end = (id >= 0 && (id == config_.eos_id || id == config_.eot_id)) ||
                      (config_.bos_ends && id >= 0 && id == config_.bos_id);
  if (is_end && !config_.ignore_eos) {
    Finish(emit_text);
    return FinishReason::kEos;
  }
  if (config_.stop.empty()) {
    emit_text->append(new_text);
  } else {
    held_.append(new_text);
    const size_t match = FindStop();
    if (match != std::string::npos) {
      emit_text->append(held_, 0, match);
      held_.clear();
      return FinishReason::kStop;
    }
    const size_t keep = HeldBackLength();
    emit_text->append(held_, 0, held_.size() - keep);
    held_.erase(0, held_.size() - keep);
  }
  if (num_tokens_ >= config_.max_new_tokens) {
    Finish(emit_text);
    return FinishReason::kLength;
  }
  return FinishReason::kNone;
}

void StopChecker::Finish(std::string* emit_text) {
  emit_text->append(held_);
  held_.clear();
}

// held_ never contains a complete match from earlier calls, and everything emitted before it
// could not start one, so searching held_ alone finds the earliest match in the whole text.
size_t StopChecker::FindStop() const {
  size_t best = std::string::npos;
  for (const std::string& s : config_.stop) best = std::min(best, held_.find(s));
  return best;
}

size_t StopChecker::HeldBackLength() const {
  const std::string_view held = held_;
  size_t keep = 0;
  for (const std::string& s : config_.stop) {
    // Longest proper prefix of s that is a suffix of held (a whole match was ruled out above).
    for (size_t len = std::min(held.size(), s.size() - 1); len > keep; --len) {
      if (held.substr(held.size() - len) == std::string_view(s).substr(0, len)) {
        keep = len;
        break;
      }
    }
  }
  return keep;
}

}  // namespace smallmind::worker
