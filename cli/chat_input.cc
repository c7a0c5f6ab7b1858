#include "cli/chat_input.h"

#include <string_view>
#include <utility>

namespace smallmind::cli {
namespace {

std::string Trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return "";
  const size_t end = s.find_last_not_of(" \t\r");
  return std::string(s.substr(begin, end - begin + 1));
}

}  // namespace

ChatEntry ParseChatEntry(std::string text) {
  using Kind = ChatEntry::Kind;
  if (!text.starts_with('/')) return {Kind::kMessage, std::move(text)};
  const size_t space = text.find_first_of(" \t\n");
  const std::string name = text.substr(0, space);
  std::string arg = space == std::string::npos ? "" : Trim(std::string_view(text).substr(space));
  if (name == "/reset") return {Kind::kReset, ""};
  if (name == "/system") return {Kind::kSystem, std::move(arg)};
  if (name == "/model") return {Kind::kModel, std::move(arg)};
  if (name == "/help" || name == "/?") return {Kind::kHelp, ""};
  if (name == "/exit" || name == "/quit" || name == "/bye") return {Kind::kExit, ""};
  return {Kind::kUnknown, name};
}

std::optional<ChatEntry> ReadChatEntry(std::istream& in,
                                       const std::function<void(bool continued)>& prompt) {
  std::string text;
  bool continued = false;
  for (std::string line;;) {
    prompt(continued);
    if (!std::getline(in, line)) {
      if (!continued) return std::nullopt;
      break;  // the input ended inside a continuation: send what there is
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line.back() == '\\') {
      line.back() = '\n';
      text += line;
      continued = true;
      continue;
    }
    text += line;
    if (!continued && Trim(text).empty()) {
      text.clear();
      continue;
    }
    break;
  }
  return ParseChatEntry(std::move(text));
}

}  // namespace smallmind::cli
