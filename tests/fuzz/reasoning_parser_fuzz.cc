// ReasoningParser over any reply: the first byte says whether the prompt opened the section and
// the next two where the reply is cut into three pieces. Whole or in pieces, the same thinking
// and answer; a reply that does not start with the section (and whose prompt did not open one)
// comes back as the answer byte for byte.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

#include "gateway/chat/reasoning_parser.h"

namespace {

using smallmind::gateway::http::ReasoningOutput;
using smallmind::gateway::http::ReasoningParser;

ReasoningOutput Run(bool open, std::initializer_list<std::string> pieces) {
  ReasoningParser p(open);
  ReasoningOutput all;
  for (const std::string& piece : pieces) all.Append(p.Feed(piece));
  all.Append(p.Finish());
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const bool open = data[0] & 1;
  const std::string reply(reinterpret_cast<const char*>(data + 3), size - 3);
  size_t a = data[1] % (reply.size() + 1), b = data[2] % (reply.size() + 1);
  if (a > b) std::swap(a, b);
  const ReasoningOutput whole = Run(open, {reply});
  const ReasoningOutput pieces =
      Run(open, {reply.substr(0, a), reply.substr(a, b - a), reply.substr(b)});
  if (whole.reasoning != pieces.reasoning || whole.content != pieces.content) std::abort();
  const size_t first = reply.find_first_not_of(" \n\r\t");
  const bool starts_section = first != std::string::npos && reply.compare(first, 7, "<think>") == 0;
  if (!open && !starts_section && (whole.content != reply || !whole.reasoning.empty())) {
    std::abort();
  }
  return 0;
}
