// ToolCallScanner: reads, as it streams, the output of a call among several tools (tool_choice
// "required"), which the constraint writes as {"name": "<function>", "arguments": {...}} with
// the name first: the function's name once its string has ended, and the bytes of the arguments
// object exactly as written (the object's own braces included, nothing of the wrapper). One per
// response; not thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace smallmind::gateway::http {

class ToolCallScanner {
 public:
  // Takes the next piece of output; returns the part of it that belongs to the arguments object.
  std::string Feed(std::string_view piece);

  bool has_name() const { return has_name_; }
  const std::string& name() const { return name_; }  // decoded; "" until has_name()

 private:
  enum class Arguments { kBefore, kIn, kAfter };

  int depth_ = 0;  // objects and arrays open
  bool in_string_ = false;
  bool escape_ = false;        // after a '\' in a string
  int top_strings_ = 0;        // strings of the wrapper itself ended: the key "name", the name...
  bool reading_name_ = false;  // in the second of them
  std::string raw_name_;       // ... its JSON text so far
  std::string name_;
  bool has_name_ = false;
  Arguments arguments_ = Arguments::kBefore;
};

}  // namespace smallmind::gateway::http
