#include "worker/tokenizer/tokenizer.h"

#include <algorithm>

namespace smallmind::worker {

std::vector<TokenId> Tokenizer::EncodeSpecial(std::string_view text, bool add_bos) const {
  const AddedTokenMatcher* special = special_tokens();
  if (special == nullptr || special->empty()) return Encode(text, add_bos);
  std::vector<TokenId> out;
  if (add_bos && bos_id() >= 0) out.push_back(bos_id());
  std::vector<AddedTokenMatcher::Segment> segments;
  special->Partition(text, &segments);
  for (const AddedTokenMatcher::Segment& segment : segments) {
    if (segment.id >= 0) {
      out.push_back(segment.id);
      continue;
    }
    if (segment.text.empty()) continue;
    std::vector<TokenId> ids = Encode(segment.text, /*add_bos=*/false);
    out.insert(out.end(), ids.begin(), ids.end());
  }
  return out;
}

size_t MaxTokenTextBytes(const Tokenizer& tokenizer) {
  size_t longest = 4;
  for (TokenId id = 0; id < tokenizer.vocab_size(); ++id) {
    longest = std::max(longest, tokenizer.Piece(id).size());
  }
  return longest;
}

}  // namespace smallmind::worker
