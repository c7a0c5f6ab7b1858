#include "gateway/admission/validate.h"

#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

namespace smallmind::gateway {
namespace {

using smallmind::v1::GenerateRequest;

GenerateRequest TextRequest() {
  GenerateRequest r;
  r.set_prompt("Once upon a time");
  return r;
}

// The validation error for `r`, which the test expects to fail.
std::string ErrorFor(const GenerateRequest& r) {
  auto v = Validate(r, "gen-1");
  EXPECT_FALSE(v.ok());
  if (v.ok()) return "";
  EXPECT_EQ(v.status().code(), shared::StatusCode::kInvalidArgument);
  return v.status().message();
}

TEST(ValidateTest, FillsDocumentedDefaultsAndAGeneratedId) {
  auto v = Validate(TextRequest(), "gen-1");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  const GenerateRequest& p = v->proto();
  EXPECT_EQ(v->request_id(), "gen-1");
  EXPECT_EQ(p.sampling().temperature(), 1.0f);
  EXPECT_EQ(p.sampling().top_p(), 1.0f);
  EXPECT_EQ(p.sampling().repetition_penalty(), 1.0f);
  EXPECT_EQ(p.stopping().max_new_tokens(), 0u) << "the worker, which knows the prompt's length, "
                                                  "resolves the default";
  EXPECT_EQ(p.prompt(), "Once upon a time");
}

TEST(ValidateTest, KeepsCallerValuesIncludingGreedyTemperatureZero) {
  GenerateRequest r = TextRequest();
  r.set_request_id("mine");
  r.mutable_sampling()->set_temperature(0);
  r.mutable_sampling()->set_top_p(0.5f);
  r.mutable_sampling()->set_seed(7);
  r.mutable_stopping()->set_max_new_tokens(10);
  auto v = Validate(r, "gen-1");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->request_id(), "mine");
  EXPECT_EQ(v->proto().sampling().temperature(), 0.0f);
  EXPECT_EQ(v->proto().sampling().top_p(), 0.5f);
  EXPECT_EQ(v->proto().sampling().seed(), 7u);
  EXPECT_EQ(v->proto().stopping().max_new_tokens(), 10u);
}

TEST(ValidateTest, RejectsARequestWithNeitherPromptForm) {
  EXPECT_EQ(ErrorFor(GenerateRequest()),
            "exactly one of prompt or prompt_token_ids must be set, got neither");
  GenerateRequest empty_text;  // generation from BOS alone, as run.c does with no prompt
  empty_text.set_prompt("");
  EXPECT_TRUE(Validate(empty_text, "gen-1").ok());
}

TEST(ValidateTest, LeavesTheModelDependentLimitsToTheWorker) {
  // Token ids against the vocabulary, lengths against the context and top_k against the
  // vocabulary are checked once, by the worker (tests/worker/request_builder_test.cc).
  GenerateRequest r;
  r.mutable_prompt_token_ids()->add_ids(1);
  r.mutable_prompt_token_ids()->add_ids(1000000);
  r.mutable_sampling()->set_top_k(1000000);
  r.mutable_stopping()->set_max_new_tokens(1000000);
  auto v = Validate(r, "gen-1");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->prompt_token_count(), 2u);
  EXPECT_EQ(v->proto().stopping().max_new_tokens(), 1000000u);
}

TEST(ValidateTest, EverySamplingFieldErrorNamesFieldRangeAndValue) {
  struct Case {
    void (*set)(smallmind::v1::SamplingOptions*);
    const char* message;
  };
  const Case cases[] = {
      {[](auto* s) { s->set_temperature(-0.5f); },
       "sampling.temperature must be in [0, 100], got -0.5"},
      {[](auto* s) { s->set_temperature(101); },
       "sampling.temperature must be in [0, 100], got 101"},
      {[](auto* s) { s->set_temperature(std::nanf("")); },
       "sampling.temperature must be in [0, 100], got nan"},
      {[](auto* s) { s->set_top_p(0); }, "sampling.top_p must be in (0, 1], got 0"},
      {[](auto* s) { s->set_top_p(1.5f); }, "sampling.top_p must be in (0, 1], got 1.5"},
      {[](auto* s) { s->set_min_p(-0.25f); }, "sampling.min_p must be in [0, 1], got -0.25"},
      {[](auto* s) { s->set_repetition_penalty(0); },
       "sampling.repetition_penalty must be in (0, 10], got 0"},
      {[](auto* s) { s->set_repetition_penalty(11); },
       "sampling.repetition_penalty must be in (0, 10], got 11"},
      {[](auto* s) { s->set_presence_penalty(2.5f); },
       "sampling.presence_penalty must be in [-2, 2], got 2.5"},
      {[](auto* s) { s->set_frequency_penalty(-3); },
       "sampling.frequency_penalty must be in [-2, 2], got -3"},
      {[](auto* s) { (*s->mutable_logit_bias())[50256] = 100.5f; },
       "sampling.logit_bias[50256] must be in [-100, 100], got 100.5"},
      {[](auto* s) { (*s->mutable_logit_bias())[7] = -std::numeric_limits<float>::infinity(); },
       "sampling.logit_bias[7] must be in [-100, 100], got -inf"},
      {[](auto* s) {
         for (uint32_t id = 0; id <= 4096; ++id) (*s->mutable_logit_bias())[id] = 1;
       },
       "sampling.logit_bias must hold at most 4096 tokens, got 4097"},
  };
  for (const Case& c : cases) {
    GenerateRequest r = TextRequest();
    c.set(r.mutable_sampling());
    EXPECT_EQ(ErrorFor(r), c.message);
  }
}

TEST(ValidateTest, AcceptsTheEdgesOfEverySamplingRange) {
  GenerateRequest r = TextRequest();
  auto* s = r.mutable_sampling();
  s->set_temperature(100);
  s->set_top_k(32000);
  s->set_top_p(1);
  s->set_min_p(1);
  s->set_repetition_penalty(10);
  s->set_presence_penalty(-2);
  s->set_frequency_penalty(2);
  for (uint32_t id = 0; id < 4096; ++id) (*s->mutable_logit_bias())[id] = id % 2 ? 100 : -100;
  r.set_logprobs(20);
  EXPECT_TRUE(Validate(r, "gen-1").ok());
}

TEST(ValidateTest, StoppingErrorsNameFieldAndRange) {
  GenerateRequest too_many_stops = TextRequest();
  for (int i = 0; i < 17; ++i) too_many_stops.mutable_stopping()->add_stop(std::string("x"));
  EXPECT_EQ(ErrorFor(too_many_stops), "stopping.stop must hold at most 16 strings, got 17");

  GenerateRequest empty_stop = TextRequest();
  empty_stop.mutable_stopping()->add_stop(std::string("ok"));
  empty_stop.mutable_stopping()->add_stop(std::string(""));
  EXPECT_EQ(ErrorFor(empty_stop), "stopping.stop[1] must be [1, 256] bytes long, got 0");

  GenerateRequest long_stop = TextRequest();
  long_stop.mutable_stopping()->add_stop(std::string(257, 'a'));
  EXPECT_EQ(ErrorFor(long_stop), "stopping.stop[0] must be [1, 256] bytes long, got 257");
}

TEST(ValidateTest, ContextShiftAllowsMaxNewTokensPastAnyContextUpToItsOwnLimit) {
  GenerateRequest r = TextRequest();
  r.mutable_stopping()->set_context_overflow(smallmind::v1::CONTEXT_OVERFLOW_SHIFT);
  r.mutable_stopping()->set_max_new_tokens(shared::kMaxNewTokensWithShift);
  r.mutable_stopping()->set_n_keep(100000);  // against the context: the worker's check
  EXPECT_TRUE(Validate(r, "gen-1").ok());
  r.mutable_stopping()->set_max_new_tokens(shared::kMaxNewTokensWithShift + 1);
  EXPECT_EQ(
      ErrorFor(r),
      "stopping.max_new_tokens must be in [1, 1048576] with context_overflow SHIFT (0 = 256), "
      "got 1048577");
}

TEST(ValidateTest, AnUnknownContextOverflowIsRejected) {
  GenerateRequest unknown = TextRequest();
  unknown.mutable_stopping()->set_context_overflow(static_cast<smallmind::v1::ContextOverflow>(7));
  EXPECT_EQ(
      ErrorFor(unknown),
      "stopping.context_overflow must be CONTEXT_OVERFLOW_FINISH (0) or CONTEXT_OVERFLOW_SHIFT "
      "(1), got 7");
}

TEST(ValidateTest, AnUnknownResponseFormatIsRejected) {
  GenerateRequest unknown = TextRequest();
  unknown.set_response_format(static_cast<smallmind::v1::ResponseFormat>(3));
  EXPECT_EQ(ErrorFor(unknown),
            "response_format must be RESPONSE_FORMAT_TEXT (0), RESPONSE_FORMAT_JSON_OBJECT (1) or "
            "RESPONSE_FORMAT_JSON_SCHEMA (2), got 3");
  GenerateRequest json = TextRequest();
  json.set_response_format(smallmind::v1::RESPONSE_FORMAT_JSON_OBJECT);
  EXPECT_TRUE(Validate(json, "id").ok());
}

// The gateway compiles the schema, so one the worker could not enforce never waits for a worker.
TEST(ValidateTest, AJsonSchemaIsCompiledAndOneItCannotEnforceIsRejected) {
  GenerateRequest r = TextRequest();
  r.set_response_format(smallmind::v1::RESPONSE_FORMAT_JSON_SCHEMA);
  r.set_json_schema(R"({"type": "object", "properties": {"a": {"type": "integer"}}})");
  EXPECT_TRUE(Validate(r, "id").ok());
  r.set_json_schema(R"({"type": "object", "properties": {"a": {"type": "string",
                        "pattern": "^a"}}})");
  EXPECT_EQ(ErrorFor(r),
            "json_schema at \"/properties/a\": keyword `pattern` is not supported (it would "
            "not be enforced)");
  r.clear_json_schema();
  EXPECT_EQ(ErrorFor(r), "response_format RESPONSE_FORMAT_JSON_SCHEMA needs json_schema");
  r.set_response_format(smallmind::v1::RESPONSE_FORMAT_JSON_OBJECT);
  r.set_json_schema("{}");
  EXPECT_EQ(ErrorFor(r),
            "json_schema is set but response_format is not RESPONSE_FORMAT_JSON_SCHEMA (2)");
}

TEST(ValidateTest, TopLevelErrorsNameFieldAndRange) {
  GenerateRequest logprobs = TextRequest();
  logprobs.set_logprobs(21);
  EXPECT_EQ(ErrorFor(logprobs), "logprobs must be in [0, 20] (0 = none), got 21");
  GenerateRequest long_id = TextRequest();
  long_id.set_request_id(std::string(129, 'i'));
  EXPECT_EQ(ErrorFor(long_id), "request_id must be [0, 128] bytes long, got 129");
}

}  // namespace
}  // namespace smallmind::gateway
