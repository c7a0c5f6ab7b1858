// NumberRange: the values a JSON Schema `number` with minimum / maximum / exclusiveMinimum /
// exclusiveMaximum allows, as the output constraint writes them, and the arithmetic that walks
// such a number digit by digit without ever reaching a prefix no allowed number begins.
//
// A bounded number is written without an exponent and with at most kMaxDigits digits in all
// (integer and fraction digits together, a leading "0" counted): "-12.5", "0.001", "300". Every
// such number has at most 15 significant digits, so distinct ones stay distinct, in the same
// order, when a client parses them as doubles (DBL_DIG is 15): a value the constraint writes
// satisfies the bound in a double-based validator too, exclusive bounds included. The bounds are
// read from the schema's decimal text and compared exactly, never through a double. Values are
// held as integers in units of 10^-kMaxFractionDigits. Pure data and functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace smallmind::shared {

struct NumberRange {
  static constexpr int kMaxDigits = 15;
  static constexpr int kMaxFractionDigits = kMaxDigits - 1;  // after at least one integer digit
  // A value in units of 10^-kMaxFractionDigits (|x| < 10^15 is below 10^29 units).
  using Scaled = __int128;
  // The largest magnitude a bounded number can have, in units (999999999999999).
  static constexpr Scaled kMaxScaled =
      static_cast<Scaled>(999'999'999'999'999) * 100'000'000'000'000;

  Scaled lo = -kMaxScaled;  // the values allowed, inclusive, in units
  Scaled hi = kMaxScaled;

  // Tightens the range by one bound: `keyword` is "minimum", "maximum", "exclusiveMinimum" or
  // "exclusiveMaximum", `number` its value as JSON number text (an exponent is fine). False when
  // the text is not a JSON number.
  bool Apply(std::string_view keyword, std::string_view number);
};

// The number being written, as far as it goes: sign, integer digits, the '.' and the fraction
// digits.
struct NumberDigits {
  bool negative = false;
  bool dot = false;
  uint8_t int_digits = 0;  // 0: only the '-' so far
  uint8_t frac_digits = 0;
  uint64_t int_value = 0;
  uint64_t frac_value = 0;

  // Appends the digit d (0..9) to the integer or (after the dot) the fraction part.
  void Append(int d) {
    if (dot) {
      frac_value = frac_value * 10 + static_cast<uint64_t>(d);
      ++frac_digits;
    } else {
      int_value = int_value * 10 + static_cast<uint64_t>(d);
      ++int_digits;
    }
  }
  int digits() const { return int_digits + frac_digits; }
};

// Some number that begins with `n` (at most kMaxDigits digits, no digit after a leading "0" but
// the fraction's, at least one after a '.') has its value in `range`; a '-' counts only toward a
// value below zero ("-0" reads as a mistake where no negative is allowed).
bool CanReach(const NumberRange& range, const NumberDigits& n);
// `n` as it is (a digit last) is a number in `range` (and not a negative zero).
bool InRange(const NumberRange& range, const NumberDigits& n);
// Some number can be written in `range` at all.
bool AnyNumberIn(const NumberRange& range);

}  // namespace smallmind::shared
