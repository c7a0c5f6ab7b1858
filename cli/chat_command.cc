#include "cli/chat_command.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "cli/chat_input.h"
#include "cli/http_client.h"
#include "cli/interrupt_watcher.h"

namespace smallmind::cli {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// What one answer did, for its stats line.
struct AnswerRun {
  Clock::time_point start = Clock::now();
  std::optional<Clock::time_point> first;
  std::string text;
  Json usage;
  std::string finish;
  std::string error;  // the stream's error event, if any
};

void OnEvent(const Json& event, AnswerRun& run, bool dim_reasoning) {
  if (event.contains("error")) {
    run.error = event["error"].value("message", event["error"].dump());
    return;
  }
  if (event.contains("usage") && event["usage"].is_object()) run.usage = event["usage"];
  for (const Json& choice : event.value("choices", Json::array())) {
    const Json delta = choice.value("delta", Json::object());
    for (const char* key : {"reasoning_content", "content"}) {
      if (!delta.contains(key) || !delta[key].is_string()) continue;
      const std::string piece = delta[key].get<std::string>();
      if (piece.empty()) continue;
      if (!run.first) run.first = Clock::now();
      if (key[0] == 'r') {
        std::fprintf(stderr, dim_reasoning ? "\x1b[2m%s\x1b[0m" : "%s", piece.c_str());
      } else {
        run.text += piece;
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
      }
    }
    if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
      run.finish = choice["finish_reason"].get<std::string>();
    }
  }
}

std::string StatsLine(const AnswerRun& run, bool interrupted) {
  std::vector<std::string> parts;
  const Clock::time_point end = Clock::now();
  if (run.first) {
    parts.push_back(fmt::format(
        "TTFT {} ms",
        std::chrono::duration_cast<std::chrono::milliseconds>(*run.first - run.start).count()));
  }
  if (run.usage.is_object()) {
    const uint64_t n = run.usage.value("completion_tokens", uint64_t{0});
    const double s = run.first ? std::chrono::duration<double>(end - *run.first).count() : 0;
    if (n > 1 && s > 0) parts.push_back(fmt::format("{:.1f} tok/s", (n - 1) / s));
    const uint64_t cached =
        run.usage.value("prompt_tokens_details", Json::object()).value("cached_tokens", 0);
    parts.push_back(fmt::format("{} prompt ({} cached)",
                                run.usage.value("prompt_tokens", uint64_t{0}), cached));
    parts.push_back(fmt::format("{} generated", n));
  }
  parts.push_back(interrupted ? "stopped" : run.finish.empty() ? "ended" : run.finish);
  std::string line = "[";
  for (size_t i = 0; i < parts.size(); ++i) line += (i ? " · " : "") + parts[i];
  return line + "]";
}

class ChatSession {
 public:
  ChatSession(HttpClient& client, ChatSettings settings)
      : client_(client), settings_(std::move(settings)) {}

  // Reads entries until /exit or the end of input.
  void Loop(bool interactive);
  // Ctrl-C, from the watcher's thread.
  void OnInterrupt(bool interactive);

 private:
  // Sends the conversation and prints the answer; false when the request failed (the user's
  // message is then dropped, so that it can be sent again).
  bool Answer();
  Json Body() const;

  HttpClient& client_;
  ChatSettings settings_;
  std::vector<Json> history_;  // user and assistant messages, oldest first
  std::atomic<bool> answering_{false};
};

Json ChatSession::Body() const {
  Json messages = Json::array();
  if (!settings_.system.empty()) {
    messages.push_back({{"role", "system"}, {"content", settings_.system}});
  }
  for (const Json& m : history_) messages.push_back(m);
  Json body{{"model", settings_.model},
            {"messages", std::move(messages)},
            {"stream", true},
            {"stream_options", {{"include_usage", true}}}};
  if (settings_.max_tokens > 0) body["max_tokens"] = settings_.max_tokens;
  if (settings_.temperature >= 0) body["temperature"] = settings_.temperature;
  if (settings_.ignore_eos) body["ignore_eos"] = true;
  return body;
}

bool ChatSession::Answer() {
  AnswerRun run;
  const bool dim = isatty(STDERR_FILENO);
  answering_ = true;
  auto end = client_.Stream("/v1/chat/completions", Body(),
                            [&](const Json& event) { OnEvent(event, run, dim); });
  answering_ = false;
  client_.ClearInterrupt();
  if (!run.text.empty() && run.text.back() != '\n') std::fputc('\n', stdout);
  std::fflush(stdout);
  if (!end.ok()) {
    std::fprintf(stderr, "[error: %s]\n", end.status().message().c_str());
    return false;
  }
  if (!end->interrupted && end->answer.status != 200) {
    std::fprintf(stderr, "[error: %s]\n", HttpErrorText(end->answer).c_str());
    return false;
  }
  if (!run.error.empty()) std::fprintf(stderr, "[error: %s]\n", run.error.c_str());
  std::fprintf(stderr, "%s\n", StatsLine(run, end->interrupted).c_str());
  // A stopped answer stays in the conversation as far as it got, as the web chat keeps it.
  if (!run.text.empty()) history_.push_back({{"role", "assistant"}, {"content", run.text}});
  return true;
}

void ChatSession::OnInterrupt(bool interactive) {
  if (answering_) {
    client_.Interrupt();
  } else if (interactive) {
    std::fprintf(stderr, "\n(Ctrl-C stops an answer; /exit or Ctrl-D leaves)\n> ");
  }
}

void ChatSession::Loop(bool interactive) {
  using Kind = ChatEntry::Kind;
  auto prompt = [interactive](bool continued) {
    if (interactive) std::fprintf(stderr, continued ? "... " : "> ");
  };
  while (std::optional<ChatEntry> entry = ReadChatEntry(std::cin, prompt)) {
    switch (entry->kind) {
      case Kind::kExit: return;
      case Kind::kHelp: std::fprintf(stderr, "%s", kChatHelp); break;
      case Kind::kReset:
        history_.clear();
        std::fprintf(stderr, "[conversation reset]\n");
        break;
      case Kind::kSystem:
        settings_.system = entry->text;
        history_.clear();
        std::fprintf(stderr, "[system prompt %s; conversation reset]\n",
                     entry->text.empty() ? "cleared" : "set");
        break;
      case Kind::kModel:
        if (entry->text.empty()) {
          std::fprintf(stderr, "[model: %s]\n", settings_.model.c_str());
        } else {
          settings_.model = entry->text;
          std::fprintf(stderr, "[model %s]\n", settings_.model.c_str());
        }
        break;
      case Kind::kUnknown:
        std::fprintf(stderr, "[unknown command %s: /help lists them]\n", entry->text.c_str());
        break;
      case Kind::kMessage:
        history_.push_back({{"role", "user"}, {"content", entry->text}});
        if (!Answer()) history_.pop_back();
        break;
    }
  }
}

// The first model /v1/models lists.
shared::Result<std::string> FirstModel(HttpClient& client) {
  SM_ASSIGN_OR_RETURN(HttpAnswer answer, client.Get("/v1/models"));
  if (answer.status != 200) return shared::Unavailable(HttpErrorText(answer));
  const Json data = answer.body.value("data", Json::array());
  if (data.empty() || !data[0].contains("id")) return shared::Unavailable("no model is served");
  return data[0]["id"].get<std::string>();
}

}  // namespace

ChatCommand::ChatCommand(CLI::App& parent)
    : Command(parent, "chat", "chat with a served model in the terminal (the HTTP door)") {
  AddHttpFlags(app(), http_);
  app().add_option("--model", settings_.model, "the served model")->default_str("the first listed");
  app().add_option("--system", settings_.system, "the system prompt")->type_name("TEXT");
  app()
      .add_option("--max-tokens", settings_.max_tokens, "tokens per answer at most")
      ->default_str("the gateway's");
  app()
      .add_option("--temperature", settings_.temperature, "sampling temperature (0 = greedy)")
      ->default_str("the gateway's");
  app().add_flag("--ignore-eos", settings_.ignore_eos,
                 "keep generating past the end-of-text token (up to --max-tokens)");
  app().footer(kChatHelp);
}

shared::Result<int> ChatCommand::Run() const {
  SM_ASSIGN_OR_RETURN(HttpClient client, HttpClient::Create(http_.addr, http_.api_key));
  ChatSettings settings = settings_;
  if (settings.model.empty()) {
    SM_ASSIGN_OR_RETURN(settings.model, FirstModel(client));
  }
  const bool interactive = isatty(STDIN_FILENO);
  if (interactive) {
    std::fprintf(stderr, "smallmind chat with %s at %s (/help lists the commands)\n",
                 settings.model.c_str(), http_.addr.c_str());
  }
  ChatSession session(client, std::move(settings));
  const InterruptWatcher watcher([&] { session.OnInterrupt(interactive); });
  session.Loop(interactive);
  return 0;
}

}  // namespace smallmind::cli
