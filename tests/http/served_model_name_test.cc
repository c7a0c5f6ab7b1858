// --served-model-name on both doors: /v1/models lists the aliases (never the server's path), a
// request naming one of them runs, and one naming another model is 404 model_not_found over HTTP
// and NOT_FOUND over gRPC before anything runs.
#include <gtest/gtest.h>

#include <string>

#include "tests/http/http_client.h"
#include "tests/testing/rpc/gateway_fixture.h"

namespace smallmind {
namespace {

using testing::HttpCall;

class ServedModelNameTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    testing::GatewayOptions options;
    options.http = true;
    options.extra_args = {"--served-model-name", "tiny-a,tiny-b"};
    auto started = testing::GatewayFixture::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    gateway_ = std::move(started).value().release();
  }
  static void TearDownTestSuite() {
    delete gateway_;
    gateway_ = nullptr;
  }
  static v1::GenerateRequest Request(const std::string& model) {
    v1::GenerateRequest r;
    r.set_prompt("hi");
    r.mutable_stopping()->set_max_new_tokens(2);
    if (!model.empty()) r.set_model(model);
    return r;
  }
  static testing::GatewayFixture* gateway_;
};
testing::GatewayFixture* ServedModelNameTest::gateway_ = nullptr;

TEST_F(ServedModelNameTest, ModelsListsEveryAliasFirstOneFirst) {
  const testing::HttpReply models = HttpCall(gateway_->http_address(), "GET", "/v1/models");
  ASSERT_EQ(models.status, 200) << models.body;
  const auto data = models.json()["data"];
  ASSERT_EQ(data.size(), 2u) << models.body;
  EXPECT_EQ(data[0]["id"], "tiny-a");
  EXPECT_EQ(data[1]["id"], "tiny-b");
  EXPECT_EQ(HttpCall(gateway_->http_address(), "GET", "/v1/models/tiny-b").status, 200);
}

TEST_F(ServedModelNameTest, HttpRunsAnAliasAndRefusesAnotherNameWith404) {
  const testing::HttpReply ok = HttpCall(gateway_->http_address(), "POST", "/v1/completions",
                                         R"({"model":"tiny-b","prompt":"hi","max_tokens":2})");
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(ok.json()["model"], "tiny-a") << "responses carry the primary id";
  const testing::HttpReply other =
      HttpCall(gateway_->http_address(), "POST", "/v1/completions",
               R"({"model":"builtin:tiny","prompt":"hi","max_tokens":2})");
  ASSERT_EQ(other.status, 404) << other.body;
  EXPECT_EQ(other.json()["error"]["code"], "model_not_found") << other.body;
  EXPECT_NE(other.body.find("tiny-a"), std::string::npos) << "names what is served: " << other.body;
}

TEST_F(ServedModelNameTest, GrpcRunsAnAliasOrNoModelAndRefusesAnotherWithNotFound) {
  EXPECT_TRUE(testing::RunGenerate(gateway_->stub(), Request("tiny-a")).status.ok());
  EXPECT_TRUE(testing::RunGenerate(gateway_->stub(), Request("")).status.ok());
  const grpc::Status other = testing::RunGenerate(gateway_->stub(), Request("gpt-4")).status;
  EXPECT_EQ(other.error_code(), grpc::StatusCode::NOT_FOUND) << other.error_message();
  EXPECT_NE(other.error_message().find("gpt-4"), std::string::npos) << other.error_message();
}

}  // namespace
}  // namespace smallmind
