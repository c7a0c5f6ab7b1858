// printf-style `%` formatting (see format.h).
#include "gateway/jinja/format.h"

#include <algorithm>
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

// PercentOne's %s, %r and %a: the text, cut to `precision` and padded to `width` code points.
std::string PercentText(const Value& v, const std::string& flags, int width, int precision,
                        char type) {
  std::string out;
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

// PercentOne's error for a numeric conversion of a value that is no number.
Status NotANumber(const Value& v, char type) {
  const std::string conversion = std::string("%") + type;
  if (std::string_view("diu").find(type) != std::string_view::npos) {
    return InvalidArgument(conversion + " format: a real number is required, not " + v.TypeName());
  }
  if (std::string_view("oxX").find(type) != std::string_view::npos) {
    return InvalidArgument(conversion + " format: an integer is required, not " + v.TypeName());
  }
  return InvalidArgument("must be real number, not " + v.TypeName());
}

// PercentOne's %d, %i, %u, %o, %x and %X of the number `v`.
Result<std::string> PercentInteger(const Value& v, const std::string& flags, int width,
                                   int precision, char type) {
  const std::string conversion = std::string("%") + type;
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
  return Align(prefix, digits, width > 0 ? static_cast<size_t>(width) : 0, align == '=' ? '0' : ' ',
               align);
}

// One printf conversion of `v` for the %-operator.
Result<std::string> PercentOne(const Value& v, std::string flags, int width, int precision,
                               char type) {
  if (type == 's' || type == 'r' || type == 'a')
    return PercentText(v, flags, width, precision, type);
  if (type == 'c') {
    if (v.is_integral())
      return PercentOne(
          Value::String(unicode::Encode(std::u32string(1, static_cast<char32_t>(v.integer())))),
          flags, width, -1, 's');
    if (v.is_string() && unicode::Length(v.str()) == 1) return PercentOne(v, flags, width, -1, 's');
    return InvalidArgument("%c requires int or char");
  }
  if (!v.is_number()) return NotANumber(v, type);
  if (std::string_view("diuoxX").find(type) != std::string_view::npos) {
    return PercentInteger(v, flags, width, precision, type);
  }
  std::string spec = "%" + flags;
  if (width > 0) spec += std::to_string(width);
  spec += "." + std::to_string(precision < 0 ? 6 : precision) + type;
  return CFormat(spec, v.number());
}

}  // namespace

namespace {

// One printf conversion after its '%': [(key)][flags][width][.precision][length]type. A '*' width
// or precision takes the next positional value.
struct Conversion {
  bool has_key = false;
  std::string key;
  std::string flags;
  int width = -1;
  int precision = -1;
  char type = 0;
};

Result<Conversion> ParseConversion(std::string_view f, size_t& i, const ValueList& positional,
                                   size_t& next) {
  Conversion c;
  if (i >= f.size()) return InvalidArgument("incomplete format");
  if (f[i] == '(') {
    const size_t close = f.find(')', i);
    if (close == std::string_view::npos) return InvalidArgument("incomplete format key");
    c.has_key = true;
    c.key = std::string(f.substr(i + 1, close - i - 1));
    i = close + 1;
  }
  while (i < f.size() && std::string_view("#0- +").find(f[i]) != std::string_view::npos) {
    c.flags += f[i++];
  }
  auto number = [&](int& n) -> Status {
    if (i < f.size() && f[i] == '*') {
      ++i;
      if (next >= positional.size() || !positional[next].is_integral()) {
        return InvalidArgument("* wants int");
      }
      n = static_cast<int>(std::clamp<int64_t>(positional[next++].integer(), -1, 1 << 24));
      return Status::Ok();
    }
    while (i < f.size() && f[i] >= '0' && f[i] <= '9') {
      n = (n < 0 ? 0 : n * 10) + (f[i++] - '0');
      if (n > (1 << 24)) return InvalidArgument("width too big");
    }
    return Status::Ok();
  };
  SM_RETURN_IF_ERROR(number(c.width));
  if (i < f.size() && f[i] == '.') {
    ++i;
    SM_RETURN_IF_ERROR(number(c.precision));
    if (c.precision < 0) c.precision = 0;
  }
  while (i < f.size() && (f[i] == 'h' || f[i] == 'l' || f[i] == 'L')) ++i;
  if (i >= f.size()) return InvalidArgument("incomplete format");
  c.type = f[i];
  if (std::string_view("%sradiuoxXeEfFgGc").find(c.type) == std::string_view::npos) {
    return InvalidArgument(std::string("unsupported format character '") + c.type + "'");
  }
  return c;
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
  std::string out;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') {
      out += f[i];
      continue;
    }
    ++i;
    SM_ASSIGN_OR_RETURN(Conversion c, ParseConversion(f, i, positional, next));
    if (c.type == '%') {
      out += '%';
      continue;
    }
    const Value* value = nullptr;
    if (c.has_key) {
      if (!mapping) return InvalidArgument("format requires a mapping");
      value = args.dict().Find(c.key);
      if (value == nullptr) return InvalidArgument("'" + c.key + "'");
    } else {
      if (next >= positional.size()) {
        return InvalidArgument("not enough arguments for format string");
      }
      value = &positional[next++];
    }
    SM_ASSIGN_OR_RETURN(std::string piece,
                        PercentOne(*value, c.flags, c.width, c.precision, c.type));
    out += piece;
    SM_RETURN_IF_ERROR(in.CheckString(out.size()));
  }
  if (!mapping && next < positional.size()) {
    return InvalidArgument("not all arguments converted during string formatting");
  }
  return Value::String(std::move(out));
}

}  // namespace smallmind::jinja
