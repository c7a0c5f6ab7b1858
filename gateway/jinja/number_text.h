// Number-to-text helpers shared by the two string formatting languages (printf-style `%` and
// str.format): C printf of a double, integer digits in a base, digit grouping, padding to a width
// in code points. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace smallmind::jinja {

// snprintf(`spec`, v) for a printf spec with one double conversion.
std::string CFormat(const std::string& spec, double v);
// |v| in `base` (2..16), lower or upper case hex digits.
std::string IntDigits(int64_t v, int base, bool upper);
// Inserts `sep` every `every` digits from the right.
std::string Group(const std::string& digits, char sep, size_t every);
// prefix + body padded to `width` code points with `fill`: align '<', '>', '^' or '=' (padding
// between the sign/prefix and the body).
std::string Align(const std::string& prefix, const std::string& body, size_t width, char32_t fill,
                  char align);

}  // namespace smallmind::jinja
