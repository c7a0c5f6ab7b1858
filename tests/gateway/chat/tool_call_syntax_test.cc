// The tool-call syntax read off real chat templates (../shared/chat-templates): Qwen 2.5 teaches
// <tool_call> tags, Llama 3.2 JSON with "parameters", Mistral Nemo [TOOL_CALLS]; Phi-3, Gemma 2
// and SmolLM3's templates render no tools. And the names --tool-call-syntax takes.
#include "gateway/chat/tool_call_syntax.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "tests/testing/shared_data.h"

namespace smallmind::gateway::http {
namespace {

TEST(ToolCallSyntaxTest, ReadOffTheSharedTemplates) {
  SM_REQUIRE_SHARED_DATA("chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja");
  for (const auto& [file, want] : {
           std::pair{"Qwen-Qwen2.5-7B-Instruct.jinja", ToolCallSyntax::kHermes},
           {"meta-llama-Llama-3.2-3B-Instruct.jinja", ToolCallSyntax::kLlama3Json},
           {"mistralai-Mistral-Nemo-Instruct-2407.jinja", ToolCallSyntax::kMistral},
           {"microsoft-Phi-3-mini-4k-instruct.jinja", ToolCallSyntax::kNone},
           {"google-gemma-2-2b-it.jinja", ToolCallSyntax::kNone},
           {"HuggingFaceTB-SmolLM3-3B.jinja", ToolCallSyntax::kNone},
       }) {
    std::ifstream in(smallmind::testing::SharedDataPath(std::string("chat-templates/") + file));
    ASSERT_TRUE(in) << file;
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(ToolCallSyntaxOfTemplate(text.str()), want) << file;
  }
}

TEST(ToolCallSyntaxTest, NamesRoundTripAndOthersAreRefused) {
  for (ToolCallSyntax s : {ToolCallSyntax::kNone, ToolCallSyntax::kHermes,
                           ToolCallSyntax::kLlama3Json, ToolCallSyntax::kMistral}) {
    EXPECT_EQ(ToolCallSyntaxFromName(ToolCallSyntaxName(s)), s);
  }
  EXPECT_FALSE(ToolCallSyntaxFromName("auto"));
  EXPECT_FALSE(ToolCallSyntaxFromName("Hermes"));
}

}  // namespace
}  // namespace smallmind::gateway::http
