// Prompt prefix keys: one key per cut a prompt reaches, equal for prompts that agree on the cut's
// bytes and different when any of them differs, text and token-id prompts apart.
#include "shared/prompt_prefix_key.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smallmind::shared {
namespace {

std::string Text(size_t n, char fill) { return std::string(n, fill); }

TEST(PromptPrefixKeyTest, APromptHasAKeyAtEveryCutItReachesAndNoneBelowTheFirst) {
  EXPECT_EQ(TextPromptPrefixKeys(Text(255, 'a')).count, 0);
  EXPECT_EQ(TextPromptPrefixKeys(Text(256, 'a')).count, 1);
  EXPECT_EQ(TextPromptPrefixKeys(Text(4095, 'a')).count, 2);
  const PromptPrefixKeys all = TextPromptPrefixKeys(Text(20000, 'a'));
  ASSERT_EQ(all.count, 4);
  EXPECT_EQ(all.input_bytes, 20000u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(all.keys[i].bytes, kPromptPrefixCuts[i]);
}

TEST(PromptPrefixKeyTest, PromptsSharingTheFirstBytesShareTheKeysOfThoseCutsOnly) {
  const std::string system = Text(2000, 's');
  const PromptPrefixKeys a = TextPromptPrefixKeys(system + Text(3000, 'a'));
  const PromptPrefixKeys b = TextPromptPrefixKeys(system + Text(3000, 'b'));
  ASSERT_EQ(a.count, 3);
  ASSERT_EQ(b.count, 3);
  EXPECT_EQ(a.keys[0].key, b.keys[0].key);  // 256 bytes: inside the shared part
  EXPECT_EQ(a.keys[1].key, b.keys[1].key);  // 1024
  EXPECT_NE(a.keys[2].key, b.keys[2].key);  // 4096: reaches the different part
  EXPECT_NE(a.keys[0].key, a.keys[1].key);
}

TEST(PromptPrefixKeyTest, OneDifferentByteInsideACutChangesItsKey) {
  std::string x = Text(1024, 'q');
  const uint64_t before = TextPromptPrefixKeys(x).keys[1].key;
  x[700] = 'r';
  const PromptPrefixKeys after = TextPromptPrefixKeys(x);
  EXPECT_NE(after.keys[1].key, before);
  EXPECT_EQ(after.keys[0].key, TextPromptPrefixKeys(Text(1024, 'q')).keys[0].key);
}

TEST(PromptPrefixKeyTest, TokenIdPromptsAreCutAtFourBytesPerIdAndKeptApartFromText) {
  std::vector<uint32_t> ids(300, 0x61616161u);  // the bytes of "aaaa" per id
  const PromptPrefixKeys k = TokenPromptPrefixKeys(ids);
  ASSERT_EQ(k.count, 2);  // 1200 bytes: 256 and 1024
  EXPECT_EQ(k.input_bytes, 1200u);
  EXPECT_NE(k.keys[0].key, TextPromptPrefixKeys(Text(1200, 'a')).keys[0].key);
  std::vector<uint32_t> other = ids;
  other[100] = 7;  // byte 400: after the first cut, inside the second
  const PromptPrefixKeys o = TokenPromptPrefixKeys(other);
  EXPECT_EQ(o.keys[0].key, k.keys[0].key);
  EXPECT_NE(o.keys[1].key, k.keys[1].key);
}

}  // namespace
}  // namespace smallmind::shared
