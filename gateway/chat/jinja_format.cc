#include "gateway/chat/jinja_format.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include "gateway/chat/jinja_access.h"
#include "gateway/chat/jinja_interpreter.h"
#include "gateway/chat/jinja_repr.h"
#include "gateway/chat/jinja_unicode.h"

namespace smallmind::gateway::jinja {
namespace {

using shared::InvalidArgument;

std::string CFormat(const std::string& spec, double v) {
  const int n = std::snprintf(nullptr, 0, spec.c_str(), v);
  std::vector<char> buf(static_cast<size_t>(n) + 1);
  std::snprintf(buf.data(), buf.size(), spec.c_str(), v);
  return std::string(buf.data(), static_cast<size_t>(n));
}

std::string IntDigits(int64_t v, int base, bool upper) {
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  std::string digits;
  do {
    const int d = static_cast<int>(u % static_cast<uint64_t>(base));
    digits += static_cast<char>(d < 10 ? '0' + d : (upper ? 'A' : 'a') + d - 10);
    u /= static_cast<uint64_t>(base);
  } while (u > 0);
  return std::string(digits.rbegin(), digits.rend());
}

std::string Group(const std::string& digits, char sep, size_t every) {
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % every == 0) out += sep;
    out += digits[i];
  }
  return out;
}

// Pads `body` (with its sign/prefix split off for '=' alignment) to `width` code points.
std::string Align(const std::string& prefix, const std::string& body, size_t width, char32_t fill,
                  char align) {
  const size_t len = unicode::Length(prefix) + unicode::Length(body);
  if (width <= len) return prefix + body;
  const size_t pad = width - len;
  std::string f;
  unicode::Append(f, fill);
  auto repeat = [&](size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += f;
    return s;
  };
  switch (align) {
    case '<': return prefix + body + repeat(pad);
    case '^': return repeat(pad / 2) + prefix + body + repeat(pad - pad / 2);
    case '=': return prefix + repeat(pad) + body;
    default: return repeat(pad) + prefix + body;
  }
}

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
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') s.width = s.width * 10 + (t[i++] - '0');
  if (i < t.size() && (t[i] == ',' || t[i] == '_')) s.grouping = static_cast<char>(t[i++]);
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (i >= t.size() || t[i] < '0' || t[i] > '9')
      return InvalidArgument("Format specifier missing precision");
    s.precision = 0;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9')
      s.precision = s.precision * 10 + (t[i++] - '0');
  }
  if (i < t.size()) s.type = static_cast<char>(t[i++]);
  if (i < t.size() || s.width > (1u << 24)) return InvalidArgument("Invalid format specifier");
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

// One printf conversion of `v` for the %-operator.
Result<std::string> PercentOne(const Value& v, std::string flags, int width, int precision,
                               char type) {
  std::string out;
  if (type == 's' || type == 'r' || type == 'a') {
    std::u32string s = unicode::Decode(type == 's' ? Str(v) : Repr(v));
    if (precision >= 0 && static_cast<size_t>(precision) < s.size()) s.resize(precision);
    out = unicode::Encode(s);
    const size_t len = s.size();
    if (width > 0 && static_cast<size_t>(width) > len) {
      const std::string pad(static_cast<size_t>(width) - len, ' ');
      out = flags.find('-') != std::string::npos ? out + pad : pad + out;
    }
    return out;
  }
  if (type == 'c') {
    if (v.is_integral())
      return PercentOne(
          Value::String(unicode::Encode(std::u32string(1, static_cast<char32_t>(v.integer())))),
          flags, width, -1, 's');
    if (v.is_string() && unicode::Length(v.str()) == 1) return PercentOne(v, flags, width, -1, 's');
    return InvalidArgument("%c requires int or char");
  }
  const std::string conversion = std::string("%") + type;
  if (!v.is_number()) {
    if (std::string_view("diu").find(type) != std::string_view::npos) {
      return InvalidArgument(conversion + " format: a real number is required, not " +
                             v.TypeName());
    }
    if (std::string_view("oxX").find(type) != std::string_view::npos) {
      return InvalidArgument(conversion + " format: an integer is required, not " + v.TypeName());
    }
    return InvalidArgument("must be real number, not " + v.TypeName());
  }
  if (std::string_view("diuoxX").find(type) != std::string_view::npos) {
    if (v.is_float() && std::string_view("oxX").find(type) != std::string_view::npos) {
      return InvalidArgument(conversion + " format: an integer is required, not float");
    }
    if (v.is_float() && !std::isfinite(v.number())) {
      return InvalidArgument("cannot convert float infinity or NaN to integer");
    }
    const int64_t i = v.is_float() ? static_cast<int64_t>(v.number()) : v.integer();
    const int base = type == 'o' ? 8 : (type == 'x' || type == 'X') ? 16 : 10;
    std::string digits = IntDigits(i, base, type == 'X');
    if (precision >= 0 && digits.size() < static_cast<size_t>(precision)) {
      digits.insert(0, static_cast<size_t>(precision) - digits.size(), '0');
    }
    std::string prefix = i < 0                                  ? "-"
                         : flags.find('+') != std::string::npos ? "+"
                         : flags.find(' ') != std::string::npos ? " "
                                                                : "";
    if (flags.find('#') != std::string::npos && base != 10) {
      prefix += base == 8 ? "0o" : type == 'X' ? "0X" : "0x";
    }
    const char align = flags.find('-') != std::string::npos   ? '<'
                       : flags.find('0') != std::string::npos ? '='
                                                              : '>';
    return Align(prefix, digits, width > 0 ? static_cast<size_t>(width) : 0,
                 align == '=' ? '0' : ' ', align);
  }
  std::string spec = "%" + flags;
  if (width > 0) spec += std::to_string(width);
  spec += "." + std::to_string(precision < 0 ? 6 : precision) + type;
  return CFormat(spec, v.number());
}

}  // namespace

Result<Value> PercentFormat(Interpreter& in, const Value& fmt, const Value& args) {
  const std::string& f = fmt.str();
  ValueList positional;
  if (args.is_tuple()) {
    positional = args.list();
  } else {
    positional.push_back(args);
  }
  const bool mapping = args.is_dict();
  size_t next = 0;
  bool used_mapping = false;
  std::string out;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') {
      out += f[i];
      continue;
    }
    if (++i >= f.size()) return InvalidArgument("incomplete format");
    const Value* value = nullptr;
    if (f[i] == '(') {
      const size_t close = f.find(')', i);
      if (close == std::string::npos) return InvalidArgument("incomplete format key");
      if (!mapping) return InvalidArgument("format requires a mapping");
      const Value* v = args.dict().Find(std::string_view(f).substr(i + 1, close - i - 1));
      if (v == nullptr) return InvalidArgument("'" + f.substr(i + 1, close - i - 1) + "'");
      value = v;
      used_mapping = true;
      i = close + 1;
    }
    std::string flags;
    while (i < f.size() && std::string_view("#0- +").find(f[i]) != std::string_view::npos)
      flags += f[i++];
    auto number = [&](int& n) -> Status {
      n = -1;
      if (i < f.size() && f[i] == '*') {
        ++i;
        if (next >= positional.size() || !positional[next].is_integral())
          return InvalidArgument("* wants int");
        n = static_cast<int>(positional[next++].integer());
        return Status::Ok();
      }
      while (i < f.size() && f[i] >= '0' && f[i] <= '9') {
        n = (n < 0 ? 0 : n * 10) + (f[i++] - '0');
        if (n > (1 << 24)) return InvalidArgument("width too big");
      }
      return Status::Ok();
    };
    int width = -1, precision = -1;
    SM_RETURN_IF_ERROR(number(width));
    if (i < f.size() && f[i] == '.') {
      ++i;
      SM_RETURN_IF_ERROR(number(precision));
      if (precision < 0) precision = 0;
    }
    while (i < f.size() && (f[i] == 'h' || f[i] == 'l' || f[i] == 'L')) ++i;
    if (i >= f.size()) return InvalidArgument("incomplete format");
    const char type = f[i];
    if (type == '%') {
      out += '%';
      continue;
    }
    if (std::string_view("sradiuoxXeEfFgGc").find(type) == std::string_view::npos) {
      return InvalidArgument(std::string("unsupported format character '") + type + "'");
    }
    if (value == nullptr) {
      if (next >= positional.size())
        return InvalidArgument("not enough arguments for format string");
      value = &positional[next++];
    }
    SM_ASSIGN_OR_RETURN(std::string piece, PercentOne(*value, flags, width, precision, type));
    out += piece;
    SM_RETURN_IF_ERROR(in.CheckString(out.size()));
  }
  if (!mapping && !used_mapping && next < positional.size()) {
    return InvalidArgument("not all arguments converted during string formatting");
  }
  return Value::String(std::move(out));
}

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

Result<Value> StrFormat(Interpreter& in, const std::string& fmt, CallArgs args) {
  std::string out;
  size_t auto_index = 0;
  bool manual = false, automatic = false;
  for (size_t i = 0; i < fmt.size(); ++i) {
    const char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
        out += '}';
        ++i;
        continue;
      }
      return InvalidArgument("Single '}' encountered in format string");
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    const size_t close = fmt.find('}', i);
    if (close == std::string::npos)
      return InvalidArgument("Single '{' encountered in format string");
    std::string field = fmt.substr(i + 1, close - i - 1);
    if (field.find('{') != std::string::npos)
      return InvalidArgument("nested replacement fields are not supported");
    i = close;
    std::string spec;
    char conversion = 0;
    if (const size_t colon = field.find(':'); colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field.resize(colon);
    }
    if (const size_t bang = field.find('!'); bang != std::string::npos) {
      if (bang + 2 != field.size())
        return InvalidArgument("expected ':' after conversion specifier");
      conversion = field[bang + 1];
      field.resize(bang);
    }
    const size_t name_end = field.find_first_of(".[");
    const std::string head = field.substr(0, name_end);
    Value v;
    if (head.empty() || std::isdigit(static_cast<unsigned char>(head[0]))) {
      size_t index = auto_index;
      if (head.empty()) {
        automatic = true;
        ++auto_index;
      } else {
        manual = true;
        index = std::stoul(head);
      }
      if (manual && automatic) {
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
        SM_ASSIGN_OR_RETURN(
            v, GetAttr(v, field.substr(p + 1, e == std::string::npos ? e : e - p - 1)));
        p = e;
      } else {
        const size_t e = field.find(']', p);
        if (e == std::string::npos) return InvalidArgument("Missing ']' in format string");
        const std::string key = field.substr(p + 1, e - p - 1);
        const bool numeric =
            !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
        SM_ASSIGN_OR_RETURN(v,
                            GetItem(v, numeric ? Value::Int(std::stoll(key)) : Value::String(key)));
        p = e + 1;
      }
    }
    if (conversion == 'r' || conversion == 'a') v = Value::String(Repr(v));
    if (conversion == 's') v = Value::String(Str(v));
    if (conversion != 0 && conversion != 'r' && conversion != 's' && conversion != 'a') {
      return InvalidArgument(std::string("Unknown conversion specifier ") + conversion);
    }
    SM_ASSIGN_OR_RETURN(std::string piece, FormatWithSpec(v, spec));
    out += piece;
    SM_RETURN_IF_ERROR(in.CheckString(out.size()));
  }
  return Value::String(std::move(out));
}

}  // namespace smallmind::gateway::jinja
