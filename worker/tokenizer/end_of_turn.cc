#include "worker/tokenizer/end_of_turn.h"

#include <array>
#include <string_view>

namespace smallmind::worker {

TokenId FindEndOfTurn(const std::vector<std::string>& tokens) {
  constexpr std::array<std::string_view, 7> kSpellings = {
      "<|eot_id|>",    "<|im_end|>",      "<|end|>", "<end_of_turn>",
      "<|endoftext|>", "<|end_of_text|>", "<EOT>"};
  // One pass: the best (earliest in kSpellings) spelling seen so far and its first id.
  size_t best = kSpellings.size();
  TokenId id = -1;
  for (size_t i = 0; i < tokens.size() && best > 0; ++i) {
    const std::string& t = tokens[i];
    if (t.size() < 5 || t.front() != '<' || t.back() != '>') continue;
    for (size_t k = 0; k < best; ++k) {
      if (t == kSpellings[k]) {
        best = k;
        id = static_cast<TokenId>(i);
        break;
      }
    }
  }
  return id;
}

}  // namespace smallmind::worker
