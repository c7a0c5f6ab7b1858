#include "gateway/chat/chat_prompt.h"

#include <gtest/gtest.h>

namespace smallmind::gateway::http {
namespace {

smallmind::v1::ModelInfo Info(const std::string& tmpl, bool add_bos) {
  smallmind::v1::ModelInfo info;
  info.set_chat_template(tmpl);
  info.set_bos_token("\n<s>\n");  // a llama2.c spelling: the token's text is "<s>"
  info.set_eos_token("</s>");
  info.set_add_bos_token(add_bos);
  return info;
}

ChatRequest User(const std::string& text) {
  ChatRequest r;
  r.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", text}}});
  return r;
}

TEST(ChatPrompterTest, ModelWithoutTemplateGetsChatMl) {
  auto p = ChatPrompter::Create(Info("", true), "", "", std::nullopt);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_NE(p->origin().find("ChatML"), std::string::npos);
  auto prompt = p->Render(User("Hi"));
  ASSERT_TRUE(prompt.ok());
  EXPECT_EQ(prompt->text, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_FALSE(prompt->add_bos.has_value());  // the model's own rule
}

TEST(ChatPrompterTest, RenderedBosTextTurnsTheWorkersBosOff) {
  const std::string tmpl =
      "{{ bos_token }}[INST] {{ messages[0]['content'] }} [/INST]{{ eos_token }}";
  auto p = ChatPrompter::Create(Info(tmpl, true), "", "", std::nullopt);
  ASSERT_TRUE(p.ok());
  auto prompt = p->Render(User("x"));
  ASSERT_TRUE(prompt.ok());
  EXPECT_EQ(prompt->text, "<s>[INST] x [/INST]</s>");
  EXPECT_EQ(prompt->add_bos, std::optional<bool>(false));
  // A tokenizer that adds no BOS keeps its rule.
  auto q = ChatPrompter::Create(Info(tmpl, false), "", "", std::nullopt);
  EXPECT_FALSE(q->Render(User("x"))->add_bos.has_value());
}

TEST(ChatPrompterTest, OverrideTemplateAndPinnedDateAndKwargsReachTheRender) {
  auto date = ParseTemplateDate("2026-01-15");
  ASSERT_TRUE(date.ok());
  auto p = ChatPrompter::Create(Info("ignored", true), "{{ strftime_now('%d %b %Y') }} {{ flag }}",
                                "--chat-template f", *date);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ChatRequest r = User("x");
  r.kwargs = {{"flag", "on"}};
  EXPECT_EQ(p->Render(r)->text, "15 Jan 2026 on");
}

TEST(ChatPrompterTest, TemplateRefusalsAndBadTemplatesAreErrorsWithTheirMessage) {
  auto p = ChatPrompter::Create(Info("{{ raise_exception('System role not supported') }}", true),
                                "", "", std::nullopt);
  ASSERT_TRUE(p.ok());
  auto r = p->Render(User("x"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), shared::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "System role not supported");
  auto bad =
      ChatPrompter::Create(Info("", true), "{% if %}", "--chat-template x.jinja", std::nullopt);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--chat-template x.jinja"), std::string::npos);
}

TEST(ChatPrompterTest, TemplateDatesMustBeRealDates) {
  EXPECT_TRUE(ParseTemplateDate("2024-02-29").ok());
  for (const char* bad : {"2023-02-29", "2026-1-15", "15-01-2026", "2026-01-15x", ""}) {
    EXPECT_FALSE(ParseTemplateDate(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace smallmind::gateway::http
