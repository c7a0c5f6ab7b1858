// The worker's half of request validation: the checks that need the model (token ids against the
// vocabulary, prompt and max_new_tokens against the context, top_k against the vocabulary), the
// defaults it resolves (max_new_tokens by the room the prompt leaves), and an error instead of an
// abort for a caller that skipped the gateway.
#include "worker/request_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "shared/request_limits.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {
namespace {

// The byte-level vocabulary (259 tokens, BOS by default) with a 64-token context.
class RequestBuilderTest : public ::testing::Test {
 protected:
  RequestBuilderTest() {
    model_.tokenizer = MakeByteLevelTokenizer();
    model_.llama.config.vocab_size = model_.tokenizer->vocab_size();
    model_.llama.config.context_length = 64;
  }

  shared::Result<SequenceRequest> Build(const v1::GenerateRequest& request) {
    v1::SubmitRequest submit;
    *submit.mutable_request() = request;
    return BuildSequenceRequest(submit, model_);
  }
  std::string ErrorFor(const v1::GenerateRequest& request) {
    auto built = Build(request);
    EXPECT_FALSE(built.ok());
    if (built.ok()) return "";
    EXPECT_EQ(built.status().code(), shared::StatusCode::kInvalidArgument);
    return built.status().message();
  }

  LoadedModel model_;
};

v1::GenerateRequest IdRequest(int n, uint32_t id = 70) {
  v1::GenerateRequest r;
  for (int i = 0; i < n; ++i) r.mutable_prompt_token_ids()->add_ids(id);
  return r;
}

TEST_F(RequestBuilderTest, TokenIdOutsideTheVocabularyIsRejectedNamingItsIndex) {
  v1::GenerateRequest r = IdRequest(1);
  r.mutable_prompt_token_ids()->add_ids(259);
  EXPECT_EQ(ErrorFor(r), "prompt_token_ids[1] must be in [0, 259) (the vocabulary), got 259");
}

TEST_F(RequestBuilderTest, IdPromptMustHoldOneToContextIds) {
  v1::GenerateRequest empty;
  empty.mutable_prompt_token_ids();
  EXPECT_EQ(ErrorFor(empty), "prompt_token_ids must hold [1, 64] ids (the context length), got 0");
  EXPECT_EQ(ErrorFor(IdRequest(65)),
            "prompt_token_ids must hold [1, 64] ids (the context length), got 65");
}

TEST_F(RequestBuilderTest, PromptMustLeaveRoomForOneNewToken) {
  // 63 ids + BOS fill the context; without BOS one position is left.
  EXPECT_EQ(ErrorFor(IdRequest(63)),
            "the prompt has 64 tokens but the model's context is 64; at most 63 prompt tokens "
            "leave room for a new one");
  v1::GenerateRequest no_bos = IdRequest(63);
  no_bos.set_add_bos(false);
  auto built = Build(no_bos);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  EXPECT_EQ(built->stopping.max_new_tokens, 1);

  v1::GenerateRequest long_text;
  long_text.set_prompt(std::string(100, 'a'));  // 101 byte tokens with BOS
  EXPECT_NE(ErrorFor(long_text).find("the model's context is 64"), std::string::npos);
}

// A 7 MB prompt once cost ~6 s of tokenizing before the context check refused it. Now a text
// that must take more tokens than the context, counting the most bytes one token stands for, is
// refused before any tokenizing; a text under that bound is tokenized and checked as before.
TEST_F(RequestBuilderTest, TextTooLongForTheContextIsRefusedBeforeItIsTokenized) {
  model_.max_token_text_bytes = MaxTokenTextBytes(*model_.tokenizer);
  const size_t per_token = model_.max_token_text_bytes;
  ASSERT_GE(per_token, 4u);
  v1::GenerateRequest huge;
  huge.set_prompt(std::string(7 << 20, 'a'));
  const std::string error = ErrorFor(huge);
  EXPECT_EQ(error.rfind("the prompt is 7340032 bytes, so at least ", 0), 0u) << error;
  EXPECT_NE(error.find("but the model's context is 64"), std::string::npos) << error;
  v1::GenerateRequest edge;  // ceil(bytes / per_token) + BOS = 64 tokens at least: refused
  edge.set_prompt(std::string(62 * per_token + 1, 'a'));
  EXPECT_EQ(ErrorFor(edge).rfind("the prompt is ", 0), 0u);
  v1::GenerateRequest under;  // 63 at least: tokenized (101 byte tokens), refused by its count
  under.set_prompt(std::string(100, 'a'));
  if (62 * per_token >= 100) {
    EXPECT_EQ(ErrorFor(under).rfind("the prompt has 101 tokens", 0), 0u) << ErrorFor(under);
  }
  v1::GenerateRequest fits;
  fits.set_prompt(std::string(10, 'a'));
  EXPECT_TRUE(Build(fits).ok());
}

TEST_F(RequestBuilderTest, EmptyTextWithoutBosIsRejected) {
  v1::GenerateRequest r;
  r.set_prompt("");
  r.set_add_bos(false);
  EXPECT_EQ(ErrorFor(r), "the prompt is empty (give text, token ids, or add_bos=true)");
  r.set_add_bos(true);
  EXPECT_TRUE(Build(r).ok()) << "BOS alone is a prompt";
}

TEST_F(RequestBuilderTest, TopKAboveTheVocabularyIsRejected) {
  v1::GenerateRequest r = IdRequest(2);
  r.mutable_sampling()->set_top_k(260);
  EXPECT_EQ(ErrorFor(r), "sampling.top_k must be in [0, 259] (0 = off), got 260");
  r.mutable_sampling()->set_top_k(259);
  EXPECT_TRUE(Build(r).ok());
}

TEST_F(RequestBuilderTest, LogitBiasTokensMustBeInTheVocabularyAndArriveSorted) {
  v1::GenerateRequest r = IdRequest(2);
  auto& bias = *r.mutable_sampling()->mutable_logit_bias();
  bias[258] = -100;
  bias[3] = 2.5f;
  bias[100] = 1;
  auto built = Build(r);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  using Entry = std::pair<TokenId, float>;
  EXPECT_EQ(built->sampling.logit_bias,
            (std::vector<Entry>{{3, 2.5f}, {100, 1.0f}, {258, -100.0f}}));
  bias[259] = 1;
  EXPECT_EQ(ErrorFor(r),
            "sampling.logit_bias[259] names a token outside [0, 259) (the vocabulary)");
}

TEST_F(RequestBuilderTest, MaxNewTokensAboveTheContextIsRejected) {
  v1::GenerateRequest r = IdRequest(2);
  r.mutable_stopping()->set_max_new_tokens(65);
  EXPECT_EQ(ErrorFor(r),
            "stopping.max_new_tokens must be in [1, 64] (the context length; 0 = 256), got 65");
}

TEST_F(RequestBuilderTest, MaxNewTokensIsCappedByTheRoomThePromptLeaves) {
  v1::GenerateRequest r = IdRequest(10);  // 11 tokens with BOS: 53 positions left
  auto defaulted = Build(r);
  ASSERT_TRUE(defaulted.ok()) << defaulted.status().ToString();
  EXPECT_EQ(defaulted->stopping.max_new_tokens, 53) << "0 = 256, capped";
  r.mutable_stopping()->set_max_new_tokens(64);
  EXPECT_EQ(Build(r)->stopping.max_new_tokens, 53);
  r.mutable_stopping()->set_max_new_tokens(5);
  EXPECT_EQ(Build(r)->stopping.max_new_tokens, 5);

  model_.llama.config.context_length = 4096;
  r.mutable_stopping()->set_max_new_tokens(0);
  EXPECT_EQ(Build(r)->stopping.max_new_tokens, static_cast<int>(shared::kDefaultMaxNewTokens));
}

TEST_F(RequestBuilderTest, ContextShiftLiftsTheContextCapAndKeepsTheBosByDefault) {
  v1::GenerateRequest r = IdRequest(10);  // 11 tokens with BOS
  r.mutable_stopping()->set_context_overflow(v1::CONTEXT_OVERFLOW_SHIFT);
  auto defaulted = Build(r);
  ASSERT_TRUE(defaulted.ok()) << defaulted.status().ToString();
  EXPECT_EQ(defaulted->stopping.max_new_tokens, static_cast<int>(shared::kDefaultMaxNewTokens))
      << "not capped by the 53 positions the prompt leaves";
  EXPECT_TRUE(defaulted->overflow.shift);
  EXPECT_EQ(defaulted->overflow.n_keep, 1) << "the BOS";
  EXPECT_EQ(defaulted->overflow.context_length, 64);

  r.mutable_stopping()->set_max_new_tokens(1000);
  EXPECT_EQ(Build(r)->stopping.max_new_tokens, 1000);
  r.set_add_bos(false);
  EXPECT_EQ(Build(r)->overflow.n_keep, 0) << "no BOS, nothing kept by default";
  r.mutable_stopping()->set_n_keep(31);
  EXPECT_EQ(Build(r)->overflow.n_keep, 10) << "at most the whole prompt";

  v1::GenerateRequest finish = IdRequest(10);
  EXPECT_FALSE(Build(finish)->overflow.shift);
}

TEST_F(RequestBuilderTest, ContextOverflowErrorsNameFieldAndRange) {
  v1::GenerateRequest r = IdRequest(10);
  r.mutable_stopping()->set_context_overflow(v1::CONTEXT_OVERFLOW_SHIFT);
  r.mutable_stopping()->set_n_keep(32);
  EXPECT_EQ(ErrorFor(r), "stopping.n_keep must be in [0, 32) (half the context length), got 32");
  r.mutable_stopping()->set_n_keep(0);
  r.mutable_stopping()->set_max_new_tokens(shared::kMaxNewTokensWithShift + 1);
  EXPECT_EQ(
      ErrorFor(r),
      "stopping.max_new_tokens must be in [1, 1048576] with context_overflow SHIFT (0 = 256), "
      "got 1048577");
  v1::GenerateRequest unknown = IdRequest(10);
  unknown.mutable_stopping()->set_context_overflow(static_cast<v1::ContextOverflow>(9));
  EXPECT_EQ(ErrorFor(unknown),
            "stopping.context_overflow must be CONTEXT_OVERFLOW_FINISH (0) or "
            "CONTEXT_OVERFLOW_SHIFT (1), got 9");
}

TEST_F(RequestBuilderTest, SamplingOutsideTheSamplersContractIsAnErrorNotAnAbort) {
  v1::GenerateRequest r = IdRequest(2);  // as a caller that talks to the worker directly
  r.mutable_sampling()->set_top_p(1.5f);
  EXPECT_NE(ErrorFor(r).find("top_p"), std::string::npos);
  v1::GenerateRequest lp = IdRequest(2);
  lp.set_logprobs(21);
  EXPECT_NE(ErrorFor(lp).find("logprobs"), std::string::npos);
  v1::GenerateRequest nan_bias = IdRequest(2);
  (*nan_bias.mutable_sampling()->mutable_logit_bias())[5] = std::nanf("");
  EXPECT_NE(ErrorFor(nan_bias).find("sampling.logit_bias[5] must be finite"), std::string::npos);
}

}  // namespace
}  // namespace smallmind::worker
