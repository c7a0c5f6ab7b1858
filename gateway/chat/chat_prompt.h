// ChatPrompter: turns a chat request's messages into the prompt text with the served model's chat
// template (its GGUF `tokenizer.chat_template`, or --chat-template FILE, or ChatML when it has
// none), the model's BOS/EOS texts and the pinned or current date, and decides whether the worker
// adds BOS (not when the text already starts with it). Built once at HTTP server start; Render is
// const and thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gateway/chat/chat_template.h"
#include "gateway/chat/tool_call_syntax.h"
#include "shared/status.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway::http {

struct ChatRequest {
  nlohmann::ordered_json messages;
  nlohmann::ordered_json tools;                                      // null = none
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();  // chat_template_kwargs
  bool add_generation_prompt = true;
  // Test hook of /apply-template: other BOS/EOS texts than the model's (nullopt = the model's).
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
};

struct ChatPrompt {
  std::string text;
  // false when the text starts with the BOS text and the tokenizer would add BOS again; nullopt =
  // the model's own rule.
  std::optional<bool> add_bos;
};

class ChatPrompter {
 public:
  // `template_source` ("" = the model's `chat_template`, else ChatML) overrides the model's.
  // `pinned_now` fixes strftime_now (--chat-template-date); nullopt = the clock at each render.
  // A template that does not parse is an error naming `origin`.
  static shared::Result<ChatPrompter> Create(
      const smallmind::v1::ModelInfo& info, const std::string& template_source,
      const std::string& origin, std::optional<std::chrono::system_clock::time_point> pinned_now);

  // INVALID_ARGUMENT with the template's own message when it refuses the conversation.
  shared::Result<ChatPrompt> Render(const ChatRequest& request) const;

  // Where the template came from, for the startup log line.
  const std::string& origin() const { return origin_; }
  // The tool-call syntax the template teaches (ToolCallSyntaxOfTemplate).
  ToolCallSyntax tool_call_syntax() const { return tool_call_syntax_; }
  // True when the template writes <think> sections (TemplateTeachesThinking).
  bool teaches_thinking() const { return teaches_thinking_; }
  // True when the template renders OpenAI's harmony format (gpt-oss; TemplateSpeaksHarmony).
  bool speaks_harmony() const { return speaks_harmony_; }

 private:
  ChatPrompter(ChatTemplate tmpl, std::string origin)
      : template_(std::move(tmpl)), origin_(std::move(origin)) {}

  ChatTemplate template_;
  std::string origin_;
  ToolCallSyntax tool_call_syntax_ = ToolCallSyntax::kNone;
  bool teaches_thinking_ = false;
  bool speaks_harmony_ = false;
  std::string bos_token_;
  std::string eos_token_;
  bool add_bos_token_ = false;
  std::optional<std::chrono::system_clock::time_point> pinned_now_;
};

// "2026-01-15" -> that day at 00:00 UTC; INVALID_ARGUMENT naming --chat-template-date otherwise.
shared::Result<std::chrono::system_clock::time_point> ParseTemplateDate(const std::string& date);

}  // namespace smallmind::gateway::http
