// Rerank end to end (issue 45 part 2): a real gateway and worker serving a bert-tiny-rerank file
// made by smallmind-modelgen, called through POST /v1/rerank (and llama-server's /rerank and
// /v1/reranking) in the Jina / Cohere shape (ordering, top_n, return_documents, usage, errors) and
// the gRPC Rerank, the scores checked against llama.cpp's stored scores of the same file; and an
// embedding model, which Rerank refuses naming its pooling.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <memory>
#include <set>
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

constexpr double kMaxLogitError = 1e-3;  // as RerankConformanceTest's

// Writes the smallmind-modelgen --bert `preset` file into `dir`.
std::string MakeBert(const testing::ScopedTempDir& dir, const std::string& preset) {
  const std::string model = dir.File(preset + ".gguf");
  auto gen = testing::ChildProcess::Spawn(
      {testing::BinaryPath("smallmind-modelgen"), "--bert", preset, "--type", "f32", "-o", model});
  EXPECT_TRUE(gen.ok()) << gen.status().ToString();
  EXPECT_EQ((*gen)->Wait(std::chrono::milliseconds(60000)), 0) << "smallmind-modelgen failed";
  return model;
}

class RerankTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScopedTempDir("rerank");
    testing::GatewayOptions options;
    options.model = MakeBert(*dir_, "bert-tiny-rerank");
    options.http = true;
    auto started = testing::GatewayFixture::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    gateway_ = std::move(started).value().release();
    std::ifstream in(std::string(SMALLMIND_SOURCE_DIR) +
                     "/tests/data/conformance/bert-tiny-rerank-f32-rerank.json");
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
  static testing::HttpReply Rerank(const json& body, const std::string& path = "/v1/rerank") {
    return HttpCall(gateway_->http_address(), "POST", path, body.dump());
  }
  // The stored query and documents, and llama.cpp's logit of document i.
  static std::string Query() { return (*oracle_)["query"]; }
  static std::vector<std::string> Documents() {
    std::vector<std::string> docs;
    for (const json& p : (*oracle_)["pairs"]) docs.push_back(p["document"]);
    return docs;
  }
  static double Logit(size_t i) { return (*oracle_)["pairs"][i]["logit"]; }
  static size_t PairTokens() {
    size_t n = 0;
    for (const json& p : (*oracle_)["pairs"]) n += p["ids"].size();
    return n;
  }

  static testing::ScopedTempDir* dir_;
  static testing::GatewayFixture* gateway_;
  static json* oracle_;
};
testing::ScopedTempDir* RerankTest::dir_ = nullptr;
testing::GatewayFixture* RerankTest::gateway_ = nullptr;
json* RerankTest::oracle_ = nullptr;

TEST_F(RerankTest, EveryDocumentIsScoredAsLlamaCppScoresItSortedHighestFirst) {
  const testing::HttpReply r = Rerank({{"query", Query()}, {"documents", Documents()}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json body = r.json();
  EXPECT_EQ(body["object"], "list");
  EXPECT_TRUE(body["model"].is_string());
  const json& results = body["results"];
  ASSERT_EQ(results.size(), Documents().size());
  std::set<size_t> seen;
  for (size_t k = 0; k < results.size(); k++) {
    const size_t index = results[k]["index"];
    const double score = results[k]["relevance_score"];
    seen.insert(index);
    EXPECT_NEAR(score, Logit(index), kMaxLogitError * (1 + std::abs(Logit(index))))
        << "document " << index;
    EXPECT_FALSE(results[k].contains("document")) << "return_documents defaults to false";
    if (k > 0) EXPECT_GE(double(results[k - 1]["relevance_score"]), score) << "sorted";
  }
  EXPECT_EQ(seen.size(), Documents().size()) << "every index once";
  EXPECT_EQ(body["usage"]["prompt_tokens"], PairTokens()) << "[CLS] query [SEP] document each";
  EXPECT_EQ(body["usage"]["total_tokens"], body["usage"]["prompt_tokens"]);
}

TEST_F(RerankTest, TopNKeepsTheBestAndReturnDocumentsCarriesTheirText) {
  const json all = Rerank({{"query", Query()}, {"documents", Documents()}}).json();
  const testing::HttpReply r = Rerank(
      {{"query", Query()}, {"documents", Documents()}, {"top_n", 2}, {"return_documents", true}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json results = r.json()["results"];
  ASSERT_EQ(results.size(), 2u);
  for (size_t k = 0; k < 2; k++) {
    const size_t index = results[k]["index"];
    EXPECT_EQ(index, all["results"][k]["index"]) << "the same ranking, cut";
    EXPECT_EQ(results[k]["document"]["text"], Documents()[index]);
  }
  const testing::HttpReply more =
      Rerank({{"query", Query()}, {"documents", {"a", "b"}}, {"top_n", 9}});
  ASSERT_EQ(more.status, 200) << more.body;
  EXPECT_EQ(more.json()["results"].size(), 2u) << "top_n above the documents keeps them all";
}

TEST_F(RerankTest, LlamaServersAliasesServeTheSameScores) {
  const json body = {{"query", Query()}, {"documents", Documents()}, {"deterministic", true}};
  const json a = Rerank(body).json()["results"];
  for (const char* path : {"/rerank", "/v1/reranking"}) {
    const testing::HttpReply r = Rerank(body, path);
    ASSERT_EQ(r.status, 200) << path << ": " << r.body;
    EXPECT_EQ(r.json()["results"], a) << path;
  }
}

TEST_F(RerankTest, BadBodiesAreFourHundredsNamingTheField) {
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"documents", {"a"}}}, "query"},
      {{{"query", ""}, {"documents", {"a"}}}, "query"},
      {{{"query", 3}, {"documents", {"a"}}}, "query"},
      {{{"query", "q"}}, "documents"},
      {{{"query", "q"}, {"documents", json::array()}}, "documents"},
      {{{"query", "q"}, {"documents", "a"}}, "documents"},
      {{{"query", "q"}, {"documents", {"a", 7}}}, "documents"},
      {{{"query", "q"}, {"documents", {"a", ""}}}, "documents"},
      {{{"query", "q"}, {"documents", {"a"}}, {"top_n", 0}}, "top_n"},
      {{{"query", "q"}, {"documents", {"a"}}, {"return_documents", "yes"}}, "return_documents"},
  };
  for (const auto& [body, param] : cases) {
    const testing::HttpReply r = Rerank(body);
    EXPECT_EQ(r.status, 400) << body.dump() << ": " << r.body;
    EXPECT_EQ(r.json()["error"]["param"], param) << body.dump() << ": " << r.body;
  }
  const testing::HttpReply non_string = Rerank({{"query", "q"}, {"documents", {"a", 7}}});
  EXPECT_NE(non_string.body.find("documents[1]"), std::string::npos) << non_string.body;
  const testing::HttpReply model =
      Rerank({{"query", "q"}, {"documents", {"a"}}, {"model", "gpt-4"}});
  EXPECT_EQ(model.status, 404) << model.body;
  std::string long_doc;
  for (int i = 0; i < 200; i++) long_doc += "a ";
  const testing::HttpReply too_long = Rerank({{"query", "q"}, {"documents", {"a", long_doc}}});
  EXPECT_EQ(too_long.status, 400) << too_long.body;
  EXPECT_NE(too_long.body.find("documents[1]"), std::string::npos) << too_long.body;
  const testing::HttpReply embed =
      HttpCall(gateway_->http_address(), "POST", "/v1/embeddings", R"({"input":"a"})");
  EXPECT_EQ(embed.status, 400) << embed.body;
  EXPECT_NE(embed.body.find("reranker"), std::string::npos) << embed.body;
}

TEST_F(RerankTest, GrpcRerankGivesTheHttpScores) {
  v1::RerankRequest request;
  request.set_query(Query());
  for (const std::string& d : Documents()) request.add_documents(d);
  request.set_top_n(3);
  request.set_return_documents(true);
  v1::RerankResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  const grpc::Status s = gateway_->stub().Rerank(&context, request, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(response.results_size(), 3);
  EXPECT_FALSE(response.request_id().empty());
  for (const v1::RerankResult& r : response.results()) {
    EXPECT_NEAR(r.relevance_score(), Logit(r.index()),
                kMaxLogitError * (1 + std::abs(Logit(r.index()))));
    EXPECT_EQ(r.document(), Documents()[r.index()]);
  }
  EXPECT_EQ(response.usage().prompt_tokens(), PairTokens());

  v1::RerankRequest empty;
  empty.set_query("q");
  grpc::ClientContext context2;
  EXPECT_EQ(gateway_->stub().Rerank(&context2, empty, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

// An embedding model is no reranker: Rerank says which pooling it has.
TEST(RerankEmbedderTest, AnEmbeddingModelIsRefusedNamingItsPooling) {
  const testing::ScopedTempDir dir("rerank-embedder");
  testing::GatewayOptions options;
  options.model = MakeBert(dir, "bert-tiny");
  options.http = true;
  auto gateway = testing::GatewayFixture::Start(options);
  ASSERT_TRUE(gateway.ok()) << gateway.status().ToString();
  const testing::HttpReply r = HttpCall((*gateway)->http_address(), "POST", "/v1/rerank",
                                        R"({"query":"q","documents":["a"]})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("not a reranker"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("mean"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace smallmind
