// Embeddings end to end (issue 45 item 2): a real gateway and worker serving a bert-tiny file made
// by smallmind-modelgen, called through POST /v1/embeddings (OpenAI's shape: string, array,
// token ids, float and base64, dimensions, its errors) and the gRPC Embed, the vectors checked
// against llama.cpp's stored embedding of the same file; and a generation model (builtin:tiny),
// which embeds only when last-token pooling is asked.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "tests/http/http_client.h"
#include "tests/testing/child_process.h"
#include "tests/testing/rpc/gateway_fixture.h"
#include "tests/testing/scoped_temp_dir.h"

namespace smallmind {
namespace {

using nlohmann::json;
using testing::HttpCall;

std::vector<double> Floats(const json& array) { return array.get<std::vector<double>>(); }

double Norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

double Cosine(const std::vector<double>& a, const std::vector<double>& b) {
  double dot = 0;
  for (size_t i = 0; i < a.size(); i++) dot += a[i] * b[i];
  return dot / (Norm(a) * Norm(b));
}

// OpenAI's base64 embedding: little-endian float32 values.
std::vector<double> DecodeBase64Floats(const std::string& text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
  };
  std::vector<unsigned char> bytes;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const int v = value(c);
    if (v < 0) break;  // padding
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push_back(static_cast<unsigned char>((acc >> bits) & 0xff));
    }
  }
  std::vector<double> out(bytes.size() / 4);
  for (size_t i = 0; i < out.size(); i++) {
    float f;
    std::memcpy(&f, bytes.data() + 4 * i, 4);
    out[i] = f;
  }
  return out;
}

class EmbeddingsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScopedTempDir("embed");
    const std::string model = dir_->File("bert-tiny.gguf");
    auto gen = testing::ChildProcess::Spawn({testing::BinaryPath("smallmind-modelgen"), "--bert",
                                             "bert-tiny", "--type", "f32", "-o", model});
    ASSERT_TRUE(gen.ok()) << gen.status().ToString();
    ASSERT_EQ((*gen)->Wait(std::chrono::milliseconds(60000)), 0) << "smallmind-modelgen failed";
    testing::GatewayOptions options;
    options.model = model;
    options.http = true;
    auto started = testing::GatewayFixture::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    gateway_ = std::move(started).value().release();
    std::ifstream in(std::string(SMALLMIND_SOURCE_DIR) +
                     "/tests/data/conformance/bert-tiny-f32-embed.json");
    oracle_ = new json(json::parse(in));
  }
  static void TearDownTestSuite() {
    delete gateway_;
    gateway_ = nullptr;
    delete dir_;
    dir_ = nullptr;
    delete oracle_;
    oracle_ = nullptr;
  }
  static testing::HttpReply Embeddings(const std::string& body) {
    return HttpCall(gateway_->http_address(), "POST", "/v1/embeddings", body);
  }
  // llama.cpp's embedding of stored input i.
  static std::vector<double> Oracle(int i) { return Floats((*oracle_)["inputs"][i]["embedding"]); }
  static std::string OracleText(int i) { return (*oracle_)["inputs"][i]["text"]; }

  static testing::ScopedTempDir* dir_;
  static testing::GatewayFixture* gateway_;
  static json* oracle_;
};
testing::ScopedTempDir* EmbeddingsTest::dir_ = nullptr;
testing::GatewayFixture* EmbeddingsTest::gateway_ = nullptr;
json* EmbeddingsTest::oracle_ = nullptr;

TEST_F(EmbeddingsTest, AStringIsOneNormalisedVectorMatchingLlamaCpp) {
  const testing::HttpReply r = Embeddings(json{{"input", OracleText(0)}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const json body = r.json();
  EXPECT_EQ(body["object"], "list");
  ASSERT_EQ(body["data"].size(), 1u);
  EXPECT_EQ(body["data"][0]["object"], "embedding");
  EXPECT_EQ(body["data"][0]["index"], 0);
  const std::vector<double> v = Floats(body["data"][0]["embedding"]);
  ASSERT_EQ(v.size(), 64u);
  EXPECT_NEAR(Norm(v), 1.0, 1e-5);
  EXPECT_GE(Cosine(v, Oracle(0)), 1 - 1e-3);
  const int tokens = static_cast<int>((*oracle_)["inputs"][0]["ids"].size()) + 2;  // [CLS] [SEP]
  EXPECT_EQ(body["usage"]["prompt_tokens"], tokens) << r.body;
  EXPECT_EQ(body["usage"]["total_tokens"], tokens);
  EXPECT_FALSE(body["model"].get<std::string>().empty());
}

TEST_F(EmbeddingsTest, AnArrayOfStringsAndTokenIdsEmbedsEachInOrderFloatOrBase64) {
  const int n = static_cast<int>((*oracle_)["inputs"].size());
  json inputs = json::array();
  for (int i = 0; i < n; i++) inputs.push_back(OracleText(i));
  std::vector<int> ids = {2};  // [CLS] input 1's ids [SEP]: the same tokens as its text
  for (int id : (*oracle_)["inputs"][1]["ids"]) ids.push_back(id);
  ids.push_back(3);
  inputs.push_back(ids);
  const testing::HttpReply f = Embeddings(json{{"input", inputs}}.dump());
  const testing::HttpReply b =
      Embeddings(json{{"input", inputs}, {"encoding_format", "base64"}}.dump());
  ASSERT_EQ(f.status, 200) << f.body;
  ASSERT_EQ(b.status, 200) << b.body;
  ASSERT_EQ(f.json()["data"].size(), static_cast<size_t>(n + 1));
  for (int i = 0; i < n; i++) {
    const std::vector<double> v = Floats(f.json()["data"][i]["embedding"]);
    EXPECT_EQ(f.json()["data"][i]["index"], i);
    EXPECT_GE(Cosine(v, Oracle(i)), 1 - 1e-3) << "input " << i;
    const std::vector<double> decoded = DecodeBase64Floats(b.json()["data"][i]["embedding"]);
    ASSERT_EQ(decoded.size(), v.size());
    for (size_t k = 0; k < v.size(); k++) EXPECT_FLOAT_EQ(decoded[k], v[k]);
  }
  EXPECT_GE(Cosine(Floats(f.json()["data"][n]["embedding"]), Oracle(1)), 1 - 1e-3)
      << "token ids embed as their text does";
}

TEST_F(EmbeddingsTest, DimensionsTruncatesThenRenormalisesAndRefusesMoreThanTheModels) {
  const testing::HttpReply full = Embeddings(json{{"input", "hello"}}.dump());
  const testing::HttpReply cut = Embeddings(json{{"input", "hello"}, {"dimensions", 16}}.dump());
  ASSERT_EQ(cut.status, 200) << cut.body;
  std::vector<double> head = Floats(full.json()["data"][0]["embedding"]);
  head.resize(16);
  const std::vector<double> v = Floats(cut.json()["data"][0]["embedding"]);
  ASSERT_EQ(v.size(), 16u);
  EXPECT_NEAR(Norm(v), 1.0, 1e-5);
  EXPECT_GE(Cosine(v, head), 1 - 1e-6);
  const testing::HttpReply over = Embeddings(json{{"input", "hello"}, {"dimensions", 65}}.dump());
  EXPECT_EQ(over.status, 400) << over.body;
  EXPECT_NE(over.body.find("64"), std::string::npos) << "names the model's width: " << over.body;
  EXPECT_EQ(over.json()["error"]["param"], "dimensions") << over.body;
}

TEST_F(EmbeddingsTest, BadInputsAre400sInOpenAisErrorShape) {
  const std::pair<std::string, std::string> cases[] = {
      {R"({"input":""})", "input"},
      {R"({"input":[]})", "input"},
      {R"({"input":5})", "input"},
      {R"({"input":["a", 7]})", "input"},
      {R"({"input":[[]]})", "input"},
      {R"({})", "input"},
      {R"({"input":"a","encoding_format":"int8"})", "encoding_format"},
      {R"({"input":"a","dimensions":0})", "dimensions"},
      {R"({"input":"a","pooling":"max"})", "pooling"},
  };
  for (const auto& [body, param] : cases) {
    const testing::HttpReply r = Embeddings(body);
    EXPECT_EQ(r.status, 400) << body << " -> " << r.body;
    EXPECT_EQ(r.json()["error"]["type"], "invalid_request_error") << r.body;
    EXPECT_EQ(r.json()["error"]["param"], param) << body << " -> " << r.body;
  }
  std::string words;
  for (int i = 0; i < 200; i++) words += "the ";
  const testing::HttpReply too_long = Embeddings(json{{"input", {"a", words}}}.dump());
  EXPECT_EQ(too_long.status, 400) << too_long.body;
  EXPECT_NE(too_long.body.find("128"), std::string::npos) << "names the context" << too_long.body;
  EXPECT_NE(too_long.body.find("input[1]"), std::string::npos) << too_long.body;
  const testing::HttpReply model = Embeddings(R"({"input":"a","model":"gpt-4"})");
  EXPECT_EQ(model.status, 404) << model.body;
  EXPECT_EQ(model.json()["error"]["code"], "model_not_found") << model.body;
}

TEST_F(EmbeddingsTest, GrpcEmbedGivesTheHttpVectorsAndRefusesGenerationOnAnEncoder) {
  v1::EmbedRequest request;
  request.add_inputs()->set_text(OracleText(0));
  request.add_inputs()->set_text(OracleText(2));
  request.mutable_runtime()->set_deterministic(true);
  v1::EmbedResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  const grpc::Status s = gateway_->stub().Embed(&context, request, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(response.embeddings_size(), 2);
  EXPECT_FALSE(response.request_id().empty());
  for (int i : {0, 1}) {
    const auto& values = response.embeddings(i).values();
    const std::vector<double> v(values.begin(), values.end());
    EXPECT_GE(Cosine(v, Oracle(i == 0 ? 0 : 2)), 1 - 1e-3) << "input " << i;
  }
  EXPECT_GT(response.usage().prompt_tokens(), 0u);

  v1::EmbedRequest empty;
  grpc::ClientContext context2;
  EXPECT_EQ(gateway_->stub().Embed(&context2, empty, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  v1::GenerateRequest generate;
  generate.set_prompt("hello");
  const testing::GenerateOutcome g = testing::RunGenerate(gateway_->stub(), generate);
  EXPECT_EQ(g.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << g.status.error_message();
  EXPECT_NE(g.status.error_message().find("encoder"), std::string::npos)
      << g.status.error_message();
}

// A generation model has no pooling: /v1/embeddings refuses it, naming the way out, unless the
// request asks last-token pooling.
TEST(EmbeddingsDecoderTest, AGenerationModelEmbedsOnlyWithLastTokenPoolingAsked) {
  testing::GatewayOptions options;
  options.http = true;
  auto gateway = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const std::string base = (*gateway)->http_address();
  const testing::HttpReply refused = HttpCall(base, "POST", "/v1/embeddings", R"({"input":"hi"})");
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_NE(refused.body.find("last"), std::string::npos) << refused.body;
  const testing::HttpReply last = HttpCall(base, "POST", "/v1/embeddings",
                                           R"({"input":["hi","hello there"],"pooling":"last"})");
  ASSERT_EQ(last.status, 200) << last.body;
  ASSERT_EQ(last.json()["data"].size(), 2u);
  const std::vector<double> a = Floats(last.json()["data"][0]["embedding"]);
  const std::vector<double> b = Floats(last.json()["data"][1]["embedding"]);
  EXPECT_NEAR(Norm(a), 1.0, 1e-5);
  EXPECT_LT(Cosine(a, b), 1 - 1e-6) << "different inputs, different vectors";
  const testing::HttpReply again =
      HttpCall(base, "POST", "/v1/embeddings", R"({"input":"hi","pooling":"last"})");
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_GE(Cosine(a, Floats(again.json()["data"][0]["embedding"])), 1 - 1e-6);
}

}  // namespace
}  // namespace smallmind
