#include "gateway/jinja/number_text.h"

#include <cstdio>
#include <vector>

#include "gateway/jinja/unicode.h"

namespace smallmind::jinja {

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

}  // namespace smallmind::jinja
