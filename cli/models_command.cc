#include "cli/models_command.h"

#include <cstdio>
#include <string>

#include "cli/http_client.h"

namespace smallmind::cli {
namespace {

using Json = nlohmann::json;

// `j[key]` as text ("-" when absent or null).
std::string Field(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "-";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

// 110000000 -> "110.0M".
std::string Count(const Json& j) {
  if (!j.is_number()) return "-";
  const double n = j.get<double>();
  char text[32];
  if (n >= 1e9) {
    std::snprintf(text, sizeof text, "%.1fB", n / 1e9);
  } else if (n >= 1e6) {
    std::snprintf(text, sizeof text, "%.1fM", n / 1e6);
  } else if (n >= 1e3) {
    std::snprintf(text, sizeof text, "%.1fK", n / 1e3);
  } else {
    std::snprintf(text, sizeof text, "%.0f", n);
  }
  return text;
}

}  // namespace

ModelsCommand::ModelsCommand(CLI::App& parent)
    : Command(parent, "models", "list the models a gateway serves, with their facts") {
  AddHttpFlags(app(), http_);
  app().add_flag("--json", json_, "print /v1/models' JSON as the gateway answers it");
}

shared::Result<int> ModelsCommand::Run() const {
  SM_ASSIGN_OR_RETURN(HttpClient client, HttpClient::Create(http_.addr, http_.api_key));
  SM_ASSIGN_OR_RETURN(HttpAnswer answer, client.Get("/v1/models"));
  if (answer.status != 200) return shared::Unavailable(HttpErrorText(answer));
  if (json_) {
    std::printf("%s\n", answer.body.dump(2).c_str());
    return 0;
  }
  std::printf("%-28s %-8s %-12s %-14s %8s %8s\n", "MODEL", "STATE", "ARCHITECTURE", "QUANTIZATION",
              "PARAMS", "CONTEXT");
  for (const Json& m : answer.body.value("data", Json::array())) {
    const Json facts = m.value("smallmind", Json::object());
    // A gateway without per-model states (one model, always loaded) has no `state`.
    const std::string state = m.contains("state") ? Field(m, "state") : "loaded";
    std::printf("%-28s %-8s %-12s %-14s %8s %8s\n", Field(m, "id").c_str(), state.c_str(),
                Field(facts, "architecture").c_str(), Field(facts, "quantization").c_str(),
                Count(facts.value("parameters", Json())).c_str(),
                Field(m, "context_length").c_str());
  }
  return 0;
}

}  // namespace smallmind::cli
