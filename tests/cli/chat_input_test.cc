// What `smallmind chat` makes of typed lines: messages, backslash continuations, commands.
#include "cli/chat_input.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace smallmind::cli {
namespace {

using Kind = ChatEntry::Kind;

std::vector<ChatEntry> ReadAll(const std::string& text, int* prompts = nullptr,
                               int* continuations = nullptr) {
  std::istringstream in(text);
  std::vector<ChatEntry> entries;
  auto prompt = [&](bool continued) {
    if (prompts) ++*prompts;
    if (continuations && continued) ++*continuations;
  };
  while (auto e = ReadChatEntry(in, prompt)) entries.push_back(*e);
  return entries;
}

TEST(ChatInputTest, ALineIsAMessageAndBlankLinesAreSkipped) {
  const auto entries = ReadAll("Hello there\n\n   \nSecond\r\n");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].kind, Kind::kMessage);
  EXPECT_EQ(entries[0].text, "Hello there");
  EXPECT_EQ(entries[1].text, "Second");
}

TEST(ChatInputTest, ATrailingBackslashContinuesTheMessageOnTheNextLine) {
  int prompts = 0, continuations = 0;
  const auto entries =
      ReadAll("first line\\\nsecond line\\\nthird\nnext\n", &prompts, &continuations);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].text, "first line\nsecond line\nthird");
  EXPECT_EQ(entries[1].text, "next");
  EXPECT_EQ(continuations, 2);
  EXPECT_EQ(prompts, 5);  // four lines and the end of input
}

TEST(ChatInputTest, InputEndingInsideAContinuationSendsWhatThereIs) {
  const auto entries = ReadAll("unfinished\\\n");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].text, "unfinished\n");
}

TEST(ChatInputTest, SlashCommandsAndTheirArguments) {
  const auto entries =
      ReadAll("/reset\n/system  Be terse. \n/system\n/model qwen3\n/help\n/frobnicate\n/exit\n");
  ASSERT_EQ(entries.size(), 7u);
  EXPECT_EQ(entries[0].kind, Kind::kReset);
  EXPECT_EQ(entries[1].kind, Kind::kSystem);
  EXPECT_EQ(entries[1].text, "Be terse.");
  EXPECT_EQ(entries[2].kind, Kind::kSystem);
  EXPECT_EQ(entries[2].text, "");
  EXPECT_EQ(entries[3].kind, Kind::kModel);
  EXPECT_EQ(entries[3].text, "qwen3");
  EXPECT_EQ(entries[4].kind, Kind::kHelp);
  EXPECT_EQ(entries[5].kind, Kind::kUnknown);
  EXPECT_EQ(entries[5].text, "/frobnicate");
  EXPECT_EQ(entries[6].kind, Kind::kExit);
}

TEST(ChatInputTest, AMultiLineSystemPromptKeepsItsNewlines) {
  const auto entries = ReadAll("/system You are\\\na pirate.\n");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].kind, Kind::kSystem);
  EXPECT_EQ(entries[0].text, "You are\na pirate.");
}

TEST(ChatInputTest, NoInputIsNoEntry) { EXPECT_TRUE(ReadAll("").empty()); }

}  // namespace
}  // namespace smallmind::cli
