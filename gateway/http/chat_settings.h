// ChatSettings: how the chat doors treat one served model (issue 45): its ChatPrompter (its own
// `chat-template=FILE`, else --chat-template, else its GGUF `tokenizer.chat_template`, else
// ChatML, with its BOS/EOS), the syntax of the tool calls it makes on its own, and how its replies
// split (harmony channels, <think> sections). ChatSettingsCache keeps them per model, built the
// first time a chat request needs them after each load. Built by HttpDoor; Get runs on connection
// strands concurrently. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gateway/chat/chat_prompt.h"
#include "gateway/chat/tool_call_syntax.h"
#include "shared/status.h"
#include "smallmind/v1/inference.pb.h"

namespace smallmind::gateway::http {

// One template text read at start, and where it came from ("--chat-template FILE").
struct TemplateSource {
  std::string text;  // "" = none: the model's own
  std::string origin;
};

// The flags the settings follow, with every template file already read.
struct ChatFlags {
  TemplateSource fallback;                    // --chat-template
  std::vector<TemplateSource> model_sources;  // per catalogued model (chat-template=FILE)
  std::optional<std::chrono::system_clock::time_point> pinned_now;  // --chat-template-date
  std::string tool_call_syntax = "auto";                            // --tool-call-syntax
  std::string reasoning_format = "auto";                            // --reasoning-format
};

struct ChatSettings {
  ChatPrompter prompter;
  // How the model writes the tool calls it makes on its own (tool_choice "auto"); kNone leaves
  // them text.
  ToolCallSyntax tool_call_syntax = ToolCallSyntax::kNone;
  // The model thinks in <think> sections first: split them off into `reasoning_content`.
  bool reasoning = false;
  // The model replies in harmony channels (gpt-oss): analysis -> `reasoning_content`, final ->
  // content, calls of the offered functions -> `tool_calls`. Replaces `reasoning` and
  // `tool_call_syntax` for chat replies.
  bool harmony = false;
  uint32_t vocab_size = 0;  // the model's, for /detokenize's id check
};

// The settings of model `index` (its flags' template, else the fallback, else the model's own)
// loaded with `info`. INVALID_ARGUMENT naming the template when it does not parse.
shared::Result<ChatSettings> MakeChatSettings(const smallmind::v1::ModelInfo& info, size_t index,
                                              const ChatFlags& flags);

// "chat template: ...; tool calls the model makes on its own: ... (...); reasoning_content: ...",
// for the log line of a model's first chat request (and the default model's at start).
std::string DescribeChatSettings(const ChatSettings& settings, const ChatFlags& flags);

class ChatSettingsCache {
 public:
  explicit ChatSettingsCache(ChatFlags flags) : flags_(std::move(flags)) {}

  // Model `index`'s settings for the facts of its load number `loads` (ModelStatus::loads):
  // built and logged (naming `id`) on first use, built again once the model reloaded, since its
  // file may have changed. Errors as MakeChatSettings.
  shared::Result<std::shared_ptr<const ChatSettings>> Get(size_t index, uint64_t loads,
                                                          const smallmind::v1::ModelInfo& info,
                                                          const std::string& id);

  const ChatFlags& flags() const { return flags_; }

 private:
  struct Entry {
    uint64_t loads = 0;
    std::shared_ptr<const ChatSettings> settings;
  };

  const ChatFlags flags_;
  std::mutex mu_;
  std::vector<Entry> entries_;  // guarded by mu_; by model index, grown on demand
};

}  // namespace smallmind::gateway::http
