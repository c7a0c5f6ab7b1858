// ChatTemplate: the variables transformers passes, chat_template_kwargs, the strftime_now date
// hook, raise_exception, content-part flattening, the ChatML fallback, and concurrent renders.
#include "gateway/chat/chat_template.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace smallmind::gateway {
namespace {

using nlohmann::ordered_json;

std::chrono::system_clock::time_point Date(int y, unsigned m, unsigned d) {
  return std::chrono::sys_days(std::chrono::year{y} / std::chrono::month{m} / std::chrono::day{d});
}

ChatRenderInput Input(ordered_json messages) {
  ChatRenderInput in;
  in.messages = std::move(messages);
  in.now = Date(2026, 1, 15);
  return in;
}

std::string RenderOrError(const std::string& source, const ChatRenderInput& in) {
  auto t = ChatTemplate::Parse(source);
  if (!t.ok()) return "PARSE: " + t.status().message();
  auto out = t->Render(in);
  return out.ok() ? out.value() : "RENDER: " + out.status().message();
}

TEST(ChatTemplateTest, SetsTheVariablesTransformersPasses) {
  ChatRenderInput in = Input({{{"role", "user"}, {"content", "hi"}}});
  in.bos_token = "<s>";
  in.eos_token = "</s>";
  in.add_generation_prompt = true;
  EXPECT_EQ(RenderOrError("{{ tools is defined }} {{ tools is none }} {{ documents is none }} "
                          "{{ add_generation_prompt }} {{ bos_token }}{{ eos_token }} "
                          "{{ messages[0].content }} {{ enable_thinking is defined }}",
                          in),
            "True True True True <s></s> hi False");
}

TEST(ChatTemplateTest, KwargsAddVariablesButCannotReplaceTheRequestsOwn) {
  ChatRenderInput in = Input(ordered_json::array());
  in.extra = {{"enable_thinking", false}, {"depth", 2}};
  EXPECT_EQ(RenderOrError("{{ enable_thinking }} {{ depth * 2 }}", in), "False 4");
  in.extra = {{"messages", ordered_json::array()}};
  EXPECT_EQ(RenderOrError("x", in),
            "RENDER: chat_template_kwargs may not set 'messages' (it is set from the request "
            "itself)");
}

TEST(ChatTemplateTest, ToolsKeepTheKeyOrderTheClientSent) {
  ChatRenderInput in = Input(ordered_json::array());
  in.tools =
      ordered_json::parse(R"([{"type":"function","function":{"name":"f","parameters":{}}}])");
  EXPECT_EQ(RenderOrError("{% for t in tools %}{{ t|tojson }}{% endfor %}", in),
            "{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {}}}");
}

TEST(ChatTemplateTest, StrftimeNowFormatsTheCallersDateInUtc) {
  ChatRenderInput in = Input(ordered_json::array());
  EXPECT_EQ(RenderOrError("{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%A %B %-d') }}", in),
            "15 Jan 2026|Thursday January 15");
  in.now = Date(2024, 2, 29) + std::chrono::hours(23) + std::chrono::minutes(59);
  EXPECT_EQ(RenderOrError("{{ strftime_now('%Y-%m-%d %H:%M') }}", in), "2024-02-29 23:59");
}

TEST(ChatTemplateTest, RaiseExceptionFailsWithExactlyTheTemplatesMessage) {
  ChatRenderInput in = Input({{{"role", "system"}, {"content", "s"}}});
  const std::string source =
      "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
      "{% endif %}";
  auto t = ChatTemplate::Parse(source);
  ASSERT_TRUE(t.ok());
  auto out = t->Render(in);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), shared::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "System role not supported");
}

TEST(ChatTemplateTest, TemplateErrorsAreLabelledWithTheirLine) {
  ChatRenderInput in = Input({{{"role", "user"}, {"content", 5}}});
  EXPECT_EQ(RenderOrError("{{ bos_token }}\n{{ '[INST]' + messages[0].content }}", in),
            "RENDER: chat template line 2: can only concatenate str (not \"int\") to str");
  EXPECT_EQ(RenderOrError("\n\n{% for %}", in),
            "PARSE: chat template line 3: Expected an expression, got 'end of statement block'");
}

TEST(ChatTemplateTest, TextPartsAreJoinedWithNewlinesForTemplatesThatExpectStrings) {
  ChatRenderInput in = Input(ordered_json::parse(
      R"([{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}])"));
  auto t = ChatTemplate::Parse(std::string(ChatMlTemplate()));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->content_format(), ContentFormat::kString);
  auto out = t->Render(in);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out.value(), "<|im_start|>user\na\nb<|im_end|>\n");
  in.messages[0]["content"].push_back({{"type", "image_url"}, {"image_url", "x"}});
  EXPECT_EQ(t->Render(in).status().message(),
            "messages[0].content has a 'image_url' part; only text parts are supported");
}

TEST(ChatTemplateTest, TemplatesThatLoopOverContentGetThePartsAsSent) {
  const std::string source =
      "{% for m in messages %}{% if m.content is string %}{{ m.content }}{% else %}"
      "{% for p in m['content'] %}[{{ p.text }}]{% endfor %}{% endif %}{% endfor %}";
  auto t = ChatTemplate::Parse(source);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->content_format(), ContentFormat::kOpenAI);
  ChatRenderInput in = Input(ordered_json::parse(
      R"([{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}])"));
  EXPECT_EQ(t->Render(in).value(), "[a][b]");
  in.content_format = ContentFormat::kString;  // the caller may force a format
  EXPECT_EQ(t->Render(in).value(), "a\nb");
}

TEST(ChatTemplateTest, ChatMlIsTheDefaultTemplate) {
  ChatRenderInput in = Input(
      ordered_json::parse(R"([{"role":"system","content":"S"},{"role":"user","content":"U"}])"));
  in.add_generation_prompt = true;
  EXPECT_EQ(RenderOrError(std::string(ChatMlTemplate()), in),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ChatTemplateTest, BadInputIsAnErrorNotACrash) {
  ChatRenderInput in = Input(ordered_json::object());
  EXPECT_EQ(RenderOrError("x", in), "RENDER: messages must be an array");
  in = Input(ordered_json::array());
  in.bos_token = "\xc3";
  EXPECT_EQ(RenderOrError("x", in), "RENDER: bos_token is not valid UTF-8");
  in = Input(ordered_json::array({{{"role", "user"}, {"content", "\xff"}}}));
  EXPECT_EQ(RenderOrError("x", in), "RENDER: messages is not valid UTF-8");
  in = Input(ordered_json::array());
  in.extra = ordered_json::array();
  EXPECT_EQ(RenderOrError("x", in), "RENDER: chat_template_kwargs must be an object");
}

TEST(ChatTemplateTest, ConcurrentRendersOfOneTemplateAgree) {
  const std::string source =
      "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
      "{{ loop.index }}:{{ m.role|upper }}={{ m.content|trim }};{% endfor %}{{ ns.n }}"
      "{% set l = [1, 2, 3] %}{{ l.pop() }}";
  auto t = ChatTemplate::Parse(source);
  ASSERT_TRUE(t.ok());
  const ChatTemplate& tmpl = t.value();
  std::vector<std::string> expected(8);
  for (int i = 0; i < 8; ++i) {
    ChatRenderInput in = Input({{{"role", "user"}, {"content", " m" + std::to_string(i) + " "}},
                                {{"role", "assistant"}, {"content", "r"}}});
    expected[i] = tmpl.Render(in).value();
  }
  std::vector<int> mismatches(8, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 200; ++k) {
        ChatRenderInput in = Input({{{"role", "user"}, {"content", " m" + std::to_string(i) + " "}},
                                    {{"role", "assistant"}, {"content", "r"}}});
        auto out = tmpl.Render(in);
        mismatches[i] += !out.ok() || out.value() != expected[i];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(mismatches[i], 0) << "thread " << i;
  EXPECT_EQ(expected[3], "1:USER=m3;2:ASSISTANT=r;23");
}

}  // namespace
}  // namespace smallmind::gateway
