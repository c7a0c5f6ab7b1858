#include "worker/sample/stop_checker.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

namespace smallmind::worker {
namespace {

constexpr TokenId kEos = 2;
constexpr TokenId kBos = 1;
constexpr TokenId kText = 100;  // any id that is neither

StopConfig Config(int max_new_tokens, std::vector<std::string> stop = {}) {
  StopConfig c;
  c.max_new_tokens = max_new_tokens;
  c.stop = std::move(stop);
  c.eos_id = kEos;
  c.bos_id = kBos;
  return c;
}

// Feeds text pieces as tokens; returns the emitted text and the first non-kNone reason.
struct Outcome {
  std::string text;
  FinishReason reason = FinishReason::kNone;
  int tokens = 0;
};
Outcome Feed(StopChecker& checker, const std::vector<std::string>& pieces) {
  Outcome o;
  for (const std::string& piece : pieces) {
    ++o.tokens;
    o.reason = checker.OnToken(kText, piece, &o.text);
    if (o.reason != FinishReason::kNone) return o;
  }
  return o;
}

TEST(StopCheckerTest, StopsWithLengthAfterMaxNewTokensAndEmitsEverything) {
  StopChecker checker(Config(3, {"zzz"}));
  Outcome o = Feed(checker, {"a", "b", "z", "never"});
  EXPECT_EQ(o.reason, FinishReason::kLength);
  EXPECT_EQ(o.tokens, 3);
  EXPECT_EQ(o.text, "abz");  // the held "z" is released at the end
  EXPECT_EQ(checker.num_tokens(), 3);
}

TEST(StopCheckerTest, EosEndsGenerationWithoutItsTextUnlessIgnored) {
  StopChecker checker(Config(10, {"xy"}));
  std::string out;
  EXPECT_EQ(checker.OnToken(kText, "ab x", &out), FinishReason::kNone);
  EXPECT_EQ(out, "ab ");
  EXPECT_EQ(checker.OnToken(kEos, "</s>", &out), FinishReason::kEos);
  EXPECT_EQ(out, "ab x");

  StopConfig c = Config(10);
  c.ignore_eos = true;
  StopChecker ignoring(c);
  out.clear();
  EXPECT_EQ(ignoring.OnToken(kEos, "", &out), FinishReason::kNone);
  EXPECT_EQ(ignoring.OnToken(kText, "more", &out), FinishReason::kNone);
  EXPECT_EQ(out, "more");
}

TEST(StopCheckerTest, EndOfTurnTokenEndsGenerationLikeEos) {
  constexpr TokenId kEot = 7;
  StopConfig c = Config(10);
  c.eot_id = kEot;
  StopChecker checker(c);
  std::string out;
  EXPECT_EQ(checker.OnToken(kText, "hi", &out), FinishReason::kNone);
  EXPECT_EQ(checker.OnToken(kEot, "<|eot_id|>", &out), FinishReason::kEos);
  EXPECT_EQ(out, "hi");
}

TEST(StopCheckerTest, BosEndsGenerationOnlyWhenConfigured) {
  std::string out;
  StopChecker plain(Config(10));
  EXPECT_EQ(plain.OnToken(kBos, "", &out), FinishReason::kNone);
  StopConfig c = Config(10);
  c.bos_ends = true;
  StopChecker llama2c(c);
  EXPECT_EQ(llama2c.OnToken(kBos, "", &out), FinishReason::kEos);
}

TEST(StopCheckerTest, StopStringSpanningTokensEmitsOnlyTheTextBeforeIt) {
  StopChecker checker(Config(100, {"o World"}));
  std::string out;
  EXPECT_EQ(checker.OnToken(kText, "Hel", &out), FinishReason::kNone);
  EXPECT_EQ(out, "Hel");
  EXPECT_EQ(checker.OnToken(kText, "lo Wo", &out), FinishReason::kNone);
  EXPECT_EQ(out, "Hell");  // "o Wo" may still become the stop string
  EXPECT_EQ(checker.OnToken(kText, "rld!", &out), FinishReason::kStop);
  EXPECT_EQ(out, "Hell");
}

TEST(StopCheckerTest, HeldTextIsReleasedOnceItCannotStartAStopString) {
  StopChecker checker(Config(100, {"abc"}));
  Outcome o = Feed(checker, {"xa", "b", "d"});
  EXPECT_EQ(o.reason, FinishReason::kNone);
  EXPECT_EQ(o.text, "xabd");
  // A partial match that restarts inside itself: "aab" + "c" contains "abc".
  StopChecker again(Config(100, {"abc"}));
  o = Feed(again, {"a", "a", "b", "c", "tail"});
  EXPECT_EQ(o.reason, FinishReason::kStop);
  EXPECT_EQ(o.text, "a");
}

TEST(StopCheckerTest, EarliestOfSeveralStopStringsWins) {
  StopChecker checker(Config(100, {"world", "lo w"}));
  Outcome o = Feed(checker, {"hello world"});
  EXPECT_EQ(o.reason, FinishReason::kStop);
  EXPECT_EQ(o.text, "hel");
}

TEST(StopCheckerTest, FinishReleasesHeldTextAndEmptyStopStringsAreIgnored) {
  StopChecker checker(Config(100, {"", "END"}));
  std::string out;
  EXPECT_EQ(checker.OnToken(kText, "the EN", &out), FinishReason::kNone);
  EXPECT_EQ(out, "the ");
  checker.Finish(&out);
  EXPECT_EQ(out, "the EN");
}

// Reference: after each piece, look for stop strings in the whole text so far; the first piece
// that completes one ends generation, cut at the earliest match present at that moment.
std::pair<std::string, bool> ReferenceStop(const std::vector<std::string>& pieces,
                                           const std::vector<std::string>& stops) {
  std::string text;
  for (const std::string& piece : pieces) {
    text += piece;
    size_t cut = std::string::npos;
    for (const std::string& s : stops) cut = std::min(cut, text.find(s));
    if (cut != std::string::npos) return {text.substr(0, cut), true};
  }
  return {text, false};
}

TEST(StopCheckerTest, RandomSplitsMatchTheReferenceAndNeverRetractText) {
  std::mt19937 rng(21);
  std::uniform_int_distribution<int> letter(0, 2);
  std::uniform_int_distribution<int> length(1, 4);
  auto random_string = [&](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += static_cast<char>('a' + letter(rng));
    return s;
  };
  int stops_seen = 0;
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::string> stops = {random_string(length(rng) + 1),
                                      random_string(length(rng) + 2)};
    const std::string text = random_string(30);
    std::vector<std::string> pieces;
    for (size_t i = 0; i < text.size();) {
      size_t n = std::min<size_t>(length(rng) - 1, text.size() - i);  // empty pieces too
      pieces.push_back(text.substr(i, n));
      i += n;
    }
    const auto [expected, stopped] = ReferenceStop(pieces, stops);
    StopChecker checker(Config(1000, stops));
    Outcome o;
    for (const std::string& piece : pieces) {
      o.reason = checker.OnToken(kText, piece, &o.text);
      ASSERT_EQ(expected.compare(0, o.text.size(), o.text), 0) << "emitted text was not final";
      if (o.reason != FinishReason::kNone) break;
    }
    if (o.reason == FinishReason::kNone) checker.Finish(&o.text);
    ASSERT_EQ(o.text, expected) << "round " << round;
    ASSERT_EQ(o.reason == FinishReason::kStop, stopped);
    stops_seen += stopped;
  }
  EXPECT_GT(stops_seen, 100);
}

}  // namespace
}  // namespace smallmind::worker
