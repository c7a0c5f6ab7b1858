// Helpers of the parsers that hold back part of a streamed reply (tool_call_parser,
// reasoning_parser): blanks, and the end of a text that may be the start of a tag. Pure inline
// functions; thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace smallmind::gateway::http {

inline bool IsBlank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The length of the longest end of `text` that `tag` starts with (shorter than the tag): text
// that may be the first bytes of the tag, to hold back until the next piece decides.
inline size_t TagPrefixAtEnd(std::string_view text, std::string_view tag) {
  for (size_t n = std::min(text.size(), tag.size() - 1); n > 0; --n) {
    if (text.substr(text.size() - n) == tag.substr(0, n)) return n;
  }
  return 0;
}

// Where the blanks that end text[0, end) begin: what may be released before them.
inline size_t BeforeTrailingBlanks(std::string_view text, size_t end) {
  while (end > 0 && IsBlank(text[end - 1])) --end;
  return end;
}

}  // namespace smallmind::gateway::http
