// The rerank body and answer (gateway/http/rerank_request.h) and the results' order
// (gateway/relay/rerank_call.h RankResults): fields parsed into a RerankRequest, each bad field a
// 400 naming it, results sorted by score with ties by index, top_n and documents applied.
#include "gateway/http/rerank_request.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gateway/relay/rerank_call.h"

namespace smallmind::gateway::http {
namespace {

TEST(RerankRequestTest, ParsesQueryDocumentsAndOptions) {
  HttpError error;
  const auto r = ParseRerankBody(
      R"({"model":"m","query":"q","documents":["a","b"],"top_n":1,"return_documents":true,)"
      R"("deterministic":true,"user":"u"})",
      &error);
  ASSERT_TRUE(r.has_value()) << error.message;
  EXPECT_EQ(r->model, "m");
  EXPECT_EQ(r->rerank.query(), "q");
  ASSERT_EQ(r->rerank.documents_size(), 2);
  EXPECT_EQ(r->rerank.documents(1), "b");
  EXPECT_EQ(r->rerank.top_n(), 1u);
  EXPECT_TRUE(r->rerank.return_documents());
  EXPECT_TRUE(r->rerank.runtime().deterministic());
}

TEST(RerankRequestTest, EachBadFieldIsAFourHundredNamingIt) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"documents":["a"]})", "query"},
      {R"({"query":["q"],"documents":["a"]})", "query"},
      {R"({"query":"q","documents":[]})", "documents"},
      {R"({"query":"q","documents":[{"text":"a"}]})", "documents"},
      {R"({"query":"q","documents":["a"],"top_n":-1})", "top_n"},
      {R"({"query":"q","documents":["a"],"top_n":1.5})", "top_n"},
      {R"({"query":"q","documents":["a"],"deterministic":1})", "deterministic"},
      {R"({"query":"q","documents":["a"],"model":3})", "model"},
  };
  for (const auto& [body, param] : cases) {
    HttpError error;
    EXPECT_FALSE(ParseRerankBody(body, &error).has_value()) << body;
    EXPECT_EQ(error.status, 400) << body;
    EXPECT_EQ(error.param, param) << body << ": " << error.message;
  }
}

TEST(RerankRequestTest, ResultsAreSortedByScoreTiesByIndexCutToTopN) {
  v1::RerankRequest request;
  for (const char* d : {"d0", "d1", "d2", "d3"}) request.add_documents(d);
  v1::EmbedResponse scores;
  scores.set_request_id("r");
  for (float s : {0.5f, 2.0f, 0.5f, -1.0f}) scores.add_embeddings()->add_values(s);
  scores.mutable_usage()->set_prompt_tokens(40);
  v1::RerankResponse all = RankResults(request, scores);
  ASSERT_EQ(all.results_size(), 4);
  const uint32_t order[] = {1, 0, 2, 3};
  for (int k = 0; k < 4; k++) EXPECT_EQ(all.results(k).index(), order[k]) << "rank " << k;
  EXPECT_TRUE(all.results(0).document().empty()) << "no documents unless asked";
  EXPECT_EQ(all.usage().prompt_tokens(), 40u);
  request.set_top_n(2);
  request.set_return_documents(true);
  v1::RerankResponse top = RankResults(request, scores);
  ASSERT_EQ(top.results_size(), 2);
  EXPECT_EQ(top.results(1).document(), "d0");
  const nlohmann::json body = nlohmann::json::parse(FormatRerank(top, "served"));
  EXPECT_EQ(body["model"], "served");
  EXPECT_EQ(body["object"], "list");
  EXPECT_EQ(body["results"][0]["index"], 1);
  EXPECT_DOUBLE_EQ(body["results"][0]["relevance_score"].get<double>(), 2.0);
  EXPECT_EQ(body["results"][0]["document"]["text"], "d1");
  EXPECT_EQ(body["usage"]["total_tokens"], 40);
}

}  // namespace
}  // namespace smallmind::gateway::http
