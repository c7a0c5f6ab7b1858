#include "gateway/jinja/str_split.h"

#include <algorithm>

#include "gateway/jinja/unicode.h"

namespace smallmind::jinja {
namespace {

Value Str(std::string s) { return Value::String(std::move(s)); }

}  // namespace

ValueList SplitWhitespace(const std::u32string& s, int64_t maxsplit, bool from_right) {
  std::vector<std::u32string> parts;
  if (!from_right) {
    size_t i = 0;
    while (true) {
      while (i < s.size() && unicode::IsSpace(s[i])) ++i;
      if (i >= s.size()) break;
      if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
        parts.push_back(s.substr(i));
        break;
      }
      size_t j = i;
      while (j < s.size() && !unicode::IsSpace(s[j])) ++j;
      parts.push_back(s.substr(i, j - i));
      i = j;
    }
  } else {
    size_t i = s.size();
    while (true) {
      while (i > 0 && unicode::IsSpace(s[i - 1])) --i;
      if (i == 0) break;
      if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
        parts.push_back(s.substr(0, i));
        break;
      }
      size_t j = i;
      while (j > 0 && !unicode::IsSpace(s[j - 1])) --j;
      parts.push_back(s.substr(j, i - j));
      i = j;
    }
    std::reverse(parts.begin(), parts.end());
  }
  ValueList out;
  for (const auto& p : parts) out.push_back(Str(unicode::Encode(p)));
  return out;
}

ValueList SplitOn(const std::string& s, const std::string& sep, int64_t maxsplit, bool from_right) {
  std::vector<std::string> parts;
  if (!from_right) {
    size_t start = 0;
    while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
      const size_t at = s.find(sep, start);
      if (at == std::string::npos) break;
      parts.push_back(s.substr(start, at - start));
      start = at + sep.size();
    }
    parts.push_back(s.substr(start));
  } else {
    size_t end = s.size();
    while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
      if (end < sep.size()) break;
      const size_t at = s.rfind(sep, end - sep.size());
      if (at == std::string::npos) break;
      parts.push_back(s.substr(at + sep.size(), end - at - sep.size()));
      end = at;
    }
    parts.push_back(s.substr(0, end));
    std::reverse(parts.begin(), parts.end());
  }
  ValueList out;
  for (auto& p : parts) out.push_back(Str(std::move(p)));
  return out;
}

namespace {

bool IsLineBreak(char32_t c) {
  return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E ||
         c == 0x85 || c == 0x2028 || c == 0x2029;
}

}  // namespace

ValueList SplitLines(const std::u32string& s, bool keepends) {
  ValueList out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    while (j < s.size() && !IsLineBreak(s[j])) ++j;
    size_t eol = j;
    if (j < s.size()) {
      eol = j + 1;
      if (s[j] == '\r' && j + 1 < s.size() && s[j + 1] == '\n') ++eol;
    }
    out.push_back(Str(unicode::Encode(s.substr(i, (keepends ? eol : j) - i))));
    i = eol;
  }
  return out;
}

Result<Value> Partition(const std::string& s, bool from_right, const Value& sep) {
  if (!sep.is_string()) return shared::InvalidArgument("must be str, not " + sep.TypeName());
  if (sep.str().empty()) return shared::InvalidArgument("empty separator");
  const size_t at = from_right ? s.rfind(sep.str()) : s.find(sep.str());
  if (at == std::string::npos) {
    return !from_right ? Value::Tuple({Str(s), Str(""), Str("")})
                       : Value::Tuple({Str(""), Str(""), Str(s)});
  }
  return Value::Tuple({Str(s.substr(0, at)), sep, Str(s.substr(at + sep.str().size()))});
}

}  // namespace smallmind::jinja
