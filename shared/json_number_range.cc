#include "shared/json_number_range.h"

#include <algorithm>
#include <array>
#include <string>

namespace smallmind::shared {
namespace {

using Scaled = NumberRange::Scaled;
constexpr int kScale = NumberRange::kMaxFractionDigits;

// 10^0 .. 10^30.
constexpr std::array<Scaled, 31> kPow10 = [] {
  std::array<Scaled, 31> p{};
  p[0] = 1;
  for (size_t i = 1; i < p.size(); i++) p[i] = p[i - 1] * 10;
  return p;
}();

// Beyond every bounded number (10^30 units): where a bound far out of range saturates.
constexpr Scaled kFar = kPow10[30];

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// floor and ceil of the JSON number `text` times 10^kScale, saturated at +-kFar. False when text
// is not a JSON number.
bool ScaledFloorCeil(std::string_view text, Scaled* floor, Scaled* ceil) {
  size_t i = 0;
  const bool negative = i < text.size() && text[i] == '-';
  if (negative) ++i;
  std::string digits;  // integer then fraction digits
  int frac = 0;
  const size_t int_start = i;
  while (i < text.size() && IsDigit(text[i])) digits += text[i++];
  if (i == int_start || (digits.size() > 1 && digits[0] == '0')) return false;
  if (i < text.size() && text[i] == '.') {
    const size_t frac_start = ++i;
    while (i < text.size() && IsDigit(text[i])) {
      digits += text[i++];
      ++frac;
    }
    if (i == frac_start) return false;
  }
  int64_t exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exp_negative = text[i++] == '-';
    const size_t exp_start = i;
    while (i < text.size() && IsDigit(text[i])) {
      exponent = std::min<int64_t>(exponent * 10 + (text[i++] - '0'), 1'000'000);
    }
    if (i == exp_start) return false;
    if (exp_negative) exponent = -exponent;
  }
  if (i != text.size()) return false;

  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
  // The value is digits x 10^shift units.
  const int64_t shift = exponent - frac + kScale;
  Scaled magnitude = 0;
  bool inexact = false;
  const auto len = static_cast<int64_t>(digits.size());
  if (len > 0 && len + shift > 30) {
    magnitude = kFar;
  } else {
    const int64_t kept = std::clamp<int64_t>(len + std::min<int64_t>(shift, 0), 0, len);
    for (int64_t d = 0; d < kept; d++) magnitude = magnitude * 10 + (digits[d] - '0');
    for (int64_t d = kept; d < len; d++) inexact = inexact || digits[d] != '0';
    if (shift > 0) magnitude *= kPow10[static_cast<size_t>(shift)];
  }
  const Scaled up = magnitude + (inexact ? 1 : 0);
  *floor = negative ? -up : magnitude;
  *ceil = negative ? -magnitude : up;
  return true;
}

// Some multiple of `step` in [a, b] (a >= 0).
bool StepIn(Scaled a, Scaled b, Scaled step) {
  const Scaled first = (a + step - 1) / step * step;
  return first <= b;
}

// Some number whose magnitude is a multiple of `step` in [low, high] has its value in range
// (below zero when negative).
bool MagnitudesReach(const NumberRange& r, bool negative, Scaled low, Scaled high, Scaled step) {
  if (negative) return StepIn(std::max({low, -r.hi, Scaled{1}}), std::min(high, -r.lo), step);
  return StepIn(std::max(low, r.lo), std::min(high, r.hi), step);
}

}  // namespace

bool NumberRange::Apply(std::string_view keyword, std::string_view number) {
  Scaled floor = 0, ceil = 0;
  if (!ScaledFloorCeil(number, &floor, &ceil)) return false;
  if (keyword == "minimum") lo = std::max(lo, ceil);
  if (keyword == "exclusiveMinimum") lo = std::max(lo, floor + 1);
  if (keyword == "maximum") hi = std::min(hi, floor);
  if (keyword == "exclusiveMaximum") hi = std::min(hi, ceil - 1);
  return true;
}

bool CanReach(const NumberRange& range, const NumberDigits& n) {
  if (n.int_digits == 0) {  // a '-' alone: some negative number
    for (int d = 0; d <= 9; d++) {
      NumberDigits first = n;
      first.Append(d);
      if (CanReach(range, first)) return true;
    }
    return false;
  }
  const int k = n.int_digits;
  if (n.dot) {
    // More fraction digits: every multiple of the last digit's step from the value so far to
    // just below its next value, at least one digit after the '.'.
    const int j = n.frac_digits;
    const int left = NumberRange::kMaxDigits - k - j;
    if (j == 0 && left == 0) return false;
    const Scaled low =
        static_cast<Scaled>(n.int_value) * kPow10[kScale] + n.frac_value * kPow10[kScale - j];
    return MagnitudesReach(range, n.negative, low, low + kPow10[kScale - j] - 1,
                           kPow10[kScale - j - left]);
  }
  // m more integer digits (none after a leading 0), then up to the digits left as a fraction.
  const Scaled hi_magnitude = n.negative ? -range.lo : range.hi;
  for (int m = 0; k + m <= NumberRange::kMaxDigits; m++) {
    if (n.int_value == 0 && m > 0) break;
    const Scaled low = static_cast<Scaled>(n.int_value) * kPow10[kScale + m];
    if (low > hi_magnitude) break;  // larger for every m after
    const Scaled high = low + kPow10[kScale + m] - 1;
    const int fraction = NumberRange::kMaxDigits - k - m;
    if (MagnitudesReach(range, n.negative, low, high, kPow10[kScale - fraction])) return true;
  }
  return false;
}

bool InRange(const NumberRange& range, const NumberDigits& n) {
  if (n.int_digits == 0 || (n.dot && n.frac_digits == 0)) return false;
  const Scaled magnitude = static_cast<Scaled>(n.int_value) * kPow10[kScale] +
                           n.frac_value * kPow10[kScale - n.frac_digits];
  if (n.negative && magnitude == 0) return false;
  const Scaled value = n.negative ? -magnitude : magnitude;
  return range.lo <= value && value <= range.hi;
}

bool AnyNumberIn(const NumberRange& range) {
  NumberDigits minus;  // a '-': some negative number
  minus.negative = true;
  if (CanReach(range, minus)) return true;
  for (int d = 0; d <= 9; d++) {
    NumberDigits first;
    first.Append(d);
    if (CanReach(range, first)) return true;
  }
  return false;
}

}  // namespace smallmind::shared
