// NumberRange: bounds read exactly from decimal text, and the digit-by-digit walk over bounded
// numbers: a prefix is reachable exactly when it is a number in range or one more character
// leads to a reachable prefix (so a walk never dead-ends and misses nothing), and "in range"
// agrees with an exact decimal comparison against the bounds' own text.
#include "shared/json_number_range.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace smallmind::shared {
namespace {

using Scaled = NumberRange::Scaled;
constexpr Scaled kUnit = 100'000'000'000'000;  // 1, in units of 10^-14

NumberRange Range(const std::vector<std::pair<std::string, std::string>>& bounds) {
  NumberRange r;
  for (const auto& [keyword, text] : bounds) EXPECT_TRUE(r.Apply(keyword, text)) << text;
  return r;
}

// The digits of a number written as the constraint writes it ("-12.5", "0.001").
NumberDigits Digits(std::string_view text) {
  NumberDigits n;
  for (char c : text) {
    if (c == '-') {
      n.negative = true;
    } else if (c == '.') {
      n.dot = true;
    } else {
      n.Append(c - '0');
    }
  }
  return n;
}

// a <=> b for JSON number texts, exactly: -1, 0 or 1.
int CompareDecimal(std::string_view a, std::string_view b) {
  struct Parsed {
    bool negative = false;
    std::string digits;  // no leading or trailing zeros; empty for zero
    int64_t point = 0;   // value = 0.digits x 10^point
  };
  auto parse = [](std::string_view t) {
    Parsed p;
    size_t i = 0;
    if (t[i] == '-') p.negative = true, ++i;
    int64_t int_digits = 0, exponent = 0;
    std::string digits;
    for (; i < t.size() && isdigit(t[i]); i++, int_digits++) digits += t[i];
    if (i < t.size() && t[i] == '.') {
      for (++i; i < t.size() && isdigit(t[i]); i++) digits += t[i];
    }
    if (i < t.size() && (t[i] == 'e' || t[i] == 'E'))
      exponent = std::stoll(std::string(t.substr(i + 1)));
    const size_t first = digits.find_first_not_of('0');
    if (first == std::string::npos) return Parsed{};
    p.point = int_digits - static_cast<int64_t>(first) + exponent;
    digits = digits.substr(first);
    digits.erase(digits.find_last_not_of('0') + 1);
    p.digits = digits;
    return p;
  };
  const Parsed x = parse(a), y = parse(b);
  auto magnitude = [](const Parsed& p, const Parsed& q) {  // |p| <=> |q|
    if (p.digits.empty() || q.digits.empty())
      return p.digits.empty() == q.digits.empty() ? 0 : p.digits.empty() ? -1 : 1;
    if (p.point != q.point) return p.point < q.point ? -1 : 1;
    const int c = p.digits.compare(q.digits);
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  };
  const bool xn = x.negative && !x.digits.empty(), yn = y.negative && !y.digits.empty();
  if (xn != yn) return xn ? -1 : 1;
  const int m = magnitude(x, y);
  return xn ? -m : m;
}

TEST(NumberRangeTest, BoundsAreReadExactlyFromTheirDecimalText) {
  EXPECT_TRUE(Range({{"minimum", "0.1"}}).lo == kUnit / 10);
  EXPECT_TRUE(Range({{"maximum", "0.1"}}).hi == kUnit / 10);
  EXPECT_TRUE(Range({{"minimum", "1e-05"}}).lo == kUnit / 100'000);
  EXPECT_TRUE(Range({{"minimum", "2.5E+1"}}).lo == 25 * kUnit);
  EXPECT_TRUE(Range({{"exclusiveMinimum", "-2.5"}}).lo == -25 * kUnit / 10 + 1);
  EXPECT_TRUE(Range({{"exclusiveMaximum", "3"}}).hi == 3 * kUnit - 1);
  // Finer than 10^-14: the nearest unit inward, and an exclusive bound between units is the
  // same as an inclusive one.
  EXPECT_TRUE(Range({{"minimum", "1e-20"}}).lo == 1);
  EXPECT_TRUE(Range({{"maximum", "1e-20"}}).hi == 0);
  EXPECT_TRUE(Range({{"exclusiveMaximum", "1e-20"}}).hi == 0);
  EXPECT_TRUE(Range({{"minimum", "-0.000000000000001"}}).lo == 0);
  EXPECT_TRUE(Range({{"maximum", "-0.000000000000001"}}).hi == -1);
  // Far out: that side stays open, or nothing is left.
  EXPECT_TRUE(Range({{"maximum", "1e300"}}).hi == NumberRange::kMaxScaled);
  EXPECT_TRUE(Range({{"minimum", "-1e300"}}).lo == -NumberRange::kMaxScaled);
  EXPECT_FALSE(AnyNumberIn(Range({{"minimum", "1e300"}})));
  EXPECT_TRUE(Range({{"minimum", "1e-999999999"}}).lo == 1);
  // Several bounds: the tightest of each side.
  const NumberRange both = Range({{"minimum", "1"}, {"exclusiveMinimum", "1"}, {"maximum", "7"}});
  EXPECT_TRUE(both.lo == kUnit + 1);
  EXPECT_TRUE(both.hi == 7 * kUnit);
  NumberRange r;
  for (const char* bad : {"", "-", "01", "1.", ".5", "1e", "1e+", "0x10", "1 ", "+1", "--1"}) {
    EXPECT_FALSE(r.Apply("minimum", bad)) << bad;
  }
}

TEST(NumberRangeTest, WalksTakeExactlyTheDigitsSomeNumberInRangeBegins) {
  const NumberRange unit = Range({{"minimum", "0"}, {"maximum", "1"}});
  EXPECT_TRUE(CanReach(unit, Digits("0")));
  EXPECT_TRUE(CanReach(unit, Digits("1")));
  EXPECT_TRUE(CanReach(unit, Digits("1.")));  // 1.0
  EXPECT_TRUE(CanReach(unit, Digits("1.00")));
  EXPECT_FALSE(CanReach(unit, Digits("1.01")));
  EXPECT_FALSE(CanReach(unit, Digits("2")));
  EXPECT_FALSE(CanReach(unit, Digits("-")));  // only -0: not a negative
  EXPECT_TRUE(InRange(unit, Digits("1.0")));
  EXPECT_FALSE(InRange(unit, Digits("1.")));
  EXPECT_FALSE(InRange(unit, Digits("-0")));
  const NumberRange open = Range({{"exclusiveMinimum", "0.25"}, {"exclusiveMaximum", "0.5"}});
  EXPECT_FALSE(CanReach(open, Digits("0.24")));
  EXPECT_TRUE(CanReach(open, Digits("0.25")));  // 0.251
  EXPECT_FALSE(InRange(open, Digits("0.25")));
  EXPECT_FALSE(CanReach(open, Digits("0.5")));
  EXPECT_TRUE(InRange(open, Digits("0.49999999999999")));  // 15 digits
  // Fifteen digits at most: near 10^14 no fraction is left.
  const NumberRange big = Range({{"minimum", "99999999999999.5"}});
  EXPECT_TRUE(CanReach(big, Digits("99999999999999.")));
  EXPECT_FALSE(CanReach(big, Digits("99999999999999.4")));
  EXPECT_TRUE(InRange(big, Digits("100000000000000")));
  EXPECT_FALSE(CanReach(big, Digits("100000000000000.")));  // a 16th digit
  const NumberRange negative = Range({{"minimum", "-3"}, {"maximum", "-2.5"}});
  EXPECT_TRUE(CanReach(negative, Digits("-")));
  EXPECT_FALSE(CanReach(negative, Digits("-1")));
  EXPECT_FALSE(CanReach(negative, Digits("2")));
  EXPECT_TRUE(CanReach(negative, Digits("-2.")));
  EXPECT_FALSE(CanReach(negative, Digits("-2.4")));
  EXPECT_TRUE(InRange(negative, Digits("-3")));
  EXPECT_TRUE(CanReach(negative, Digits("-3.")));  // -3.0
  EXPECT_FALSE(CanReach(negative, Digits("-3.1")));
  EXPECT_FALSE(CanReach(negative, Digits("-30")));
}

// Every prefix a random walk reaches: reachable == (a number in range now, or some next character
// reachable), and in range == an exact comparison with the bounds' text.
TEST(NumberRangeTest, ReachableIffInRangeOrOneMoreCharacterIsAndInRangeIsExact) {
  const std::vector<std::string> texts = {
      "0",     "1",       "-1",     "0.5",     "-0.5",  "0.1",  "2.75",  "-2.75",
      "1e-05", "123.456", "1e-14",  "-1e-14",  "99.99", "100",  "7",     "-7.125",
      "0.3",   "1e3",     "0.0001", "-0.0001", "42",    "1e14", "-1e14", "3.14159"};
  const char* const keywords[] = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};
  std::mt19937 rng(7);
  int in_range = 0;
  for (int trial = 0; trial < 400; trial++) {
    std::vector<std::pair<std::string, std::string>> bounds;
    const int n = 1 + static_cast<int>(rng() % 2);
    for (int i = 0; i < n; i++) {
      bounds.push_back({keywords[rng() % 4], texts[rng() % texts.size()]});
    }
    const NumberRange range = Range(bounds);
    auto exact = [&](const std::string& number) {
      for (const auto& [k, b] : bounds) {
        const int c = CompareDecimal(number, b);
        if ((k == "minimum" && c < 0) || (k == "maximum" && c > 0) ||
            (k == "exclusiveMinimum" && c <= 0) || (k == "exclusiveMaximum" && c >= 0)) {
          return false;
        }
      }
      return !(number[0] == '-' && CompareDecimal(number, "0") == 0);  // no negative zero
    };
    // The characters that may follow `text` in a bounded number's format.
    auto nexts = [](const std::string& text) {
      std::vector<std::string> out;
      const NumberDigits n = Digits(text);
      const bool leading_zero = !n.dot && n.int_digits == 1 && n.int_value == 0;
      if (n.digits() < NumberRange::kMaxDigits && !leading_zero) {  // after "0" only '.'
        for (char d = '0'; d <= '9'; d++) out.push_back(text + d);
      }
      if (!n.dot && n.int_digits > 0) out.push_back(text + '.');
      return out;
    };
    const bool any = AnyNumberIn(range);
    for (int walk = 0; walk < 20; walk++) {
      std::string text = rng() % 3 == 0 ? "-" : std::string(1, static_cast<char>('0' + rng() % 10));
      while (true) {
        const NumberDigits n = Digits(text);
        const bool ends_in_digit = text.back() != '-' && text.back() != '.';
        const bool now = ends_in_digit && exact(text);
        ASSERT_EQ(InRange(range, n), now) << text;
        in_range += now;
        const std::vector<std::string> next = nexts(text);
        const bool some_next = std::any_of(next.begin(), next.end(),
                                           [&](auto& t) { return CanReach(range, Digits(t)); });
        ASSERT_EQ(CanReach(range, n), now || some_next) << text;
        if (CanReach(range, n)) ASSERT_TRUE(any);
        std::vector<std::string> live;
        for (const std::string& t : next) {
          if (CanReach(range, Digits(t))) live.push_back(t);
        }
        if (live.empty() || rng() % 8 == 0) break;
        text = live[rng() % live.size()];
      }
    }
  }
  EXPECT_GT(in_range, 1000);
}

}  // namespace
}  // namespace smallmind::shared
