// AnthropicFormatter: the Anthropic Messages response of one /v1/messages request, built from the
// worker's GenerateResponse messages: the whole `message` object (thinking, text and tool_use
// content blocks, stop_reason, usage), or the stream's events (message_start, ping,
// content_block_start / _delta / _stop per block, message_delta with stop_reason and usage,
// message_stop). Thinking, forced calls and the model's own calls are split as the OpenAI door
// splits them (ReasoningParser, ToolCallScanner, ToolCallParser; HarmonyParser for gpt-oss). Used
// on the connection's strand; not thread-safe.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gateway/chat/harmony_parser.h"
#include "gateway/chat/reasoning_parser.h"
#include "gateway/chat/tool_call_parser.h"
#include "gateway/chat/tool_call_scanner.h"
#include "gateway/http/choice_formatter.h"
#include "gateway/http/openai_format.h"

namespace smallmind::gateway::http {

class AnthropicFormatter final : public ChoiceFormatter {
 public:
  // `shape`: id ("msg_..."), model, the tool and reasoning fields as HttpApi sets them for a chat
  // request (tool_call_id is the first tool_use block's id). `stop_sequences`: the request's.
  AnthropicFormatter(ResponseShape shape, std::vector<std::string> stop_sequences);

  std::string StreamStart() override;
  std::string StreamMessage(const smallmind::v1::GenerateResponse& message) override;
  std::string StreamAbort() override;
  void Add(const smallmind::v1::GenerateResponse& message) override;
  std::string EndStream(Choices choices) const override;
  std::string WholeBody(Choices choices) const override;
  std::string ErrorEvent(const HttpError& error) const override;
  std::string ErrorResponseBody(const HttpError& error) const override;

 private:
  enum class Block { kNone, kText, kThinking, kToolUse };
  // Stream events: a block opened (closing the one open), closed, and deltas of each kind.
  std::string Open(Block block, nlohmann::ordered_json content_block);
  std::string Close();
  std::string Text(const std::string& text);
  std::string Thinking(const std::string& thinking);
  std::string ToolUse(const std::string& name, const std::string& input_json);
  std::string ToolCalls(ToolCallOutput released);
  std::string ToolUseId(int index) const;
  void Note(const smallmind::v1::GenerateResponse& message);
  // end_turn, max_tokens, stop_sequence or tool_use (`tool_uses` blocks were written).
  const char* StopReason(int tool_uses) const;
  nlohmann::ordered_json StopSequence() const;
  nlohmann::ordered_json Usage() const;
  // The whole reply's content blocks.
  nlohmann::ordered_json Content() const;

  const ResponseShape shape_;
  const std::vector<std::string> stop_sequences_;
  std::string text_;  // everything so far (whole, or a stream with tool_from_output)
  smallmind::v1::FinishReason finish_ = smallmind::v1::FINISH_REASON_UNSPECIFIED;
  smallmind::v1::Usage usage_;
  ReasoningParser reasoning_;
  ToolCallParser parser_;
  HarmonyParser harmony_;
  ToolCallScanner scanner_;
  Block open_ = Block::kNone;
  int index_ = -1;     // the last block opened
  int tool_uses_ = 0;  // tool_use blocks opened
};

}  // namespace smallmind::gateway::http
