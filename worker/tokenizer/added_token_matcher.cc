#include "worker/tokenizer/added_token_matcher.h"

namespace smallmind::worker {

namespace {

uint64_t EdgeKey(int32_t node, char byte) {
  return (static_cast<uint64_t>(node) << 8) | static_cast<uint8_t>(byte);
}

}  // namespace

void AddedTokenMatcher::Add(std::string_view text, TokenId id) {
  if (text.empty()) return;
  int32_t node = 0;
  for (char c : text) {
    auto [it, inserted] = edges_.try_emplace(EdgeKey(node, c), static_cast<int32_t>(nodes_.size()));
    if (inserted) nodes_.push_back(-1);
    node = it->second;
  }
  if (nodes_[node] < 0) nodes_[node] = id;
}

std::pair<size_t, TokenId> AddedTokenMatcher::LongestAt(std::string_view text, size_t pos) const {
  std::pair<size_t, TokenId> best{0, -1};
  int32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    auto it = edges_.find(EdgeKey(node, text[i]));
    if (it == edges_.end()) break;
    node = it->second;
    if (nodes_[node] >= 0) best = {i + 1 - pos, nodes_[node]};
  }
  return best;
}

void AddedTokenMatcher::Partition(std::string_view text, std::vector<Segment>* out) const {
  if (empty()) {
    if (!text.empty()) out->push_back({text, -1});
    return;
  }
  size_t plain_start = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    auto [len, id] = LongestAt(text, pos);
    if (len == 0) {
      ++pos;
      continue;
    }
    if (pos > plain_start) out->push_back({text.substr(plain_start, pos - plain_start), -1});
    out->push_back({text.substr(pos, len), id});
    pos += len;
    plain_start = pos;
  }
  if (plain_start < text.size()) out->push_back({text.substr(plain_start), -1});
}

}  // namespace smallmind::worker
