// AddedTokenMatcher: finds a vocabulary's user-defined ("added") tokens in raw text so they are
// emitted whole before pre-tokenization, as Hugging Face tokenizers do (e.g. GPT-NeoX's runs of
// spaces). Built once by BpeTokenizer; immutable afterwards, so Partition is const and
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "worker/types/token_id.h"

namespace smallmind::worker {

class AddedTokenMatcher {
 public:
  struct Segment {
    std::string_view text;
    TokenId id;  // the added token `text` spells, or -1 for ordinary text
  };

  // Registers `text` as token `id`. Empty text is ignored; when two tokens share a spelling the
  // first one added keeps it.
  void Add(std::string_view text, TokenId id);
  bool empty() const { return nodes_.size() <= 1; }

  // Appends `text` cut into ordinary runs and added tokens, in order, covering it exactly.
  // Matching is leftmost-longest: the earliest position where any token starts wins, and there
  // the longest token.
  void Partition(std::string_view text, std::vector<Segment>* out) const;

 private:
  // The longest token starting at text[pos]: its length (0 when none) and id.
  std::pair<size_t, TokenId> LongestAt(std::string_view text, size_t pos) const;

  // A byte trie: node 0 is the root; a node's token id is -1 unless a token ends there.
  std::vector<TokenId> nodes_{-1};
  std::unordered_map<uint64_t, int32_t> edges_;  // (node << 8 | byte) -> child node
};

}  // namespace smallmind::worker
