// Prompt lookup ("n-gram") drafting: the continuation of the longest recent earlier occurrence of
// the sequence's last tokens, proposed as draft tokens for the target model to verify. Needs no
// second model; it pays off where the output repeats its context (retelling, editing, code,
// quoting a document). A pure function of the tokens; thread-safe, allocates nothing.
#pragma once

#include <span>

#include "worker/types/token_id.h"

namespace smallmind::worker {

struct NgramOptions {
  int min_match = 3;  // shortest suffix match that proposes anything (--spec-ngram)
  int max_match = 8;  // longer matches are not looked for: they rank as equal
};

// Writes up to out.size() draft tokens into `out` and returns how many: the tokens that followed
// the longest earlier occurrence (at least options.min_match long, most recent among equals) of
// the suffix of `tokens` that ends at its last token. 0 when nothing matches.
// O(tokens.size() * max_match).
int ProposeNgramDraft(std::span<const TokenId> tokens, const NgramOptions& options,
                      std::span<TokenId> out);

}  // namespace smallmind::worker
