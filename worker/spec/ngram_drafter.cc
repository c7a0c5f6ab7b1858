#include "worker/spec/ngram_drafter.h"

#include <algorithm>

namespace smallmind::worker {

int ProposeNgramDraft(std::span<const TokenId> tokens, const NgramOptions& options,
                      std::span<TokenId> out) {
  const int n = static_cast<int>(tokens.size());
  const int min_match = std::max(1, options.min_match);
  const int max_match = std::max(min_match, options.max_match);
  if (out.empty() || n <= min_match) return 0;
  const TokenId last = tokens[n - 1];
  int best_len = 0;
  int best_end = -1;  // index of the matched occurrence's last token
  // Newest first, so among equally long matches the most recent wins; an occurrence must leave
  // at least one token after it to propose.
  for (int end = n - 2; end >= min_match - 1; --end) {
    if (tokens[end] != last) continue;
    int len = 1;
    while (len < max_match && end - len >= 0 && tokens[end - len] == tokens[n - 1 - len]) ++len;
    if (len > best_len) {
      best_len = len;
      best_end = end;
      if (len == max_match) break;
    }
  }
  if (best_len < min_match) return 0;
  const int count = std::min(static_cast<int>(out.size()), n - 1 - best_end);
  std::copy_n(tokens.begin() + best_end + 1, count, out.begin());
  return count;
}

}  // namespace smallmind::worker
