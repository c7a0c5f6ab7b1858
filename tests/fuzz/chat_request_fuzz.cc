// libFuzzer target for the HTTP door's request bodies: the first byte picks the endpoint and the
// chat template, the rest is the body a client sends. ParseOpenAiRequest either refuses it with a
// 400 naming its cause or gives a request; a chat request's messages, tools and
// chat_template_kwargs then render through ChatPrompter (the served path) with a real template,
// giving a prompt or an error with a message; never crash, hang or read out of bounds. Templates:
// ChatML, plus every *.jinja in $SMALLMIND_FUZZ_TEMPLATES (e.g. ../shared/chat-templates). Built
// by tests/fuzz/CMakeLists.txt with clang only (-fsanitize=fuzzer,address,undefined).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gateway/chat/chat_prompt.h"
#include "gateway/http/openai_request.h"
#include "smallmind/v1/inference.pb.h"

namespace {

namespace http = smallmind::gateway::http;

void Require(bool condition) {
  if (!condition) std::abort();
}

std::vector<http::ChatPrompter>* Prompters() {
  static auto* prompters = [] {
    auto* out = new std::vector<http::ChatPrompter>;
    std::vector<std::string> sources = {""};  // "" with no template in the model info: ChatML
    if (const char* dir = std::getenv("SMALLMIND_FUZZ_TEMPLATES")) {
      for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".jinja") continue;
        std::ifstream in(entry.path(), std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        sources.push_back(text.str());
      }
    }
    for (const std::string& source : sources) {
      smallmind::v1::ModelInfo info;
      info.set_bos_token("<s>");
      info.set_eos_token("</s>");
      info.set_add_bos_token(true);
      auto p =
          http::ChatPrompter::Create(info, source, "fuzz", std::chrono::system_clock::time_point{});
      Require(p.ok());  // real templates parse
      out->push_back(std::move(*p));
    }
    return out;
  }();
  return prompters;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t pick = data[0];
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  const http::Endpoint endpoint =
      pick & 1 ? http::Endpoint::kChatCompletions : http::Endpoint::kCompletions;
  http::HttpError error;
  auto request = http::ParseOpenAiRequest(endpoint, body, &error);
  if (!request) {
    Require(error.status == 400);
    Require(!error.message.empty());
    return 0;
  }
  if (endpoint != http::Endpoint::kChatCompletions) return 0;
  const std::vector<http::ChatPrompter>& prompters = *Prompters();
  http::ChatRequest chat;
  chat.messages = request->messages;
  chat.tools = request->tools;
  chat.kwargs = request->chat_template_kwargs;  // as HttpApi passes them: null when absent
  chat.add_generation_prompt = request->add_generation_prompt;
  auto prompt = prompters[(pick >> 1) % prompters.size()].Render(chat);
  if (!prompt.ok()) {
    Require(!prompt.status().message().empty());
    return 0;
  }
  // The prompt goes out as JSON (/apply-template) and as a protobuf string: valid UTF-8.
  try {
    (void)nlohmann::json(prompt->text).dump();
  } catch (const nlohmann::json::exception&) {
    Require(false);
  }
  return 0;
}
