// str.format() and its format-spec mini-language (see format.h).
#include "gateway/jinja/format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>

#include "gateway/jinja/access.h"
#include "gateway/jinja/interpreter.h"
#include "gateway/jinja/number_text.h"
#include "gateway/jinja/repr.h"
#include "gateway/jinja/unicode.h"

namespace smallmind::jinja {
namespace {

using shared::InvalidArgument;

struct Spec {
  char32_t fill = ' ';
  char align = 0;
  char sign = '-';
  bool alternate = false;
  size_t width = 0;
  char grouping = 0;
  int precision = -1;
  char type = 0;
};

Result<Spec> ParseSpec(std::string_view text) {
  Spec s;
  const std::u32string t = unicode::Decode(text);
  size_t i = 0;
  auto is_align = [](char32_t c) { return c == '<' || c == '>' || c == '=' || c == '^'; };
  if (t.size() >= 2 && is_align(t[1])) {
    s.fill = t[0];
    s.align = static_cast<char>(t[1]);
    i = 2;
  } else if (!t.empty() && is_align(t[0])) {
    s.align = static_cast<char>(t[0]);
    i = 1;
  }
  if (i < t.size() && (t[i] == '+' || t[i] == '-' || t[i] == ' '))
    s.sign = static_cast<char>(t[i++]);
  if (i < t.size() && t[i] == '#') s.alternate = true, ++i;
  if (i < t.size() && t[i] == '0') {
    if (s.align == 0) s.fill = '0', s.align = '=';
    ++i;
  }
  // Widths and precisions past 2^24 are refused while their digits are read (they would overflow,
  // and a precision of 10^9 had a float formatted to a gigabyte before any size check).
  constexpr size_t kMaxDigitsValue = size_t{1} << 24;
  auto digits = [&](size_t& n) -> bool {
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
      n = n * 10 + (t[i++] - '0');
      if (n > kMaxDigitsValue) return false;
    }
    return true;
  };
  if (!digits(s.width)) return InvalidArgument("Invalid format specifier");
  if (i < t.size() && (t[i] == ',' || t[i] == '_')) s.grouping = static_cast<char>(t[i++]);
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (i >= t.size() || t[i] < '0' || t[i] > '9')
      return InvalidArgument("Format specifier missing precision");
    size_t precision = 0;
    if (!digits(precision)) return InvalidArgument("Invalid format specifier");
    s.precision = static_cast<int>(precision);
  }
  if (i < t.size()) s.type = static_cast<char>(t[i++]);
  if (i < t.size()) return InvalidArgument("Invalid format specifier");
  return s;
}

Result<std::string> FormatFloat(double v, const Spec& s) {
  char type = s.type;
  std::string body;
  const double a = std::fabs(v);
  if (type == 0 && s.precision < 0) {
    body = ReprFloat(a);
  } else {
    const int prec = s.precision < 0 ? 6 : s.precision;
    const bool percent = type == '%';
    const char c = type == 0 ? 'g' : percent ? 'f' : type == 'n' ? 'g' : type;
    body = CFormat(std::string("%") + (s.alternate ? "#" : "") + "." + std::to_string(prec) + c,
                   percent ? a * 100 : a);
    if (type == 0 && body.find_first_of(".enai") == std::string::npos) body += ".0";
    if (percent) body += '%';
  }
  if (s.grouping != 0 && std::isfinite(v)) {
    const size_t end = body.find_first_not_of("0123456789");
    body = Group(body.substr(0, end), s.grouping, 3) +
           (end == std::string::npos ? "" : body.substr(end));
  }
  const std::string sign = std::signbit(v) && !std::isnan(v) ? "-"
                           : s.sign == '+'                   ? "+"
                           : s.sign == ' '                   ? " "
                                                             : "";
  return Align(sign, body, s.width, s.fill, s.align == 0 ? '>' : s.align);
}

Result<std::string> FormatInt(int64_t v, const Spec& s) {
  const char type = s.type == 0 ? 'd' : s.type;
  if (std::string_view("eEfFgG%").find(type) != std::string_view::npos) {
    return FormatFloat(static_cast<double>(v), s);
  }
  if (s.precision >= 0) return InvalidArgument("Precision not allowed in integer format specifier");
  std::string prefix = v < 0 ? "-" : s.sign == '+' ? "+" : s.sign == ' ' ? " " : "";
  std::string body;
  if (type == 'c') {
    unicode::Append(body, static_cast<char32_t>(v));
    return Align("", body, s.width, s.fill, s.align == 0 ? '<' : s.align);
  }
  const int base = type == 'b' ? 2 : type == 'o' ? 8 : (type == 'x' || type == 'X') ? 16 : 10;
  if (std::string_view("bdoxXn").find(type) == std::string_view::npos) {
    return InvalidArgument(std::string("Unknown format code '") + type +
                           "' for object of type 'int'");
  }
  if (s.alternate && base != 10)
    prefix += base == 2 ? "0b" : base == 8 ? "0o" : type == 'X' ? "0X" : "0x";
  body = IntDigits(v, base, type == 'X');
  if (s.grouping != 0) body = Group(body, s.grouping, base == 10 ? 3 : 4);
  return Align(prefix, body, s.width, s.fill, s.align == 0 ? '>' : s.align);
}

}  // namespace

Result<std::string> FormatWithSpec(const Value& v, std::string_view spec) {
  if (spec.empty()) return Str(v);
  SM_ASSIGN_OR_RETURN(Spec s, ParseSpec(spec));
  if (v.is_string()) {
    if (s.type != 0 && s.type != 's') {
      return InvalidArgument(std::string("Unknown format code '") + s.type +
                             "' for object of type 'str'");
    }
    if (s.align == '=')
      return InvalidArgument("'=' alignment not allowed in string format specifier");
    std::u32string t = unicode::Decode(v.str());
    if (s.precision >= 0 && static_cast<size_t>(s.precision) < t.size()) t.resize(s.precision);
    return Align("", unicode::Encode(t), s.width, s.fill, s.align == 0 ? '<' : s.align);
  }
  if (v.is_integral()) return FormatInt(v.integer(), s);
  if (v.is_float()) {
    if (s.type != 0 && std::string_view("eEfFgGn%").find(s.type) == std::string_view::npos) {
      return InvalidArgument(std::string("Unknown format code '") + s.type +
                             "' for object of type 'float'");
    }
    return FormatFloat(v.number(), s);
  }
  return InvalidArgument("unsupported format string passed to " + v.TypeName() + ".__format__");
}

namespace {

// Parses a run of ASCII digits without exceptions; nullopt when empty, not all digits or too big.
std::optional<int64_t> Digits(std::string_view s) {
  int64_t v = 0;
  if (s.empty()) return std::nullopt;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// str.format's automatic ({}) versus manual ({0}) field numbering, which may not be mixed.
struct FieldNumbering {
  size_t next = 0;
  bool manual = false;
  bool automatic = false;
};

// The value a replacement field names: an argument, then `.attr` and `[key]` steps.
Result<Value> LookUpField(const std::string& field, const CallArgs& args, FieldNumbering& n) {
  const size_t name_end = field.find_first_of(".[");
  const std::string head = field.substr(0, name_end);
  Value v;
  if (head.empty() || std::isdigit(static_cast<unsigned char>(head[0]))) {
    size_t index = n.next;
    if (head.empty()) {
      n.automatic = true;
      ++n.next;
    } else {
      n.manual = true;
      const std::optional<int64_t> i = Digits(head);
      if (!i) return InvalidArgument("bad replacement field '" + head + "'");
      index = static_cast<size_t>(*i);
    }
    if (n.manual && n.automatic) {
      return InvalidArgument(
          "cannot switch from automatic field numbering to manual field specification");
    }
    if (index >= args.positional.size()) {
      return InvalidArgument("Replacement index " + std::to_string(index) +
                             " out of range for positional args tuple");
    }
    v = args.positional[index];
  } else {
    bool found = false;
    for (const auto& [k, kv] : args.keywords) {
      if (k == head) v = kv, found = true;
    }
    if (!found) return InvalidArgument("'" + head + "'");
  }
  for (size_t p = name_end; p != std::string::npos && p < field.size();) {
    if (field[p] == '.') {
      const size_t e = field.find_first_of(".[", p + 1);
      SM_ASSIGN_OR_RETURN(v,
                          GetAttr(v, field.substr(p + 1, e == std::string::npos ? e : e - p - 1)));
      p = e;
    } else {
      const size_t e = field.find(']', p);
      if (e == std::string::npos) return InvalidArgument("Missing ']' in format string");
      const std::string key = field.substr(p + 1, e - p - 1);
      const std::optional<int64_t> index = Digits(key);
      SM_ASSIGN_OR_RETURN(v, GetItem(v, index ? Value::Int(*index) : Value::String(key)));
      p = e + 1;
    }
  }
  return v;
}

// One {field!conversion:spec}, formatted.
Result<std::string> FormatField(std::string field, const CallArgs& args, FieldNumbering& n) {
  if (field.find('{') != std::string::npos) {
    return InvalidArgument("nested replacement fields are not supported");
  }
  std::string spec;
  char conversion = 0;
  if (const size_t colon = field.find(':'); colon != std::string::npos) {
    spec = field.substr(colon + 1);
    field.resize(colon);
  }
  if (const size_t bang = field.find('!'); bang != std::string::npos) {
    if (bang + 2 != field.size()) return InvalidArgument("expected ':' after conversion specifier");
    conversion = field[bang + 1];
    field.resize(bang);
  }
  SM_ASSIGN_OR_RETURN(Value v, LookUpField(field, args, n));
  if (conversion == 'r' || conversion == 'a') v = Value::String(Repr(v));
  if (conversion == 's') v = Value::String(Str(v));
  if (conversion != 0 && conversion != 'r' && conversion != 's' && conversion != 'a') {
    return InvalidArgument(std::string("Unknown conversion specifier ") + conversion);
  }
  return FormatWithSpec(v, spec);
}

}  // namespace

Result<Value> StrFormat(Interpreter& in, const std::string& fmt, CallArgs args) {
  std::string out;
  FieldNumbering numbering;
  for (size_t i = 0; i < fmt.size(); ++i) {
    const char c = fmt[i];
    if ((c == '{' || c == '}') && i + 1 < fmt.size() && fmt[i + 1] == c) {  // {{ and }}
      out += c;
      ++i;
      continue;
    }
    if (c == '}') return InvalidArgument("Single '}' encountered in format string");
    if (c != '{') {
      out += c;
      continue;
    }
    const size_t close = fmt.find('}', i);
    if (close == std::string::npos) {
      return InvalidArgument("Single '{' encountered in format string");
    }
    SM_ASSIGN_OR_RETURN(std::string piece,
                        FormatField(fmt.substr(i + 1, close - i - 1), args, numbering));
    i = close;
    out += piece;
    SM_RETURN_IF_ERROR(in.CheckString(out.size()));
  }
  return Value::String(std::move(out));
}

}  // namespace smallmind::jinja
