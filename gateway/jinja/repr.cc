#include "gateway/jinja/repr.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "gateway/jinja/unicode.h"

namespace smallmind::jinja {
namespace {

// A safety net: values nest at most kMaxValueDepth levels (deeper ones are refused when built)
// and a namespace inside itself prints as "{...}", so this is never reached in practice.
constexpr int kMaxReprDepth = 2 * kMaxValueDepth;

void AppendReprAt(std::string& out, const Value& v, int depth);

void AppendItems(std::string& out, const ValueList& items, int depth) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    AppendReprAt(out, items[i], depth + 1);
  }
}

void AppendContainer(std::string& out, const Value& v, int depth) {
  if (depth > kMaxReprDepth) {
    out += "...";
    return;
  }
  switch (v.kind()) {
    case Kind::kList:
      out += '[';
      AppendItems(out, v.list(), depth);
      out += ']';
      return;
    case Kind::kTuple:
      out += '(';
      AppendItems(out, v.list(), depth);
      if (v.list().size() == 1) out += ',';
      out += ')';
      return;
    case Kind::kDictView:
      out += v.TypeName() + "([";
      AppendItems(out, v.list(), depth);
      out += "])";
      return;
    case Kind::kDict: {
      out += '{';
      bool first = true;
      for (const auto& [key, value] : v.dict().entries()) {
        if (!first) out += ", ";
        first = false;
        AppendReprAt(out, key, depth + 1);
        out += ": ";
        AppendReprAt(out, value, depth + 1);
      }
      out += '}';
      return;
    }
    default: return;
  }
}

void AppendScalar(std::string& out, const Value& v, int depth) {
  switch (v.kind()) {
    case Kind::kUndefined: return;
    case Kind::kNone: out += "None"; return;
    case Kind::kBool: out += v.boolean() ? "True" : "False"; return;
    case Kind::kInt: out += std::to_string(v.integer()); return;
    case Kind::kFloat: out += ReprFloat(v.number()); return;
    case Kind::kObject: out += v.object().Repr(depth); return;
    case Kind::kCallable: out += v.callable().Repr(); return;
    case Kind::kIterator: out += "<" + v.TypeName() + " object>"; return;
    default: return;
  }
}

void AppendReprAt(std::string& out, const Value& v, int depth) {
  switch (v.kind()) {
    case Kind::kUndefined: out += "Undefined"; return;
    case Kind::kString:
      if (v.safe()) {
        out += "Markup(" + ReprString(v.str()) + ")";
      } else {
        out += ReprString(v.str());
      }
      return;
    case Kind::kList:
    case Kind::kTuple:
    case Kind::kDict:
    case Kind::kDictView: AppendContainer(out, v, depth); return;
    default: AppendScalar(out, v, depth); return;
  }
}

void AppendHexEscape(std::string& out, char prefix, int digits, char32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "\\%c%0*x", prefix, digits, static_cast<unsigned>(cp));
  out += buf;
}

}  // namespace

void AppendStr(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Kind::kString: out += v.str(); return;
    case Kind::kList:
    case Kind::kTuple:
    case Kind::kDict:
    case Kind::kDictView: AppendContainer(out, v, 0); return;
    default: AppendScalar(out, v, 0); return;
  }
}

std::string Str(const Value& v) {
  if (v.is_string()) return v.str();
  std::string out;
  AppendStr(out, v);
  return out;
}

void AppendRepr(std::string& out, const Value& v) { AppendReprAt(out, v, 0); }

std::string Repr(const Value& v) {
  std::string out;
  AppendRepr(out, v);
  return out;
}

std::string ReprAt(const Value& v, int depth) {
  std::string out;
  AppendReprAt(out, v, depth);
  return out;
}

std::string ReprFloat(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // Shortest round-trip digits, then Python's layout: fixed for 1e-4 <= |d| < 1e16, else
  // d.ddde+XX with at least two exponent digits.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  std::string out;
  size_t pos = 0;
  if (sci[0] == '-') {
    out += '-';
    pos = 1;
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (size_t i = pos; i < e; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  const int exponent = std::atoi(sci.c_str() + e + 1);
  const int decpt = exponent + 1;  // digits are 0.d1d2... x 10^decpt
  const int n = static_cast<int>(digits.size());
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0." + std::string(-decpt, '0') + digits;
    } else if (decpt >= n) {
      out += digits + std::string(decpt - n, '0') + ".0";
    } else {
      out += digits.substr(0, decpt) + "." + digits.substr(decpt);
    }
    return out;
  }
  out += digits[0];
  if (n > 1) out += "." + digits.substr(1);
  char exp_buf[16];
  std::snprintf(exp_buf, sizeof(exp_buf), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  out += exp_buf;
  return out;
}

std::string ReprString(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out;
  out.reserve(s.size() + 2);
  out += quote;
  for (size_t i = 0; i < s.size();) {
    const char32_t cp = unicode::Next(s, i);
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x20 || cp == 0x7F) {
      AppendHexEscape(out, 'x', 2, cp);
    } else if (cp < 0x7F || unicode::IsPrintable(cp)) {
      unicode::Append(out, cp);
    } else if (cp <= 0xFF) {
      AppendHexEscape(out, 'x', 2, cp);
    } else if (cp <= 0xFFFF) {
      AppendHexEscape(out, 'u', 4, cp);
    } else {
      AppendHexEscape(out, 'U', 8, cp);
    }
  }
  out += quote;
  return out;
}

}  // namespace smallmind::jinja
