#include "worker/sample/token_picker.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "worker/sample/sample_step.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {
namespace {

// Logits whose argmax is `id`.
std::vector<float> Peaked(int vocab, TokenId id) {
  std::vector<float> logits(static_cast<size_t>(vocab), 0.0f);
  logits[id] = 10.0f;
  return logits;
}

class TokenPickerTest : public ::testing::Test {
 protected:
  TokenId Byte(char c) const { return tokenizer_->Encode(std::string(1, c), false).at(0); }

  std::unique_ptr<SpmTokenizer> tokenizer_ = MakeByteLevelTokenizer();
  int vocab_ = tokenizer_->vocab_size();
};

TEST_F(TokenPickerTest, GreedyPicksReleaseTextAndHoldBackAStopStringPrefix) {
  PickerOptions options;
  options.sampling.temperature = 0.0f;
  options.stopping.max_new_tokens = 10;
  options.stopping.stop = {"xy"};
  TokenPicker picker(options, {}, *tokenizer_, vocab_);

  std::vector<float> a = Peaked(vocab_, Byte('a'));
  Pick pick = picker.Next(a);
  EXPECT_EQ(pick.token, Byte('a'));
  EXPECT_EQ(pick.reason, FinishReason::kNone);
  EXPECT_EQ(picker.text(), "a");

  std::vector<float> x = Peaked(vocab_, Byte('x'));
  pick = picker.Next(x);
  EXPECT_EQ(picker.text(), "") << "'x' may begin the stop string: held back";

  std::vector<float> y = Peaked(vocab_, Byte('y'));
  pick = picker.Next(y);
  EXPECT_EQ(pick.reason, FinishReason::kStop);
  EXPECT_EQ(picker.text(), "") << "the stop string is not part of the output";
  EXPECT_EQ(picker.num_generated(), 3);
}

TEST_F(TokenPickerTest, EndsWithLengthAtMaxNewTokensAndReportsLogprobsWhenAsked) {
  PickerOptions options;
  options.sampling.temperature = 0.0f;
  options.sampling.logprobs = 2;
  options.stopping.max_new_tokens = 2;
  TokenPicker picker(options, {}, *tokenizer_, vocab_);
  ASSERT_TRUE(picker.wants_logprobs());
  std::vector<float> logits = Peaked(vocab_, Byte('q'));
  EXPECT_EQ(picker.Next(logits).reason, FinishReason::kNone);
  EXPECT_EQ(picker.logprobs().chosen.id, Byte('q'));
  EXPECT_EQ(picker.logprobs().n_top, 2);
  logits = Peaked(vocab_, Byte('q'));
  EXPECT_EQ(picker.Next(logits).reason, FinishReason::kLength);
}

TEST_F(TokenPickerTest, AJsonObjectEndsGenerationOnceWholeAndTheMaskSteersTheDraw) {
  const TokenBytes token_bytes(*tokenizer_);
  PickerOptions options;
  options.sampling.temperature = 0.0f;
  options.stopping.max_new_tokens = 10;
  options.json_vocab = &token_bytes;
  TokenPicker picker(options, {}, *tokenizer_, vocab_);
  // Greedy would pick 'a', which no JSON object begins with: the mask leaves '{' the best.
  std::vector<float> open = Peaked(vocab_, Byte('a'));
  open[Byte('{')] = 5.0f;
  const Pick first = picker.Next(open);
  EXPECT_EQ(first.token, Byte('{'));
  EXPECT_EQ(first.reason, FinishReason::kNone);
  std::vector<float> close = Peaked(vocab_, Byte('}'));
  const Pick pick = picker.Next(close);
  EXPECT_EQ(pick.token, Byte('}'));
  EXPECT_EQ(pick.reason, FinishReason::kStop) << "the object is whole: generation ends";
  EXPECT_EQ(picker.text(), "}");
}

TEST_F(TokenPickerTest, SampleStepGivesTheSamePicksOnOneThreadOrMany) {
  PickerOptions options;
  options.sampling.temperature = 1.0f;
  options.sampling.top_k = 40;
  options.stopping.max_new_tokens = 100;
  constexpr int kSeqs = 5;
  std::vector<std::vector<float>> rows(kSeqs);
  for (int s = 0; s < kSeqs; s++) {
    rows[s].resize(static_cast<size_t>(vocab_));
    for (int i = 0; i < vocab_; i++) rows[s][i] = static_cast<float>((i * 7919 + s * 31) % 97) / 9;
  }
  const auto run = [&](const ForEachFn& for_each) {
    std::vector<std::unique_ptr<TokenPicker>> pickers;
    std::vector<SampleSlot> slots;
    for (int s = 0; s < kSeqs; s++) {
      options.sampling.seed = 100 + s;
      pickers.push_back(
          std::make_unique<TokenPicker>(options, std::vector<TokenId>{1}, *tokenizer_, vocab_));
    }
    std::vector<TokenId> tokens;
    for (int step = 0; step < 8; step++) {
      slots.clear();
      for (int s = 0; s < kSeqs; s++) slots.push_back({pickers[s].get(), s, Pick{}});
      std::vector<std::vector<float>> logits = rows;  // picks change their row in place
      SampleStep(
          slots, [&](int row) { return std::span<float>(logits[row]); }, for_each);
      for (const SampleSlot& slot : slots) tokens.push_back(slot.pick.token);
    }
    return tokens;
  };
  // Runs the bodies back to front, as threads finishing in any order would.
  const ForEachFn reversed = [](int n, const std::function<void(int)>& body) {
    for (int i = n - 1; i >= 0; i--) body(i);
  };
  EXPECT_EQ(run(nullptr), run(reversed));
}

}  // namespace
}  // namespace smallmind::worker
