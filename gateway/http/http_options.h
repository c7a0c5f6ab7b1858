// HttpOptions: the OpenAI-compatible HTTP door's settings (part of GatewayConfig; --http-port and
// the --chat-template, --tool-call-syntax, --reasoning-format flags). Plain data;
// thread-compatible.
#pragma once

#include <cstddef>
#include <string>

#include "shared/request_limits.h"

namespace smallmind::gateway {

// The OpenAI-compatible HTTP door (gateway/http), off unless --http-port is given.
struct HttpOptions {
  int port = -1;  // -1 = off; 0 = any free port
  int threads = 2;
  // Open connections at most (--http-max-connections): one more is answered 503 and closed, so
  // idle connections cannot take every file descriptor the gRPC port needs too.
  int max_connections = 1024;
  std::string chat_template_file;  // "" = the model's own template (ChatML when it has none)
  std::string chat_template_date;  // "YYYY-MM-DD" pins strftime_now; "" = today
  // How the model writes the tool calls it makes on its own: "auto" (read off the chat
  // template), "none", "hermes", "llama3_json" or "mistral" (gateway/chat/tool_call_syntax.h).
  std::string tool_call_syntax = "auto";
  // Reasoning models' <think> sections: "auto" (split off into reasoning_content when the chat
  // template writes them; a template that renders harmony: "harmony"), "think" (always), "harmony"
  // (gpt-oss's channels: analysis -> reasoning_content, final -> content, calls -> tool_calls),
  // "none" (all left in content).
  std::string reasoning_format = "auto";
  size_t max_body_bytes = shared::kMaxRequestBytes;
  bool enabled() const { return port >= 0; }
};

}  // namespace smallmind::gateway
