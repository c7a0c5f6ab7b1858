#include "gateway/http/chat_settings.h"

#include <string>

#include <gtest/gtest.h>

namespace smallmind::gateway::http {
namespace {

// A template that writes Hermes-style tool calls and <think> sections.
constexpr const char* kHermesThinking =
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{# <tool_call> ... </tool_call>, <think> ... </think> #}<|im_start|>assistant\n";
constexpr const char* kPlain = "{{ bos_token }}[USER] {{ messages[0].content }} [/USER]";

smallmind::v1::ModelInfo Info(const std::string& tmpl, const std::string& bos) {
  smallmind::v1::ModelInfo info;
  info.set_chat_template(tmpl);
  info.set_bos_token(bos);
  info.set_eos_token("</s>");
  info.set_vocab_size(512);
  return info;
}

std::string Render(const ChatSettings& s) {
  ChatRequest r;
  r.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "Hi"}}});
  shared::Result<ChatPrompt> p = s.prompter.Render(r);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? p->text : "";
}

TEST(ChatSettingsTest, EachModelGetsItsOwnTemplateBosAndReplyHandling) {
  ChatFlags flags;
  flags.model_sources = {{}, {kPlain, "chat-template=plain.jinja"}};
  // Model 0: its own (GGUF) template; model 1: its chat-template=FILE over its GGUF one.
  shared::Result<ChatSettings> a = MakeChatSettings(Info(kHermesThinking, "<s>"), 0, flags);
  shared::Result<ChatSettings> b = MakeChatSettings(Info(kHermesThinking, "<|begin|>"), 1, flags);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(a->prompter.origin(), "the model's tokenizer.chat_template");
  EXPECT_EQ(a->tool_call_syntax, ToolCallSyntax::kHermes);
  EXPECT_TRUE(a->reasoning);
  EXPECT_FALSE(a->harmony);
  // (Jinja drops a template's one trailing newline.)
  EXPECT_EQ(Render(*a), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant");
  EXPECT_EQ(b->prompter.origin(), "chat-template=plain.jinja");
  EXPECT_EQ(b->tool_call_syntax, ToolCallSyntax::kNone);
  EXPECT_FALSE(b->reasoning);
  EXPECT_EQ(Render(*b), "<|begin|>[USER] Hi [/USER]") << "its own BOS text";
  EXPECT_EQ(b->vocab_size, 512u);
}

TEST(ChatSettingsTest, TheGlobalFlagsApplyWhereAModelHasNoTemplateOfItsOwn) {
  ChatFlags flags;
  flags.fallback = {kPlain, "--chat-template plain.jinja"};
  flags.model_sources = {{}, {kHermesThinking, "chat-template=hermes.jinja"}};
  flags.tool_call_syntax = "mistral";
  flags.reasoning_format = "none";
  shared::Result<ChatSettings> a = MakeChatSettings(Info(kHermesThinking, "<s>"), 0, flags);
  shared::Result<ChatSettings> b = MakeChatSettings(Info("", "<s>"), 1, flags);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->prompter.origin(), "--chat-template plain.jinja");
  EXPECT_EQ(b->prompter.origin(), "chat-template=hermes.jinja");
  EXPECT_EQ(a->tool_call_syntax, ToolCallSyntax::kMistral);
  EXPECT_EQ(b->tool_call_syntax, ToolCallSyntax::kMistral);
  EXPECT_FALSE(b->reasoning) << "--reasoning-format none";
  // A model past the catalog's list (one-env tests) takes the fallback too.
  shared::Result<ChatSettings> c = MakeChatSettings(Info("", "<s>"), 7, flags);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->prompter.origin(), "--chat-template plain.jinja");
}

TEST(ChatSettingsTest, TheCacheKeepsAModelsSettingsUntilItReloads) {
  ChatSettingsCache cache{ChatFlags{}};
  auto first = cache.Get(1, 1, Info(kPlain, "<s>"), "b");
  ASSERT_TRUE(first.ok());
  auto again = cache.Get(1, 1, Info(kHermesThinking, "<s>"), "b");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(first->get(), again->get()) << "same load: built once";
  auto reloaded = cache.Get(1, 2, Info(kHermesThinking, "<s>"), "b");
  ASSERT_TRUE(reloaded.ok());
  EXPECT_NE(first->get(), reloaded->get());
  EXPECT_EQ((*reloaded)->tool_call_syntax, ToolCallSyntax::kHermes) << "the new load's template";
  auto other = cache.Get(0, 1, Info(kHermesThinking, "<s>"), "a");
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->get(), reloaded->get());
  EXPECT_FALSE(cache.Get(2, 1, Info("{% if %}", "<s>"), "c").ok()) << "a template that won't parse";
}

}  // namespace
}  // namespace smallmind::gateway::http
