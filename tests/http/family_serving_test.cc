// Every model family the engine serves, end to end with its own chat template (issue 42: "serves
// through the gateway and the HTTP door with its own chat template"). smallmind-modelgen writes a
// tiny model of the family with the family's real template in tokenizer.chat_template and the
// template's special tokens in its vocabulary; a real gateway and worker serve it with no
// --chat-template; then
//   (a) gRPC Generate streams the tokens asked for;
//   (b) POST /apply-template renders the model's own template byte-identical to transformers for
//       every conversation of ../shared/chat-templates/cases.jsonl (tests/data/chat-templates for
//       Qwen3's), with the model's own BOS/EOS texts; /tokenize reads each special token of the
//       render as one token; /v1/chat/completions streams a completion whose prompt is that
//       render (its prompt_tokens are the render's, its text the gRPC greedy continuation of the
//       render's ids, both on the deterministic path);
//   (c) GetModelInfo, /v1/models and `smallmind info` show the architecture, the tensor-type mix,
//       the context length, RoPE and the window (issue 42 item 5).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/http/http_client.h"
#include "tests/integration/cli_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/rpc/gateway_fixture.h"
#include "tests/testing/scoped_temp_dir.h"
#include "tests/testing/shared_data.h"

namespace smallmind {
namespace {

using nlohmann::json;
using testing::HttpCall;
using testing::HttpReply;

// What a family's model is and what its ModelInfo must say.
struct Family {
  std::string name;           // the test's name
  std::string architecture;   // general.architecture
  std::string template_file;  // ../shared/chat-templates/<file>, else tests/data/chat-templates
  bool shared_template = true;
  std::vector<std::string> flags;  // smallmind-modelgen flags beyond the common shape
  std::set<std::string> tensor_types;
  float rope_theta = 10000.0f;
  bool rope_freqs = false;
  uint32_t rotary_dims = 64;
  uint32_t no_rope_period = 0;
  uint32_t window = 0;
  uint32_t windowed_layers = 0;
  uint32_t experts = 0;
  uint32_t shared_expert_ffn = 0;  // qwen2moe's shared expert
};

void PrintTo(const Family& f, std::ostream* os) { *os << f.name; }

// A small shape every family takes: 256-wide rows (whole K-quant super-blocks), 4 heads of 64
// over 2 KV heads, 2 layers, a 512-piece vocabulary with room for the chat tokens, and a context
// that holds a rendered conversation in it (SmolLM3's system prompt alone is ~1000 of its pieces).
const std::vector<std::string> kShape = {
    "--dim",      "256", "--ffn",   "256", "--layers",  "2",    "--heads", "4",
    "--kv-heads", "2",   "--vocab", "512", "--context", "2048", "--seed",  "7"};
constexpr uint32_t kContext = 2048;

std::vector<Family> Families() {
  const std::vector<std::string> experts = {"--experts", "4", "--experts-used", "2"};
  std::vector<Family> f;
  f.push_back({"Llama32",
               "llama",
               "meta-llama-Llama-3.2-3B-Instruct.jinja",
               true,
               {"--rope-theta", "500000", "--rope-freqs", "llama3", "--tied", "--type", "q4_k_m",
                "--bos-token", "<|begin_of_text|>", "--eos-token", "<|eot_id|>"},
               {"F32", "Q4_K", "Q6_K"},
               500000.0f,
               true});
  f.push_back(
      {"Qwen3",
       "qwen3",
       "Qwen-Qwen3-0.6B.jinja",
       false,
       {"--arch", "qwen3", "--head-dim", "128", "--rope-theta", "1000000", "--type", "q8_0",
        "--eos-token", "<|im_end|>", "--special-token", "<think>", "--special-token", "</think>"},
       {"F32", "Q8_0"},
       1000000.0f,
       false,
       128});
  Family moe{
      "Qwen3Moe",
      "qwen3moe",
      "Qwen-Qwen3-0.6B.jinja",
      false,
      {"--arch", "qwen3moe", "--head-dim", "128", "--type", "q4_0", "--eos-token", "<|im_end|>"},
      {"F32", "Q4_0"},
      10000.0f,
      false,
      128};
  moe.flags.insert(moe.flags.end(), experts.begin(), experts.end());
  moe.experts = 4;
  f.push_back(moe);
  Family mixtral{"Mixtral",
                 "llama",
                 "mistralai-Mistral-Nemo-Instruct-2407.jinja",
                 true,
                 {"--type", "q5_k", "--special-token", "[INST]", "--special-token", "[/INST]"},
                 {"F32", "Q5_K"}};
  mixtral.flags.insert(mixtral.flags.end(), experts.begin(), experts.end());
  mixtral.experts = 4;
  f.push_back(mixtral);
  // Qwen2-MoE (ChatML, as Qwen2.5's): q/k/v biases, experts not renormalised, a shared expert.
  Family qwen2moe{"Qwen2Moe",
                  "qwen2moe",
                  "Qwen-Qwen2.5-7B-Instruct.jinja",
                  true,
                  {"--arch", "qwen2moe", "--rope-theta", "1000000", "--type", "q8_0",
                   "--shared-ffn", "512", "--eos-token", "<|im_end|>"},
                  {"F32", "Q8_0"},
                  1000000.0f};
  qwen2moe.flags.insert(qwen2moe.flags.end(), experts.begin(), experts.end());
  qwen2moe.experts = 4;
  qwen2moe.shared_expert_ffn = 512;
  f.push_back(qwen2moe);
  // OLMoE (its Tulu-style <|user|> / <|assistant|> turns, as Phi-3's template writes them):
  // whole-row q/k norms over 4 KV heads.
  Family olmoe{
      "Olmoe",
      "olmoe",
      "microsoft-Phi-3-mini-4k-instruct.jinja",
      true,
      {"--arch", "olmoe", "--kv-heads", "4", "--type", "q4_k", "--eos-token", "<|endoftext|>"},
      {"F32", "Q4_K"}};
  olmoe.flags.insert(olmoe.flags.end(), experts.begin(), experts.end());
  olmoe.experts = 4;
  f.push_back(olmoe);
  const std::vector<std::string> gemma_tokens = {
      "--bos-token",     "<bos>",           "--eos-token",     "<eos>",
      "--special-token", "<start_of_turn>", "--special-token", "<end_of_turn>"};
  Family gemma2{"Gemma2",
                "gemma2",
                "google-gemma-2-2b-it.jinja",
                true,
                {"--arch", "gemma2", "--head-dim", "128", "--window", "64", "--type", "f16"},
                {"F16", "F32"},
                10000.0f,
                false,
                128,
                0,
                64,
                1};
  Family gemma3{"Gemma3",
                "gemma3",
                "google-gemma-2-2b-it.jinja",
                true,
                {"--arch", "gemma3", "--layers", "6", "--head-dim", "128", "--window", "64",
                 "--rope-theta", "1000000", "--type", "q6_k"},
                {"F32", "Q6_K"},
                1000000.0f,
                false,
                128,
                0,
                64,
                5};
  for (Family* g : {&gemma2, &gemma3}) {
    g->flags.insert(g->flags.end(), gemma_tokens.begin(), gemma_tokens.end());
    f.push_back(*g);
  }
  f.push_back({"Phi3",
               "phi3",
               "microsoft-Phi-3-mini-4k-instruct.jinja",
               true,
               {"--arch", "phi3", "--rope-dims", "48", "--longrope", "--rope-orig-context", "128",
                "--type", "q5_0", "--eos-token", "<|endoftext|>"},
               {"F32", "Q5_0"},
               10000.0f,
               true,
               48});
  f.push_back({"SmolLM3",
               "smollm3",
               "HuggingFaceTB-SmolLM3-3B.jinja",
               true,
               {"--arch", "smollm3", "--layers", "4", "--tied", "--type", "iq4_xs", "--eos-token",
                "<|im_end|>"},
               {"F32", "IQ4_XS"},
               10000.0f,
               false,
               64,
               4});
  return f;
}

std::string TemplatePath(const Family& f) {
  return f.shared_template
             ? testing::SharedDataPath("chat-templates/" + f.template_file)
             : std::string(SMALLMIND_SOURCE_DIR) + "/tests/data/chat-templates/" + f.template_file;
}

// The lines of the cases.jsonl beside the template that are about it.
std::vector<json> CasesOf(const Family& f) {
  const std::string path = TemplatePath(f);
  std::ifstream in(path.substr(0, path.rfind('/')) + "/cases.jsonl");
  std::vector<json> cases;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    json c = json::parse(line);
    if (c["template"] == f.template_file) cases.push_back(std::move(c));
  }
  return cases;
}

// Writes the family's model into `dir`; "" when smallmind-modelgen failed.
std::string MakeModel(const Family& f, const testing::ScopedTempDir& dir) {
  const std::string out = dir.File(f.name + ".gguf");
  std::vector<std::string> argv = {testing::BinaryPath("smallmind-modelgen")};
  argv.insert(argv.end(), kShape.begin(), kShape.end());
  argv.insert(argv.end(), f.flags.begin(), f.flags.end());
  argv.insert(argv.end(), {"--chat-template", TemplatePath(f), "-o", out});
  const testing::ProgramRun run = testing::RunToExit(argv);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return run.exit_code == 0 ? out : "";
}

// The concatenated content deltas and the final usage of an SSE chat completion stream.
struct StreamedChat {
  std::string content;
  std::string finish_reason;
  json usage;
  int chunks = 0;
};

StreamedChat ReadStream(const std::string& body) {
  StreamedChat s;
  for (size_t at = 0; (at = body.find("data: ", at)) != std::string::npos;) {
    const size_t end = body.find("\n\n", at);
    const std::string data = body.substr(at + 6, end - at - 6);
    at = end;
    if (data == "[DONE]") break;
    const json chunk = json::parse(data);
    if (chunk.contains("usage") && !chunk["usage"].is_null()) s.usage = chunk["usage"];
    if (chunk["choices"].empty()) continue;
    ++s.chunks;
    const json& choice = chunk["choices"][0];
    if (choice["delta"].contains("content") && choice["delta"]["content"].is_string()) {
      s.content += choice["delta"]["content"].get<std::string>();
    }
    if (!choice["finish_reason"].is_null()) s.finish_reason = choice["finish_reason"];
  }
  return s;
}

class FamilyServingTest : public ::testing::TestWithParam<Family> {
 protected:
  void SetUp() override {
    SM_REQUIRE_SHARED_DATA("chat-templates/cases.jsonl");
    const Family& f = GetParam();
    const std::string model = MakeModel(f, dir_);
    ASSERT_FALSE(model.empty());
    testing::GatewayOptions options;
    options.model = model;
    options.http = true;
    options.extra_args = {"--chat-template-date", "2026-01-15"};  // Llama 3.2's strftime_now
    auto gateway = testing::GatewayFixture::Start(options);
    ASSERT_TRUE(gateway.ok()) << f.name << ": " << gateway.status().ToString();
    gateway_ = std::move(gateway).value();
    grpc::ClientContext context;
    ASSERT_TRUE(gateway_->stub().GetModelInfo(&context, {}, &info_).ok());
  }
  HttpReply Post(const std::string& target, const json& body) {
    return HttpCall(gateway_->http_address(), "POST", target, body.dump());
  }

  testing::ScopedTempDir dir_{"family-serving"};
  std::unique_ptr<testing::GatewayFixture> gateway_;
  v1::ModelInfo info_;
};

TEST_P(FamilyServingTest, GrpcGenerateStreamsTheTokensAskedFor) {
  v1::GenerateRequest request;
  request.set_prompt("Once upon a time");
  request.mutable_sampling()->set_temperature(0);
  request.mutable_stopping()->set_max_new_tokens(4);
  request.mutable_stopping()->set_ignore_eos(true);
  const testing::GenerateOutcome out = testing::RunGenerate(gateway_->stub(), request);
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  ASSERT_NE(out.last(), nullptr);
  EXPECT_EQ(out.token_ids().size(), 4u);
  EXPECT_EQ(out.last()->finish_reason(), v1::LENGTH);
  EXPECT_EQ(out.last()->usage().completion_tokens(), 4u);
}

// The special tokens of `text`: the family's control tokens (the vocabulary's pieces that
// /tokenize gives whole) that occur in it.
std::vector<std::string> SpecialsIn(const std::string& text, const Family& f) {
  std::vector<std::string> tokens;
  for (size_t i = 0; i + 1 < f.flags.size(); ++i) {
    if (f.flags[i] == "--bos-token" || f.flags[i] == "--eos-token" ||
        f.flags[i] == "--special-token") {
      tokens.push_back(f.flags[i + 1]);
    }
  }
  for (size_t at = text.find("<|"); at != std::string::npos; at = text.find("<|", at + 1)) {
    const size_t end = text.find("|>", at);
    if (end != std::string::npos) tokens.push_back(text.substr(at, end + 2 - at));
  }
  std::vector<std::string> present;
  for (const std::string& t : tokens) {
    if (text.find(t) != std::string::npos) present.push_back(t);
  }
  return present;
}

TEST_P(FamilyServingTest, HttpRendersTheModelsOwnTemplateAndStreamsItsCompletion) {
  const Family& f = GetParam();
  EXPECT_FALSE(info_.chat_template().empty());
  const std::vector<json> cases = CasesOf(f);
  ASSERT_EQ(cases.size(), 5u) << f.template_file;
  for (const json& c : cases) {
    const std::string where = f.name + " case " + c["case"].get<std::string>();
    // The model's own BOS/EOS texts, not the case's: they must be the family's.
    const HttpReply r =
        Post("/apply-template",
             {{"messages", c["messages"]}, {"add_generation_prompt", c["add_generation_prompt"]}});
    ASSERT_TRUE(r.ok) << where << ": " << r.error;
    if (c.contains("skipped")) {
      EXPECT_EQ(r.status, 400) << where << ": " << r.body;
      EXPECT_EQ(r.json()["error"]["message"], c["skipped"]) << where;
      continue;
    }
    ASSERT_EQ(r.status, 200) << where << ": " << r.body;
    EXPECT_EQ(r.json()["prompt"], c["expected"]) << where;
  }
  // Conversation A through the chat route: its prompt is the render above.
  const json& a = cases.front();
  const std::string rendered = a["expected"];
  const bool template_wrote_bos = rendered.starts_with(info_.bos_token());
  const HttpReply tokens =
      Post("/tokenize", {{"content", rendered}, {"add_special", !template_wrote_bos}});
  ASSERT_EQ(tokens.status, 200) << tokens.body;
  const std::vector<uint32_t> ids = tokens.json()["tokens"];
  const std::vector<std::string> specials = SpecialsIn(rendered, f);
  EXPECT_FALSE(specials.empty()) << rendered;
  for (const std::string& s : specials) {  // one token each, which the render's ids hold
    const HttpReply one = Post("/tokenize", {{"content", s}, {"add_special", false}});
    const std::vector<uint32_t> id = one.json()["tokens"];
    ASSERT_EQ(id.size(), 1u) << f.name << ": " << s << " is " << one.body;
    EXPECT_NE(std::find(ids.begin(), ids.end(), id[0]), ids.end()) << f.name << ": " << s;
  }
  const HttpReply chat =
      Post("/v1/chat/completions", {{"messages", a["messages"]},
                                    {"max_tokens", 4},
                                    {"temperature", 0},
                                    {"ignore_eos", true},
                                    {"deterministic", true},
                                    {"stream", true},
                                    {"stream_options", {{"include_usage", true}}}});
  ASSERT_EQ(chat.status, 200) << chat.body;
  const StreamedChat streamed = ReadStream(chat.body);
  EXPECT_GE(streamed.chunks, 1);
  EXPECT_EQ(streamed.finish_reason, "length");
  EXPECT_EQ(streamed.usage["prompt_tokens"], ids.size()) << chat.body;
  EXPECT_EQ(streamed.usage["completion_tokens"], 4) << chat.body;
  v1::GenerateRequest same;
  for (uint32_t id : ids) same.mutable_prompt_token_ids()->add_ids(id);
  same.set_add_bos(false);
  same.mutable_sampling()->set_temperature(0);
  same.mutable_stopping()->set_max_new_tokens(4);
  same.mutable_stopping()->set_ignore_eos(true);
  same.mutable_runtime()->set_deterministic(true);
  const testing::GenerateOutcome out = testing::RunGenerate(gateway_->stub(), same);
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  EXPECT_EQ(streamed.content, out.text()) << f.name;
}

// `smallmind info`'s "name: value" lines; the tensor_mix lines as "tensor_mix TYPE".
std::map<std::string, std::string> InfoLines(const std::string& out) {
  std::map<std::string, std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    const std::string name = line.substr(0, colon);
    if (name == "tensor_mix") {
      lines["tensor_mix " + value.substr(0, value.find(' '))] = value;
    } else {
      lines[name] = value;
    }
  }
  return lines;
}

TEST_P(FamilyServingTest, ModelInfoModelsAndSmallmindInfoShowArchitectureMixContextRopeWindow) {
  const Family& f = GetParam();
  EXPECT_EQ(info_.architecture(), f.architecture);
  EXPECT_EQ(info_.context_length(), kContext);
  std::set<std::string> mix;
  for (const v1::TensorTypeUse& use : info_.tensor_mix()) mix.insert(use.type());
  EXPECT_EQ(mix, f.tensor_types);
  EXPECT_FLOAT_EQ(info_.rope_theta(), f.rope_theta);
  EXPECT_EQ(info_.rope_freqs(), f.rope_freqs);
  EXPECT_EQ(info_.rope_style(),
            f.architecture == "llama" || f.architecture == "smollm3" ? "interleaved" : "neox");
  EXPECT_EQ(info_.rotary_dims(), f.rotary_dims);
  EXPECT_EQ(info_.no_rope_period(), f.no_rope_period);
  EXPECT_EQ(info_.sliding_window(), f.window);
  EXPECT_EQ(info_.windowed_layers(), f.windowed_layers);
  EXPECT_EQ(info_.experts(), f.experts);
  EXPECT_EQ(info_.shared_expert_ffn_dim(), f.shared_expert_ffn);
  if (f.architecture == "gemma3") {
    EXPECT_FLOAT_EQ(info_.rope_theta_windowed(), 10000.0f);
  }
  if (f.architecture == "gemma2") {
    EXPECT_FLOAT_EQ(info_.attn_softcap(), 50.0f);
  }
  if (f.architecture == "phi3") {
    EXPECT_GT(info_.rope_attn_factor(), 1.0f);
  }

  const HttpReply models = HttpCall(gateway_->http_address(), "GET", "/v1/models");
  ASSERT_EQ(models.status, 200) << models.body;
  const json entry = models.json()["data"][0];
  EXPECT_EQ(entry["context_length"], kContext);
  const json& facts = entry["smallmind"];
  EXPECT_EQ(facts["architecture"], f.architecture);
  std::set<std::string> listed;
  for (const auto& [type, use] : facts["tensor_types"].items()) listed.insert(type);
  EXPECT_EQ(listed, f.tensor_types);
  EXPECT_FLOAT_EQ(facts["rope"]["theta"].get<float>(), f.rope_theta);
  EXPECT_EQ(facts["rope"]["rotary_dims"], f.rotary_dims);
  EXPECT_EQ(facts["sliding_window"], f.window);
  EXPECT_EQ(facts["windowed_layers"], f.windowed_layers);
  EXPECT_EQ(facts["experts"]["count"], f.experts);
  EXPECT_EQ(facts["experts"]["shared_ffn_dim"], f.shared_expert_ffn);

  const testing::ProgramRun run =
      testing::RunToExit({testing::BinaryPath("smallmind"), "info", "--addr", gateway_->address()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::map<std::string, std::string> lines = InfoLines(run.out);
  EXPECT_EQ(lines.at("architecture"), "\"" + f.architecture + "\"") << run.out;
  EXPECT_EQ(lines.at("context_length"), std::to_string(kContext));
  EXPECT_EQ(lines.at("sliding_window"), std::to_string(f.window));
  EXPECT_EQ(lines.at("windowed_layers"), std::to_string(f.windowed_layers));
  EXPECT_EQ(lines.at("rotary_dims"), std::to_string(f.rotary_dims));
  EXPECT_EQ(lines.at("shared_expert_ffn_dim"), std::to_string(f.shared_expert_ffn));
  EXPECT_EQ(lines.count("rope_theta"), 1u);
  for (const std::string& type : f.tensor_types) {
    EXPECT_EQ(lines.count("tensor_mix " + type), 1u) << type << " in\n" << run.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Families, FamilyServingTest, ::testing::ValuesIn(Families()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace smallmind
