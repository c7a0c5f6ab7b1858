#include "gateway/chat/chat_prompt.h"

#include "gateway/chat/harmony_parser.h"
#include "gateway/chat/reasoning_parser.h"

#include <cctype>
#include <utility>

#include <spdlog/fmt/fmt.h>

namespace smallmind::gateway::http {
namespace {

// llama2.c vocabularies spell BOS "\n<s>\n"; the token's text is "<s>".
std::string Trimmed(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

}  // namespace

shared::Result<std::chrono::system_clock::time_point> ParseTemplateDate(const std::string& date) {
  int y = 0;
  unsigned m = 0, d = 0;
  char tail = 0;
  const bool shaped = date.size() == 10 && date[4] == '-' && date[7] == '-' &&
                      std::sscanf(date.c_str(), "%4d-%2u-%2u%c", &y, &m, &d, &tail) == 3;
  const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{m},
                                        std::chrono::day{d}};
  if (!shaped || !ymd.ok()) {
    return shared::InvalidArgument(
        fmt::format("--chat-template-date must be a date YYYY-MM-DD, got '{}'", date));
  }
  return std::chrono::system_clock::time_point(std::chrono::sys_days{ymd});
}

shared::Result<ChatPrompter> ChatPrompter::Create(
    const smallmind::v1::ModelInfo& info, const std::string& template_source,
    const std::string& origin, std::optional<std::chrono::system_clock::time_point> pinned_now) {
  std::string source = template_source;
  std::string where = origin;
  if (source.empty()) {
    source = info.chat_template();
    where = "the model's tokenizer.chat_template";
  }
  if (source.empty()) {
    source = std::string(ChatMlTemplate());
    where = "ChatML (the model has no chat template)";
  }
  const ToolCallSyntax syntax = ToolCallSyntaxOfTemplate(source);
  const bool thinking = TemplateTeachesThinking(source);
  const bool harmony = TemplateSpeaksHarmony(source);
  shared::Result<ChatTemplate> tmpl = ChatTemplate::Parse(std::move(source));
  if (!tmpl.ok()) {
    return shared::InvalidArgument(fmt::format("{}: {}", where, tmpl.status().message()));
  }
  ChatPrompter p(std::move(tmpl).value(), std::move(where));
  p.tool_call_syntax_ = syntax;
  p.teaches_thinking_ = thinking;
  p.speaks_harmony_ = harmony;
  p.bos_token_ = Trimmed(info.bos_token());
  p.eos_token_ = Trimmed(info.eos_token());
  p.add_bos_token_ = info.add_bos_token();
  p.pinned_now_ = pinned_now;
  return p;
}

shared::Result<ChatPrompt> ChatPrompter::Render(const ChatRequest& request) const {
  ChatRenderInput input;
  input.messages = request.messages;
  input.tools = request.tools;
  input.extra = request.kwargs;
  input.add_generation_prompt = request.add_generation_prompt;
  input.bos_token = request.bos_token.value_or(bos_token_);
  input.eos_token = request.eos_token.value_or(eos_token_);
  input.now = pinned_now_.value_or(std::chrono::system_clock::now());
  SM_ASSIGN_OR_RETURN(std::string text, template_.Render(input));
  ChatPrompt prompt{std::move(text), std::nullopt};
  if (add_bos_token_ && !input.bos_token.empty() && prompt.text.starts_with(input.bos_token)) {
    // The template wrote BOS; the worker must not add another. The BOS text itself is then
    // tokenized as the BOS token (special-token text is parsed in rendered prompts).
    prompt.add_bos = false;
  }
  return prompt;
}

}  // namespace smallmind::gateway::http
