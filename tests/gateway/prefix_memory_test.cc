#include "gateway/workers/prefix_memory.h"

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace smallmind::gateway {
namespace {

using std::chrono::milliseconds;
using Clock = PrefixMemory::Clock;

// A system prompt of `bytes` bytes made of `seed`, then a question of its own.
std::string Prompt(char seed, size_t bytes, const std::string& question) {
  return std::string(bytes, seed) + question;
}

const Clock::time_point kT0{};

TEST(PrefixMemoryTest, MatchesTheLongestCutSentToTheWorker) {
  PrefixMemory memory(64, milliseconds(1000));
  const auto sent = shared::TextPromptPrefixKeys(Prompt('a', 1500, "first question"));
  memory.Remember(0, sent, kT0);
  // Same 1500-byte system prompt, another question: the 256 and 1024-byte cuts agree.
  const auto next = shared::TextPromptPrefixKeys(Prompt('a', 1500, "second question"));
  EXPECT_EQ(memory.MatchBytes(0, next, {}, kT0), 1024u);
  EXPECT_EQ(memory.MatchBytes(1, next, {}, kT0), 0u) << "never sent to worker 1";
  // A prompt that agrees only on its first 300 bytes matches the 256-byte cut.
  const auto partial = shared::TextPromptPrefixKeys(Prompt('a', 300, std::string(1200, 'z')));
  EXPECT_EQ(memory.MatchBytes(0, partial, {}, kT0), 256u);
  // Short prompts have no keys and match nothing.
  EXPECT_EQ(memory.MatchBytes(0, shared::TextPromptPrefixKeys("hello"), {}, kT0), 0u);
}

TEST(PrefixMemoryTest, KeysReportedByTheWorkerMatchToo) {
  PrefixMemory memory(64, milliseconds(1000));
  const auto keys = shared::TextPromptPrefixKeys(Prompt('b', 1500, "q"));
  const std::vector<uint64_t> reported = {12345, keys.keys[0].key};  // its 256-byte cut
  EXPECT_EQ(memory.MatchBytes(0, keys, reported, kT0), 256u);
}

TEST(PrefixMemoryTest, ForgetsKeysAfterTheirTimeToLive) {
  PrefixMemory memory(64, milliseconds(1000));
  const auto keys = shared::TextPromptPrefixKeys(Prompt('c', 1500, "q"));
  memory.Remember(0, keys, kT0);
  EXPECT_EQ(memory.MatchBytes(0, keys, {}, kT0 + milliseconds(1000)), 1024u);
  EXPECT_EQ(memory.MatchBytes(0, keys, {}, kT0 + milliseconds(1001)), 0u);
  memory.Remember(0, keys, kT0 + milliseconds(1001));  // sent again: remembered again
  EXPECT_EQ(memory.MatchBytes(0, keys, {}, kT0 + milliseconds(1500)), 1024u);
}

TEST(PrefixMemoryTest, StaysBoundedEvictingTheLeastRecentlySentKeys) {
  PrefixMemory memory(4, milliseconds(100000));
  const auto old_keys = shared::TextPromptPrefixKeys(Prompt('d', 1500, "q"));  // 2 keys
  const auto mid_keys = shared::TextPromptPrefixKeys(Prompt('e', 1500, "q"));  // 2 keys
  memory.Remember(0, old_keys, kT0);
  memory.Remember(0, mid_keys, kT0);
  EXPECT_EQ(memory.size(0), 4u);
  memory.Remember(0, old_keys, kT0);  // used again: now the most recent
  const auto new_keys = shared::TextPromptPrefixKeys(Prompt('f', 1500, "q"));
  memory.Remember(0, new_keys, kT0);  // evicts mid's two keys
  EXPECT_EQ(memory.size(0), 4u);
  EXPECT_EQ(memory.MatchBytes(0, mid_keys, {}, kT0), 0u);
  EXPECT_EQ(memory.MatchBytes(0, old_keys, {}, kT0), 1024u);
  EXPECT_EQ(memory.MatchBytes(0, new_keys, {}, kT0), 1024u);
}

TEST(PrefixMemoryTest, ForgetsAWorkerThatLeftThePool) {
  PrefixMemory memory(64, milliseconds(100000));
  const auto keys = shared::TextPromptPrefixKeys(Prompt('g', 1500, "q"));
  memory.Remember(7, keys, kT0);  // worker ids need not be dense (DNS membership)
  memory.Remember(2, keys, kT0);
  EXPECT_EQ(memory.MatchBytes(7, keys, {}, kT0), 1024u);
  memory.Forget(7);
  EXPECT_EQ(memory.size(7), 0u);
  EXPECT_EQ(memory.MatchBytes(7, keys, {}, kT0), 0u);
  EXPECT_EQ(memory.MatchBytes(2, keys, {}, kT0), 1024u) << "the others keep theirs";
}

}  // namespace
}  // namespace smallmind::gateway
