#include "gateway/chat/tool_call_scanner.h"

#include <nlohmann/json.hpp>

namespace smallmind::gateway::http {

std::string ToolCallScanner::Feed(std::string_view piece) {
  std::string out;
  for (const char c : piece) {
    const bool in_arguments = arguments_ == Arguments::kIn;
    if (in_arguments) out += c;
    if (in_string_) {
      if (escape_) {
        escape_ = false;
      } else if (c == '\\') {
        escape_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      if (reading_name_) raw_name_ += c;
      if (!in_string_ && !in_arguments && depth_ == 1) {
        ++top_strings_;
        if (reading_name_) {
          reading_name_ = false;
          const auto name = nlohmann::json::parse(raw_name_, nullptr, /*allow_exceptions=*/false);
          name_ = name.is_string() ? name.get<std::string>() : raw_name_;
          has_name_ = true;
        }
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string_ = true;
        if (!in_arguments && depth_ == 1 && top_strings_ == 1) {
          reading_name_ = true;
          raw_name_ = "\"";
        }
        break;
      case '{':
      case '[':
        if (c == '{' && depth_ == 1 && arguments_ == Arguments::kBefore) {
          arguments_ = Arguments::kIn;
          out += c;
        }
        ++depth_;
        break;
      case '}':
      case ']':
        --depth_;
        if (in_arguments && depth_ == 1) arguments_ = Arguments::kAfter;
        break;
      default: break;
    }
  }
  return out;
}

}  // namespace smallmind::gateway::http
