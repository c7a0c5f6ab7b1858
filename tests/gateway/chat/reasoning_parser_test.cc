// ReasoningParser on replies as reasoning models write them: a <think> section then the answer,
// a section the prompt opened, no section, a reply cut short while thinking. Every reply fed cut
// at each byte and byte by byte gives what it gives whole. And which shared templates teach
// thinking (SmolLM3 does; Qwen 2.5, Llama 3.2, Mistral Nemo, Phi-3, Gemma 2 do not).
#include "gateway/chat/reasoning_parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "tests/testing/shared_data.h"

namespace smallmind::gateway::http {
namespace {

ReasoningOutput Whole(const std::string& reply, bool open = false) {
  ReasoningParser p(open);
  ReasoningOutput out = p.Feed(reply);
  out.Append(p.Finish());
  return out;
}

void ExpectPiecesGiveTheSame(const std::string& reply, bool open = false) {
  const ReasoningOutput whole = Whole(reply, open);
  for (size_t cut = 0; cut <= reply.size(); ++cut) {
    ReasoningParser p(open);
    ReasoningOutput out;
    for (const std::string& piece : {reply.substr(0, cut), reply.substr(cut)}) {
      out.Append(p.Feed(piece));
    }
    out.Append(p.Finish());
    ASSERT_EQ(out.reasoning, whole.reasoning) << "cut " << cut << ": " << reply;
    ASSERT_EQ(out.content, whole.content) << "cut " << cut << ": " << reply;
  }
  ReasoningParser p(open);
  ReasoningOutput out;
  for (char c : reply) out.Append(p.Feed(std::string(1, c)));
  out.Append(p.Finish());
  EXPECT_EQ(out.reasoning, whole.reasoning) << reply;
  EXPECT_EQ(out.content, whole.content) << reply;
}

TEST(ReasoningParserTest, ThinkingThenAnswer) {
  const std::string reply =
      "<think>\nThe user asks 2+2.\n\nThat is 4.\n</think>\n\nThe answer is 4.\n";
  const ReasoningOutput r = Whole(reply);
  EXPECT_EQ(r.reasoning, "The user asks 2+2.\n\nThat is 4.");
  EXPECT_EQ(r.content, "The answer is 4.\n");
  ExpectPiecesGiveTheSame(reply);
}

TEST(ReasoningParserTest, ASectionThePromptOpenedEndsAtTheCloseTag) {
  const std::string reply = "Let me see. 3 < 4 </thinking> yes.\n</think>\nYes.";
  const ReasoningOutput r = Whole(reply, /*open=*/true);
  EXPECT_EQ(r.reasoning, "Let me see. 3 < 4 </thinking> yes.");
  EXPECT_EQ(r.content, "Yes.");
  ExpectPiecesGiveTheSame(reply, /*open=*/true);
}

TEST(ReasoningParserTest, NoSectionIsAllAnswerAndCutShortIsAllThinking) {
  for (const std::string& reply : {std::string("  Hello <think> there"), std::string("<thin"),
                                   std::string("\n\n"), std::string("")}) {
    const ReasoningOutput r = Whole(reply);
    EXPECT_EQ(r.reasoning, "") << reply;
    EXPECT_EQ(r.content, reply);
    ExpectPiecesGiveTheSame(reply);
  }
  const ReasoningOutput cut = Whole("<think>\nStill thinking about it </th");
  EXPECT_EQ(cut.reasoning, "Still thinking about it </th");
  EXPECT_EQ(cut.content, "");
  ExpectPiecesGiveTheSame("<think>\nStill thinking about it </th");
  const ReasoningOutput empty = Whole("<think>\n\n</think>\n\nHi");  // thinking switched off
  EXPECT_EQ(empty.reasoning, "");
  EXPECT_EQ(empty.content, "Hi");
}

TEST(ReasoningParserTest, ThinkingStreamsAsItComes) {
  ReasoningParser p(false);
  EXPECT_EQ(p.Feed("<thi").reasoning, "");
  EXPECT_EQ(p.Feed("nk>\nStep one").reasoning, "Step one");
  EXPECT_EQ(p.Feed(", step two \n").reasoning, ", step two");  // blanks wait
  ReasoningOutput o = p.Feed("</think>\nDone");
  EXPECT_EQ(o.reasoning, "");
  EXPECT_EQ(o.content, "Done");
}

TEST(ReasoningParserTest, PromptsThatOpenTheSection) {
  EXPECT_TRUE(PromptOpensThinking("<|im_start|>assistant\n<think>\n"));
  EXPECT_TRUE(PromptOpensThinking("<｜Assistant｜><think>"));
  EXPECT_FALSE(PromptOpensThinking("<|im_start|>assistant\n<think>\n\n</think>\n"));
  EXPECT_FALSE(PromptOpensThinking("<|im_start|>assistant\n"));
}

TEST(ReasoningParserTest, WhichSharedTemplatesTeachThinking) {
  SM_REQUIRE_SHARED_DATA("chat-templates/HuggingFaceTB-SmolLM3-3B.jinja");
  for (const auto& [file, want] : {std::pair{"HuggingFaceTB-SmolLM3-3B.jinja", true},
                                   {"Qwen-Qwen2.5-7B-Instruct.jinja", false},
                                   {"meta-llama-Llama-3.2-3B-Instruct.jinja", false},
                                   {"mistralai-Mistral-Nemo-Instruct-2407.jinja", false},
                                   {"microsoft-Phi-3-mini-4k-instruct.jinja", false},
                                   {"google-gemma-2-2b-it.jinja", false}}) {
    std::ifstream in(smallmind::testing::SharedDataPath(std::string("chat-templates/") + file));
    ASSERT_TRUE(in) << file;
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(TemplateTeachesThinking(text.str()), want) << file;
  }
}

}  // namespace
}  // namespace smallmind::gateway::http
