// Number filters (see filters.h): abs, int, float, round, with Python's int()/float()
// parsing.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "gateway/jinja/args.h"
#include "gateway/jinja/filters.h"
#include "gateway/jinja/interpreter.h"
#include "gateway/jinja/ops.h"
#include "gateway/jinja/repr.h"
#include "gateway/jinja/unicode.h"

namespace smallmind::jinja {
namespace {

using shared::InvalidArgument;

Result<Value> Abs(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("abs", std::move(args), {}));
  if (v.is_float()) return Value::Float(std::fabs(v.number()));
  if (v.is_integral()) {
    if (v.integer() == INT64_MIN) return InvalidArgument("integer overflow in abs()");
    return Value::Int(v.integer() < 0 ? -v.integer() : v.integer());
  }
  if (v.is_undefined()) return UndefinedError(v);
  return InvalidArgument("bad operand type for abs(): '" + v.TypeName() + "'");
}

// Python's float(str): whitespace, sign, digits with single underscores, inf/nan.
std::optional<double> ParseFloat(const std::string& text) {
  std::string s(unicode::Strip(text, nullptr, true, true));
  std::string lower = unicode::Lower(s);
  const size_t sign = !lower.empty() && (lower[0] == '+' || lower[0] == '-') ? 1 : 0;
  const std::string body = lower.substr(sign);
  if (body == "inf" || body == "infinity" || body == "nan") {
    const double v = body == "nan" ? NAN : INFINITY;
    return sign && lower[0] == '-' ? -v : v;
  }
  std::string clean;
  bool digits = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_') {
      if (i == 0 || i + 1 >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i - 1])) ||
          !std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
        return std::nullopt;
      }
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c)) &&
        std::string_view("+-.eE").find(c) == std::string_view::npos) {
      return std::nullopt;
    }
    digits |= std::isdigit(static_cast<unsigned char>(c)) != 0;
    clean += c;
  }
  if (!digits) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(clean.c_str(), &end);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return v;
}

// Python's int(str, base).
std::optional<int64_t> ParseInt(const std::string& text, int64_t base) {
  std::string s(unicode::Strip(text, nullptr, true, true));
  bool negative = false;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i + 1 < s.size() && s[i] == '0') {
    const char p = static_cast<char>(std::tolower(s[i + 1]));
    const int64_t prefixed = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (prefixed != 0 && (base == 0 || base == prefixed)) {
      base = prefixed;
      i += 2;
      if (i < s.size() && s[i] == '_') ++i;
    }
  }
  if (base == 0) base = 10;
  if (i >= s.size()) return std::nullopt;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] == '_' && i + 1 < s.size() && s[i + 1] != '_' && i > 0 && s[i - 1] != '_') continue;
    const char c = static_cast<char>(std::tolower(s[i]));
    const int64_t d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                      : (c >= 'a' && c <= 'z')                    ? c - 'a' + 10
                                                                  : 99;
    if (d >= base) return std::nullopt;
    if (__builtin_mul_overflow(v, base, &v) || __builtin_add_overflow(v, d, &v))
      return std::nullopt;
  }
  return negative ? -v : v;
}

Result<Value> Int(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("int", std::move(args), {"default", "base"}));
  const Value fallback = Or(a[0], Value::Int(0));
  if (v.is_undefined()) return UndefinedError(v);
  if (v.is_integral()) return Value::Int(v.integer());
  if (v.is_float()) {
    if (!std::isfinite(v.number()))
      return InvalidArgument("cannot convert float infinity or NaN to integer");
    return Value::Int(static_cast<int64_t>(v.number()));
  }
  if (v.is_string()) {
    SM_ASSIGN_OR_RETURN(int64_t base, ToIndex(Or(a[1], Value::Int(10))));
    if (std::optional<int64_t> i = ParseInt(v.str(), base)) return Value::Int(*i);
    if (std::optional<double> f = ParseFloat(v.str())) {
      if (!std::isfinite(*f)) {
        if (std::isnan(*f)) return fallback;
        return InvalidArgument("cannot convert float infinity to integer");
      }
      return Value::Int(static_cast<int64_t>(*f));
    }
  }
  return fallback;
}

Result<Value> Float(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("float", std::move(args), {"default"}));
  if (v.is_undefined()) return UndefinedError(v);
  if (v.is_number()) return Value::Float(v.number());
  if (v.is_string()) {
    if (std::optional<double> f = ParseFloat(v.str())) return Value::Float(*f);
  }
  return Or(a[0], Value::Float(0.0));
}

Result<Value> Round(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("round", std::move(args), {"precision", "method"}));
  SM_ASSIGN_OR_RETURN(int64_t precision, ToIndex(Or(a[0], Value::Int(0))));
  const std::string method = a[1] ? Str(*a[1]) : "common";
  if (method != "common" && method != "ceil" && method != "floor") {
    return InvalidArgument("method must be common, ceil or floor");
  }
  if (v.is_undefined()) return UndefinedError(v);
  if (!v.is_number())
    return InvalidArgument("type " + v.TypeName() + " doesn't define __round__ method");
  if (precision > 300 || precision < -300) return Value::Float(v.number());
  if (method != "common") {
    const double scale = std::pow(10.0, static_cast<double>(precision));
    const double x = v.number() * scale;
    return Value::Float((method == "ceil" ? std::ceil(x) : std::floor(x)) / scale);
  }
  if (v.is_integral() && precision >= 0) return Value::Int(v.integer());
  const double x = v.number();
  if (!std::isfinite(x)) return Value::Float(x);
  if (precision >= 0) {  // printf rounds the exact binary value, ties to even, as Python does
    char buf[512];
    std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(precision), x);
    return Value::Float(std::strtod(buf, nullptr));
  }
  const double scale = std::pow(10.0, static_cast<double>(-precision));
  const double r = std::nearbyint(x / scale) * scale;
  if (v.is_integral()) return Value::Int(static_cast<int64_t>(r));
  return Value::Float(r);
}

}  // namespace

FilterFn FindNumberFilter(std::string_view name) {
  if (name == "abs") return Abs;
  if (name == "int") return Int;
  if (name == "float") return Float;
  if (name == "round") return Round;
  return nullptr;
}

}  // namespace smallmind::jinja
