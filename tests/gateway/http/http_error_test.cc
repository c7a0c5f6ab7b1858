#include "gateway/http/http_error.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace smallmind::gateway::http {
namespace {

TEST(HttpErrorTest, StatusCodesMapToOpenAiHttpStatuses) {
  using shared::StatusCode;
  const std::pair<StatusCode, int> cases[] = {
      {StatusCode::kInvalidArgument, 400},    {StatusCode::kUnauthenticated, 401},
      {StatusCode::kNotFound, 404},           {StatusCode::kResourceExhausted, 429},
      {StatusCode::kUnavailable, 503},        {StatusCode::kDeadlineExceeded, 504},
      {StatusCode::kFailedPrecondition, 400}, {StatusCode::kInternal, 500},
  };
  for (auto [code, http] : cases) {
    EXPECT_EQ(ErrorFromStatus(shared::Status(code, "m")).status, http)
        << shared::StatusCodeName(code);
  }
  EXPECT_EQ(ErrorFromStatus(shared::ResourceExhausted("full")).type, "rate_limit_error");
}

TEST(HttpErrorTest, ValidationMessagesNameTheOpenAiField) {
  HttpError e = ErrorFromStatus(shared::InvalidArgument("sampling.top_p must be in (0, 1], got 2"));
  EXPECT_EQ(e.param, "top_p");
  EXPECT_EQ(e.message, "top_p must be in (0, 1], got 2");
  e = ErrorFromStatus(shared::InvalidArgument(
      "stopping.max_new_tokens must be in [1, 512] (the context length; 0 = 256), got 600"));
  EXPECT_EQ(e.param, "max_tokens");
  EXPECT_EQ(e.message.rfind("max_tokens must be in [1, 512]", 0), 0u);
  e = ErrorFromStatus(shared::InvalidArgument("prompt_token_ids[3] must be in [0, 512)"));
  EXPECT_EQ(e.param, "prompt");
  e = ErrorFromStatus(shared::InvalidArgument("the prompt has 600 tokens"));
  EXPECT_EQ(e.param, "");
}

TEST(HttpErrorTest, BodyIsTheOpenAiErrorObjectWithNullsForMissingParts) {
  const auto body = nlohmann::json::parse(ErrorBody(MakeError(404, "no route GET /x")));
  EXPECT_EQ(body["error"]["message"], "no route GET /x");
  EXPECT_EQ(body["error"]["type"], "not_found_error");
  EXPECT_TRUE(body["error"]["param"].is_null());
  EXPECT_TRUE(body["error"]["code"].is_null());
  // Invalid UTF-8 in a message is replaced, never thrown.
  EXPECT_NE(ErrorBody(MakeError(400, "bad \xff byte")).find("bad "), std::string::npos);
}

}  // namespace
}  // namespace smallmind::gateway::http
