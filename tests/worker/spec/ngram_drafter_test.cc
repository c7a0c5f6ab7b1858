// The n-gram drafter proposes what followed the longest (then most recent) earlier occurrence of
// the context's suffix, never less than min_match long, and never more tokens than asked or than
// followed the match.
#include "worker/spec/ngram_drafter.h"

#include <gtest/gtest.h>

#include <vector>

namespace smallmind::worker {
namespace {

std::vector<TokenId> Propose(const std::vector<TokenId>& tokens, int min_match, int room) {
  std::vector<TokenId> out(static_cast<size_t>(room), -1);
  const int n = ProposeNgramDraft(tokens, NgramOptions{.min_match = min_match}, out);
  out.resize(static_cast<size_t>(n));
  return out;
}

TEST(NgramDrafterTest, ProposesWhatFollowedTheEarlierOccurrenceOfTheSuffix) {
  // "5 6 7" occurred before, followed by 8 9 10.
  const std::vector<TokenId> t = {1, 5, 6, 7, 8, 9, 10, 2, 3, 5, 6, 7};
  EXPECT_EQ(Propose(t, 3, 4), (std::vector<TokenId>{8, 9, 10, 2}));
  EXPECT_EQ(Propose(t, 3, 2), (std::vector<TokenId>{8, 9}));
}

TEST(NgramDrafterTest, NothingWhenTheSuffixIsShorterThanMinMatchOrUnseen) {
  const std::vector<TokenId> t = {1, 5, 6, 7, 8, 2, 6, 7};
  EXPECT_EQ(Propose(t, 3, 4), std::vector<TokenId>{});  // "6 7" matches, 2 tokens only
  EXPECT_EQ(Propose(t, 2, 4), (std::vector<TokenId>{8, 2, 6, 7}));
  EXPECT_EQ(Propose({1, 2, 3, 4}, 1, 4), std::vector<TokenId>{});
  EXPECT_EQ(Propose({}, 1, 4), std::vector<TokenId>{});
  EXPECT_EQ(Propose({7, 7}, 1, 0), std::vector<TokenId>{});
}

TEST(NgramDrafterTest, TheLongestMatchWinsThenTheMostRecent) {
  // "2 3" occurs at 1-2 (after "1") and at 6-7 (after "9"); the suffix is "1 2 3": the older,
  // longer occurrence wins and proposes 40.
  const std::vector<TokenId> longest = {1, 2, 3, 40, 0, 9, 2, 3, 50, 0, 1, 2, 3};
  EXPECT_EQ(Propose(longest, 2, 1), (std::vector<TokenId>{40}));
  // Two equally long matches: the newer one proposes.
  const std::vector<TokenId> recent = {2, 3, 40, 0, 2, 3, 50, 0, 2, 3};
  EXPECT_EQ(Propose(recent, 2, 1), (std::vector<TokenId>{50}));
}

TEST(NgramDrafterTest, ARepeatingRunProposesItsContinuationUpToTheEnd) {
  // A period-2 run: the match ending two back proposes the last two tokens again.
  const std::vector<TokenId> t = {4, 9, 4, 9, 4, 9};
  EXPECT_EQ(Propose(t, 2, 8), (std::vector<TokenId>{4, 9}));
}

}  // namespace
}  // namespace smallmind::worker
