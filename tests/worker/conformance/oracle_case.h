// OracleCase: one tests/data/conformance/<case>.json as written by
// bench/compare/make_conformance_data.mjs: how to make the model (smallmind-modelgen flags or a
// file of ../shared) and its SHA-256, and per prompt the token ids and llama.cpp's greedy steps
// (token, top-2 gap, top-5 logprobs). Header-only test helper; plain data, thread-compatible.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "shared/status.h"
#include "worker/types/token_id.h"

namespace smallmind::worker::testing {

struct OracleStep {
  TokenId token = 0;                            // llama.cpp's greedy token
  double gap = 0;                               // its top-1 minus top-2 logprob
  std::vector<std::pair<TokenId, double>> top;  // top-5 (id, logprob), best first
};

struct OraclePrompt {
  std::string name;
  std::vector<TokenId> ids;  // evaluated as given (BOS included when present)
  std::vector<OracleStep> steps;
};

struct OracleCase {
  std::string name;
  std::vector<std::string> modelgen_flags;  // smallmind-modelgen flags without -o; or empty and
  std::string shared_file;                  // a file under ../shared
  std::string sha256;                       // of the model file llama.cpp ran
  std::string regenerate;                   // the command that remakes this file
  std::string oracle;                       // "node-llama-cpp X (llama.cpp Y)"
  // Why a known-failing case is stored disabled (its test is DISABLED_); "" for a live case.
  std::string disabled;
  std::vector<OraclePrompt> prompts;
};

// The folder of the stored cases (in the source tree).
inline std::string OracleCaseDir() {
  return std::string(SMALLMIND_SOURCE_DIR) + "/tests/data/conformance";
}

// Every *.json file of OracleCaseDir() but the embeddings and rerank oracles' *-embed.json and
// *-rerank.json, sorted; empty when the folder is missing.
inline std::vector<std::string> OracleCaseFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(OracleCaseDir(), ec)) {
    const std::string name = e.path().filename().string();
    const bool other_oracle = (name.size() > 11 && name.ends_with("-embed.json")) ||
                              (name.size() > 12 && name.ends_with("-rerank.json"));
    if (e.path().extension() == ".json" && !other_oracle) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline shared::Result<OracleCase> LoadOracleCase(const std::string& path) {
  std::ifstream in(path);
  if (!in) return shared::NotFound("cannot open " + path);
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    OracleCase c;
    c.name = j.at("case").get<std::string>();
    const nlohmann::json& model = j.at("model");
    if (model.contains("modelgen")) {
      c.modelgen_flags = model.at("modelgen").get<std::vector<std::string>>();
    } else {
      c.shared_file = model.at("shared").get<std::string>();
    }
    c.sha256 = model.at("sha256").get<std::string>();
    c.disabled = j.value("disabled", "");
    const nlohmann::json& oracle = j.at("oracle");
    c.regenerate = oracle.at("regenerate").get<std::string>();
    c.oracle = "node-llama-cpp " + oracle.at("node_llama_cpp").get<std::string>() + " (" +
               oracle.at("llama_cpp").get<std::string>() + ")";
    for (const nlohmann::json& p : j.at("prompts")) {
      OraclePrompt prompt{
          p.at("name").get<std::string>(), p.at("ids").get<std::vector<TokenId>>(), {}};
      for (const nlohmann::json& s : p.at("steps")) {
        OracleStep step{s.at("token").get<TokenId>(), s.at("gap").get<double>(), {}};
        for (const nlohmann::json& t : s.at("top5")) {
          step.top.emplace_back(t.at(0).get<TokenId>(), t.at(1).get<double>());
        }
        prompt.steps.push_back(std::move(step));
      }
      c.prompts.push_back(std::move(prompt));
    }
    return c;
  } catch (const nlohmann::json::exception& e) {
    return shared::InvalidArgument(path + ": " + e.what());
  }
}

}  // namespace smallmind::worker::testing
