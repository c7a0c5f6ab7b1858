// ChatTemplate: a model's chat template (Jinja, from GGUF `tokenizer.chat_template` or a file),
// rendered the way Hugging Face transformers' apply_chat_template renders it: messages, bos/eos
// tokens, add_generation_prompt, tools and documents (none unless given), extra
// chat_template_kwargs, and the raise_exception / strftime_now globals. Used by the HTTP server
// for /v1/chat/completions and /apply-template. Parsed once; Render is thread-safe and may run
// concurrently on one ChatTemplate.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "gateway/chat/chat_content.h"
#include "gateway/chat/tool_arguments.h"
#include "gateway/jinja/jinja.h"
#include "shared/status.h"

namespace smallmind::gateway {

// Everything one render sees. Parse request JSON with nlohmann::ordered_json so objects keep
// their key order (tool schemas print in the order the client sent, as Python's json does).
struct ChatRenderInput {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();  // OpenAI-style messages
  std::string bos_token;
  std::string eos_token;
  bool add_generation_prompt = false;
  nlohmann::ordered_json tools;      // null: the template sees `tools` = none
  nlohmann::ordered_json documents;  // null: `documents` = none
  // chat_template_kwargs: more variables (e.g. enable_thinking); an object. Naming one of the
  // variables above is an error rather than a silent override.
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  // What strftime_now() formats, in UTC. The caller chooses: the request time, or a pinned date
  // (--chat-template-date) for reproducible prompts.
  std::chrono::system_clock::time_point now;
  // How array contents are passed (see chat_content.h); kAuto follows the template.
  ContentFormat content_format = ContentFormat::kAuto;
  // How tool calls' arguments are passed (see tool_arguments.h); kAuto follows the template.
  ToolArguments tool_arguments = ToolArguments::kAuto;
};

class ChatTemplate {
 public:
  // Syntax errors come back as INVALID_ARGUMENT "chat template line N: ...".
  static shared::Result<ChatTemplate> Parse(std::string source, jinja::RenderLimits limits = {});

  // The prompt text, BOS text included where the template writes it. A template that refuses
  // the conversation (raise_exception) fails with INVALID_ARGUMENT carrying exactly its message;
  // other template errors say "chat template line N: ...".
  shared::Result<std::string> Render(const ChatRenderInput& input) const;

  const std::string& source() const { return *source_; }
  // What kAuto resolves to for this template.
  ContentFormat content_format() const { return content_format_; }
  // What ToolArguments::kAuto resolves to for this template.
  ToolArguments tool_arguments() const { return tool_arguments_; }

 private:
  ChatTemplate(std::shared_ptr<const std::string> source, jinja::Template tmpl,
               jinja::RenderLimits limits, ContentFormat format)
      : source_(std::move(source)),
        template_(std::move(tmpl)),
        limits_(limits),
        content_format_(format) {}

  std::shared_ptr<const std::string> source_;
  jinja::Template template_;
  jinja::RenderLimits limits_;
  ContentFormat content_format_;
  ToolArguments tool_arguments_ = ToolArguments::kAsGiven;
};

// The template of a model that ships none (the caller should log that it is in use): ChatML
// turns, with tool calls and tool results written the way Qwen2.5 and Hermes write them
// (chatml_template.cc).
std::string_view ChatMlTemplate();

// strftime(3) of `t` in UTC with the C locale (Python's datetime.strftime on Linux).
shared::Result<std::string> FormatUtcTime(std::chrono::system_clock::time_point t,
                                          const std::string& format);

}  // namespace smallmind::gateway
