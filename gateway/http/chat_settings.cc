#include "gateway/http/chat_settings.h"

#include <utility>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

namespace smallmind::gateway::http {

shared::Result<ChatSettings> MakeChatSettings(const smallmind::v1::ModelInfo& info, size_t index,
                                              const ChatFlags& flags) {
  const TemplateSource& source =
      index < flags.model_sources.size() && !flags.model_sources[index].text.empty()
          ? flags.model_sources[index]
          : flags.fallback;
  SM_ASSIGN_OR_RETURN(ChatPrompter prompter,
                      ChatPrompter::Create(info, source.text, source.origin, flags.pinned_now));
  ChatSettings settings{std::move(prompter)};
  settings.tool_call_syntax =
      flags.tool_call_syntax == "auto"
          ? settings.prompter.tool_call_syntax()
          : ToolCallSyntaxFromName(flags.tool_call_syntax).value_or(ToolCallSyntax::kNone);
  const std::string& format = flags.reasoning_format;
  settings.harmony =
      format == "harmony" || (format == "auto" && settings.prompter.speaks_harmony());
  settings.reasoning =
      !settings.harmony &&
      (format == "think" || (format == "auto" && settings.prompter.teaches_thinking()));
  settings.vocab_size = info.vocab_size();
  return settings;
}

std::string DescribeChatSettings(const ChatSettings& settings, const ChatFlags& flags) {
  const bool auto_syntax = flags.tool_call_syntax == "auto";
  const bool auto_format = flags.reasoning_format == "auto";
  return fmt::format(
      "chat template: {}; tool calls the model makes on its own (tool_choice auto): {} ({}); "
      "reasoning_content: {} ({})",
      settings.prompter.origin(), ToolCallSyntaxName(settings.tool_call_syntax),
      auto_syntax ? "read off the chat template" : "--tool-call-syntax",
      settings.harmony     ? "harmony channels split (analysis -> reasoning_content, calls -> "
                             "tool_calls)"
      : settings.reasoning ? "<think> sections split off"
                           : "none",
      auto_format ? "read off the chat template" : "--reasoning-format");
}

shared::Result<std::shared_ptr<const ChatSettings>> ChatSettingsCache::Get(
    size_t index, uint64_t loads, const smallmind::v1::ModelInfo& info, const std::string& id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (index < entries_.size() && entries_[index].settings && entries_[index].loads == loads) {
      return entries_[index].settings;
    }
  }
  // Built outside the lock (a template parse); two first requests may both build, one keeps.
  SM_ASSIGN_OR_RETURN(ChatSettings built, MakeChatSettings(info, index, flags_));
  auto settings = std::make_shared<const ChatSettings>(std::move(built));
  std::lock_guard<std::mutex> lock(mu_);
  if (entries_.size() <= index) entries_.resize(index + 1);
  Entry& entry = entries_[index];
  if (entry.settings && entry.loads == loads) return entry.settings;
  spdlog::info("HTTP model `{}`: {}", id, DescribeChatSettings(*settings, flags_));
  entry = {loads, settings};
  return std::shared_ptr<const ChatSettings>(std::move(settings));
}

}  // namespace smallmind::gateway::http
