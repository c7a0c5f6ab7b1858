#include "gateway/models/keep_alive.h"

#include <chrono>

#include <gtest/gtest.h>

namespace smallmind::gateway {
namespace {

using std::chrono::milliseconds;

milliseconds ParsedMs(std::string_view text) {
  shared::Result<KeepAlive> k = ParseKeepAlive(text, "--keep-alive");
  EXPECT_TRUE(k.ok()) << text << ": " << k.status().message();
  if (!k.ok() || k->forever()) return milliseconds(-1);
  return *k->duration;
}

TEST(KeepAliveTest, ParsesOllamaDurations) {
  EXPECT_EQ(ParsedMs("5m"), milliseconds(300000));
  EXPECT_EQ(ParsedMs("30s"), milliseconds(30000));
  EXPECT_EQ(ParsedMs("1h"), milliseconds(3600000));
  EXPECT_EQ(ParsedMs("1h30m"), milliseconds(5400000));
  EXPECT_EQ(ParsedMs("1.5h"), milliseconds(5400000));
  EXPECT_EQ(ParsedMs("250ms"), milliseconds(250));
  EXPECT_EQ(ParsedMs("2m30s"), milliseconds(150000));
}

TEST(KeepAliveTest, PlainNumbersAreSeconds) {
  EXPECT_EQ(ParsedMs("300"), milliseconds(300000));
  EXPECT_EQ(ParsedMs("0.5"), milliseconds(500));
  EXPECT_EQ(ParsedMs("0"), milliseconds(0));
}

TEST(KeepAliveTest, NegativeOrForeverNeverExpires) {
  for (const char* text : {"-1", "-5m", "forever"}) {
    shared::Result<KeepAlive> k = ParseKeepAlive(text, "--keep-alive");
    ASSERT_TRUE(k.ok()) << text;
    EXPECT_TRUE(k->forever()) << text;
  }
  ASSERT_TRUE(KeepAliveFromSeconds(-1, "keep_alive").ok());
  EXPECT_TRUE(KeepAliveFromSeconds(-1, "keep_alive")->forever());
  EXPECT_EQ(KeepAliveFromSeconds(2.5, "keep_alive")->duration, milliseconds(2500));
}

TEST(KeepAliveTest, RejectsMalformedTextNamingTheField) {
  for (const char* text : {"", "m", "5x", "5m3", "1..5s", "-", "five", "5 m"}) {
    shared::Result<KeepAlive> k = ParseKeepAlive(text, "keep_alive");
    ASSERT_FALSE(k.ok()) << text;
    EXPECT_EQ(k.status().code(), shared::StatusCode::kInvalidArgument);
    EXPECT_NE(k.status().message().find("keep_alive: `"), std::string::npos) << text;
  }
}

TEST(KeepAliveTest, ExpiresOnceIdleForItsDurationOnAnInjectedClock) {
  const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  const KeepAlive five_seconds{milliseconds(5000)};
  EXPECT_FALSE(KeepAliveExpired(five_seconds, t0, t0 + milliseconds(4999)));
  EXPECT_TRUE(KeepAliveExpired(five_seconds, t0, t0 + milliseconds(5000)));
  EXPECT_TRUE(KeepAliveExpired(KeepAlive{milliseconds(0)}, t0, t0));
  EXPECT_FALSE(KeepAliveExpired(KeepAlive::Forever(), t0, t0 + std::chrono::hours(10000)));
}

TEST(KeepAliveTest, FormatsForLogs) {
  EXPECT_EQ(FormatKeepAlive(KeepAlive::Forever()), "forever");
  EXPECT_EQ(FormatKeepAlive(KeepAlive{milliseconds(300000)}), "300s");
  EXPECT_EQ(FormatKeepAlive(KeepAlive{milliseconds(1500)}), "1500ms");
}

}  // namespace
}  // namespace smallmind::gateway
