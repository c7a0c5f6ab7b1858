// `smallmind chat`: an interactive terminal chat with a served model through the gateway's HTTP
// door (/v1/chat/completions, streamed; the server applies the model's chat template). Input as
// cli/chat_input.h reads it (multi-line with a trailing backslash, /reset, /system, /model,
// /help, /exit); Ctrl-C stops the answer being written and keeps the chat; end of input leaves.
// Works with stdin not a terminal (no prompt is printed then). The answer goes to stdout, the
// reasoning and each answer's stats line to stderr. See cli/command.h.
#pragma once

#include <string>

#include "cli/command.h"
#include "cli/http_flags.h"

namespace smallmind::cli {

struct ChatSettings {
  std::string model;        // "" = the first /v1/models lists
  std::string system;       // the system prompt; "" = none
  int max_tokens = 0;       // 0 = the gateway's default
  double temperature = -1;  // < 0 = the gateway's default
  bool ignore_eos = false;
};

class ChatCommand : public Command {
 public:
  explicit ChatCommand(CLI::App& parent);
  shared::Result<int> Run() const override;

 private:
  HttpFlags http_;
  ChatSettings settings_;
};

}  // namespace smallmind::cli
