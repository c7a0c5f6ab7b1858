// Python's str methods for templates (see methods.h), on code points where Python counts
// them: find() returns a character index, center() pads to a character width.
#include <algorithm>
#include <string>

#include "gateway/jinja/access.h"
#include "gateway/jinja/args.h"
#include "gateway/jinja/format.h"
#include "gateway/jinja/interpreter.h"
#include "gateway/jinja/methods.h"
#include "gateway/jinja/str_split.h"
#include "gateway/jinja/unicode.h"

namespace smallmind::jinja {
namespace {

using shared::InvalidArgument;

constexpr std::string_view kStrMethods[] = {
    "strip",      "lstrip",     "rstrip",    "split",     "rsplit",       "splitlines",
    "startswith", "endswith",   "replace",   "upper",     "lower",        "casefold",
    "title",      "capitalize", "swapcase",  "find",      "rfind",        "index",
    "rindex",     "count",      "join",      "format",    "removeprefix", "removesuffix",
    "isalpha",    "isdigit",    "isalnum",   "isspace",   "islower",      "isupper",
    "istitle",    "isdecimal",  "isnumeric", "isascii",   "isprintable",  "center",
    "ljust",      "rjust",      "zfill",     "partition", "rpartition",   "expandtabs"};

Value Str(std::string s) { return Value::String(std::move(s)); }

Result<std::optional<std::string>> OptionalStr(const std::optional<Value>& v, const char* what) {
  if (!v || v->is_none()) return std::optional<std::string>();
  if (!v->is_string()) {
    return InvalidArgument(std::string(what) + " arg must be None or str");
  }
  return std::optional<std::string>(v->str());
}

// Resolves Python's optional start/end arguments to a code point range of `n`.
Result<std::pair<size_t, size_t>> Range(const BoundArgs& a, size_t first, size_t n) {
  int64_t lo = 0;
  int64_t hi = static_cast<int64_t>(n);
  const int64_t size = static_cast<int64_t>(n);
  auto fix = [&](int64_t v) { return v < 0 ? std::max<int64_t>(0, v + size) : std::min(v, size); };
  if (a.size() > first && a[first] && !a[first]->is_none()) {
    SM_ASSIGN_OR_RETURN(int64_t v, ToIndex(*a[first]));
    lo = fix(v);
  }
  if (a.size() > first + 1 && a[first + 1] && !a[first + 1]->is_none()) {
    SM_ASSIGN_OR_RETURN(int64_t v, ToIndex(*a[first + 1]));
    hi = fix(v);
  }
  return std::make_pair(static_cast<size_t>(lo), static_cast<size_t>(std::max(lo, hi)));
}

std::string Title(const std::string& s) {
  std::string out;
  bool previous_cased = false;
  for (size_t i = 0; i < s.size();) {
    const char32_t c = unicode::Next(s, i);
    if (previous_cased) {
      unicode::AppendLower(out, c);
    } else {
      unicode::AppendTitle(out, c);
    }
    previous_cased = unicode::IsCased(c);
  }
  return out;
}

Result<Value> CaseMethod(const std::string& s, std::string_view name) {
  if (name == "upper") return Str(unicode::Upper(s));
  if (name == "lower" || name == "casefold") return Str(unicode::Lower(s));
  if (name == "title") return Str(Title(s));
  std::string out;
  bool first = true;
  for (size_t i = 0; i < s.size();) {
    const char32_t c = unicode::Next(s, i);
    if (name == "capitalize") {
      first ? unicode::AppendTitle(out, c) : unicode::AppendLower(out, c);
    } else if (unicode::IsUpper(c)) {  // swapcase
      unicode::AppendLower(out, c);
    } else if (unicode::IsLower(c)) {
      unicode::AppendUpper(out, c);
    } else {
      unicode::Append(out, c);
    }
    first = false;
  }
  return Str(std::move(out));
}

Result<Value> Predicate(const std::u32string& s, std::string_view name) {
  if (name == "isascii") {
    return Value::Bool(std::all_of(s.begin(), s.end(), [](char32_t c) { return c < 0x80; }));
  }
  if (name == "isprintable") {
    return Value::Bool(std::all_of(s.begin(), s.end(), unicode::IsPrintable));
  }
  if (s.empty()) return Value::Bool(false);
  if (name == "islower" || name == "isupper" || name == "istitle") {
    bool cased = false;
    bool previous_cased = false;
    for (char32_t c : s) {
      const bool upper = unicode::IsUpper(c) || unicode::IsTitle(c);
      const bool lower = unicode::IsLower(c);
      if (name == "islower" && upper) return Value::Bool(false);
      if (name == "isupper" && lower) return Value::Bool(false);
      if (name == "istitle") {
        if ((upper && previous_cased) || (lower && !previous_cased)) return Value::Bool(false);
        previous_cased = upper || lower;
      }
      cased |= name == "islower" ? lower : name == "isupper" ? upper : (upper || lower);
    }
    return Value::Bool(cased);
  }
  bool (*pred)(char32_t) = unicode::IsSpace;
  if (name == "isalpha") pred = unicode::IsAlpha;
  if (name == "isdigit") pred = unicode::IsDigit;
  if (name == "isdecimal") pred = unicode::IsDecimal;
  if (name == "isnumeric") pred = unicode::IsNumeric;
  if (name == "isalnum") {
    pred = [](char32_t c) {
      return unicode::IsAlpha(c) || unicode::IsDecimal(c) || unicode::IsDigit(c) ||
             unicode::IsNumeric(c);
    };
  }
  return Value::Bool(std::all_of(s.begin(), s.end(), pred));
}

Result<Value> Pad(Interpreter& in, const std::u32string& s, std::string_view name, BoundArgs a) {
  SM_ASSIGN_OR_RETURN(int64_t width, ToIndex(*a[0]));
  char32_t fill = ' ';
  if (a.size() > 1 && a[1]) {
    if (!a[1]->is_string() || unicode::Length(a[1]->str()) != 1) {
      return InvalidArgument("The fill character must be exactly one character long");
    }
    size_t i = 0;
    fill = unicode::Next(a[1]->str(), i);
  }
  const int64_t n = static_cast<int64_t>(s.size());
  if (width <= n) return Str(unicode::Encode(s));
  SM_RETURN_IF_ERROR(in.CheckString(static_cast<size_t>(width)));
  const size_t pad = static_cast<size_t>(width - n);
  size_t left = 0;
  if (name == "rjust") left = pad;
  if (name == "center") left = pad / 2 + (pad & static_cast<size_t>(width) & 1);
  if (name == "zfill") {
    std::u32string out = s;
    const size_t at = !s.empty() && (s[0] == '+' || s[0] == '-') ? 1 : 0;
    out.insert(at, pad, U'0');
    return Str(unicode::Encode(out));
  }
  std::u32string out(left, fill);
  out += s;
  out.append(pad - left, fill);
  return Str(unicode::Encode(out));
}

Result<Value> Search(const std::string& self, std::string_view name, BoundArgs a) {
  if (!a[0]->is_string()) {
    return InvalidArgument("must be str, not " + a[0]->TypeName());
  }
  const std::u32string s = unicode::Decode(self);
  const std::u32string sub = unicode::Decode(a[0]->str());
  SM_ASSIGN_OR_RETURN(auto range, Range(a, 1, s.size()));
  const std::u32string window = s.substr(range.first, range.second - range.first);
  if (name == "count") {
    if (sub.empty()) return Value::Int(static_cast<int64_t>(window.size() + 1));
    int64_t n = 0;
    for (size_t at = window.find(sub); at != std::u32string::npos;
         at = window.find(sub, at + sub.size())) {
      ++n;
    }
    return Value::Int(n);
  }
  const bool from_right = name == "rfind" || name == "rindex";
  const size_t at = from_right ? window.rfind(sub) : window.find(sub);
  if (at == std::u32string::npos) {
    if (name == "index" || name == "rindex") return InvalidArgument("substring not found");
    return Value::Int(-1);
  }
  return Value::Int(static_cast<int64_t>(at + range.first));
}

Result<Value> Affix(const std::string& self, std::string_view name, BoundArgs a) {
  ValueList candidates;
  if (a[0]->is_tuple()) {
    candidates = a[0]->list();
  } else {
    candidates.push_back(*a[0]);
  }
  const std::u32string s = unicode::Decode(self);
  SM_ASSIGN_OR_RETURN(auto range, Range(a, 1, s.size()));
  const std::string window = unicode::Encode(s.substr(range.first, range.second - range.first));
  for (const Value& c : candidates) {
    if (!c.is_string()) {
      return InvalidArgument(std::string(name) + " first arg must be str or a tuple of str, not " +
                             c.TypeName());
    }
    const std::string& p = c.str();
    if (p.size() > window.size()) continue;
    const bool hit = name == "startswith"
                         ? window.compare(0, p.size(), p) == 0
                         : window.compare(window.size() - p.size(), p.size(), p) == 0;
    if (hit) return Value::Bool(true);
  }
  return Value::Bool(false);
}

Result<Value> Replace(Interpreter& in, const std::string& s, BoundArgs a) {
  if (!a[0]->is_string() || !a[1]->is_string()) {
    return InvalidArgument("replace() argument must be str");
  }
  int64_t count = -1;
  if (a[2]) {
    SM_ASSIGN_OR_RETURN(count, ToIndex(*a[2]));
  }
  const std::string& from = a[0]->str();
  const std::string& to = a[1]->str();
  std::string out;
  int64_t done = 0;
  if (from.empty()) {  // inserts `to` around every character
    for (size_t i = 0; i <= s.size();) {
      if (count < 0 || done < count) {
        out += to;
        ++done;
      }
      if (i == s.size()) break;
      const size_t start = i;
      unicode::Next(s, i);
      out.append(s, start, i - start);
      SM_RETURN_IF_ERROR(in.CheckString(out.size()));
    }
    return Str(std::move(out));
  }
  size_t start = 0;
  for (size_t at = s.find(from); at != std::string::npos && (count < 0 || done < count);
       at = s.find(from, start)) {
    out.append(s, start, at - start);
    out += to;
    start = at + from.size();
    ++done;
    SM_RETURN_IF_ERROR(in.CheckString(out.size()));
  }
  out.append(s, start, std::string::npos);
  SM_RETURN_IF_ERROR(in.CheckString(out.size()));
  return Str(std::move(out));
}

Result<Value> Join(Interpreter& in, const std::string& sep, const Value& iterable) {
  SM_ASSIGN_OR_RETURN(ValueList items, Iterate(iterable));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string()) {
      return InvalidArgument("sequence item " + std::to_string(i) + ": expected str instance, " +
                             items[i].TypeName() + " found");
    }
    if (i > 0) out += sep;
    out += items[i].str();
    SM_RETURN_IF_ERROR(in.CheckString(out.size()));
  }
  return Str(std::move(out));
}

Result<Value> ExpandTabs(Interpreter& in, const std::u32string& s, int64_t tabsize) {
  std::u32string out;
  size_t column = 0;
  for (char32_t c : s) {
    if (c == '\t') {
      if (tabsize > 0) {
        const size_t n = static_cast<size_t>(tabsize) - column % static_cast<size_t>(tabsize);
        // Checked before the append: '\t'.expandtabs(10**12) would otherwise ask for terabytes.
        SM_RETURN_IF_ERROR(in.CheckString(out.size() + n));  // code points <= UTF-8 bytes
        out.append(n, U' ');
        column += n;
      }
    } else {
      out.push_back(c);
      column = c == '\n' || c == '\r' ? 0 : column + 1;
    }
  }
  return Str(unicode::Encode(out));
}

Result<Value> Split(const std::string& s, bool from_right, BoundArgs a) {
  SM_ASSIGN_OR_RETURN(std::optional<std::string> sep, OptionalStr(a[0], "must be str or None;"));
  int64_t maxsplit = -1;
  if (a[1]) {
    SM_ASSIGN_OR_RETURN(maxsplit, ToIndex(*a[1]));
  }
  if (!sep) return Value::List(SplitWhitespace(unicode::Decode(s), maxsplit, from_right));
  if (sep->empty()) return InvalidArgument("empty separator");
  return Value::List(SplitOn(s, *sep, maxsplit, from_right));
}

Result<Value> RemoveAffix(const std::string& s, bool prefix, const Value& affix) {
  if (!affix.is_string()) {
    return InvalidArgument(std::string(prefix ? "removeprefix" : "removesuffix") +
                           "() argument must be str");
  }
  const std::string& p = affix.str();
  if (p.size() > s.size()) return Str(s);
  if (prefix && s.compare(0, p.size(), p) == 0) return Str(s.substr(p.size()));
  if (!prefix && s.compare(s.size() - p.size(), p.size(), p) == 0) {
    return Str(s.substr(0, s.size() - p.size()));
  }
  return Str(s);
}

// str.strip / lstrip / rstrip with the bound `chars` argument.
Result<Value> StripMethod(const std::string& s, std::string_view name, BoundArgs a) {
  const std::string fn(name);
  SM_ASSIGN_OR_RETURN(std::optional<std::string> chars, OptionalStr(a[0], fn.c_str()));
  return Str(std::string(
      unicode::Strip(s, chars ? &*chars : nullptr, name != "rstrip", name != "lstrip")));
}

// str.expandtabs with the bound `tabsize` argument (8 when not given).
Result<Value> ExpandTabsMethod(Interpreter& in, const std::string& s, BoundArgs a) {
  int64_t tabsize = 8;
  if (a[0]) {
    SM_ASSIGN_OR_RETURN(tabsize, ToIndex(*a[0]));
  }
  return ExpandTabs(in, unicode::Decode(s), tabsize);
}

}  // namespace

bool IsStrMethod(std::string_view name) {
  return std::find(std::begin(kStrMethods), std::end(kStrMethods), name) != std::end(kStrMethods);
}

Result<Value> CallStrMethod(Interpreter& in, const Value& self, std::string_view name,
                            CallArgs args) {
  const std::string& s = self.str();
  SM_RETURN_IF_ERROR(in.ChargeBytes(s.size()));
  const std::string fn(name);
  if (name == "format") return StrFormat(in, s, std::move(args));
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(fn, std::move(args), {"chars"}));
    return StripMethod(s, name, std::move(a));
  }
  if (name == "split" || name == "rsplit") {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(fn, std::move(args), {"sep", "maxsplit"}));
    return Split(s, name == "rsplit", std::move(a));
  }
  if (name == "splitlines") {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(fn, std::move(args), {"keepends"}));
    return Value::List(SplitLines(unicode::Decode(s), a[0] && a[0]->Truthy()));
  }
  if (name == "startswith" || name == "endswith") {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(fn, std::move(args), {"prefix", "start", "end"}, 1));
    return Affix(s, name, std::move(a));
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(fn, std::move(args), {"sub", "start", "end"}, 1));
    return Search(s, name, std::move(a));
  }
  if (name == "replace") {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(fn, std::move(args), {"old", "new", "count"}, 2));
    return Replace(in, s, std::move(a));
  }
  if (name == "join") {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(fn, std::move(args), {"iterable"}, 1));
    return Join(in, s, *a[0]);
  }
  if (name == "removeprefix" || name == "removesuffix") {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(fn, std::move(args), {"affix"}, 1));
    return RemoveAffix(s, name == "removeprefix", *a[0]);
  }
  if (name == "center" || name == "ljust" || name == "rjust" || name == "zfill") {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(fn, std::move(args), {"width", "fillchar"}, 1));
    if (name == "zfill" && a[1]) return InvalidArgument("zfill() takes exactly one argument");
    return Pad(in, unicode::Decode(s), name, std::move(a));
  }
  if (name == "partition" || name == "rpartition") {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(fn, std::move(args), {"sep"}, 1));
    return Partition(s, name == "rpartition", *a[0]);
  }
  if (name == "expandtabs") {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(fn, std::move(args), {"tabsize"}));
    return ExpandTabsMethod(in, s, std::move(a));
  }
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(fn, std::move(args), {}));
  if (name.substr(0, 2) == "is") return Predicate(unicode::Decode(s), name);
  return CaseMethod(s, name);
}

}  // namespace smallmind::jinja
