// JoinRerankPair (worker/tokenizer/rerank_pair.h): the specials llama.cpp's server puts around a
// reranker's query and document for each vocabulary flag combination.
#include "worker/tokenizer/rerank_pair.h"

#include <vector>

#include <gtest/gtest.h>

namespace smallmind::worker {
namespace {

const std::vector<TokenId> kQuery = {10, 11};
const std::vector<TokenId> kDoc = {20};

TEST(RerankPairTest, ABertVocabularyWithLlamaCppDefaultsGivesClsQuerySepDoc) {
  const RerankPairFormat f{.bos = 101, .eos = -1, .sep = 102, .add_bos = true, .add_sep = true};
  EXPECT_EQ(JoinRerankPair(f, kQuery, kDoc), (std::vector<TokenId>{101, 10, 11, 102, 20}));
}

TEST(RerankPairTest, AddEosEndsBothPartsWithSepWhenThereIsNoEos) {
  const RerankPairFormat f{
      .bos = 101, .eos = -1, .sep = 102, .add_bos = true, .add_eos = true, .add_sep = false};
  EXPECT_EQ(JoinRerankPair(f, kQuery, kDoc), (std::vector<TokenId>{101, 10, 11, 102, 20, 102}));
}

TEST(RerankPairTest, ARobertaStyleVocabularyGivesBosQueryEosSepDocEos) {
  const RerankPairFormat f{
      .bos = 0, .eos = 2, .sep = 2, .add_bos = true, .add_eos = true, .add_sep = true};
  EXPECT_EQ(JoinRerankPair(f, kQuery, kDoc), (std::vector<TokenId>{0, 10, 11, 2, 2, 20, 2}));
}

TEST(RerankPairTest, MissingSpecialsAreLeftOutEvenWhenAsked) {
  const RerankPairFormat f{
      .bos = -1, .eos = -1, .sep = -1, .add_bos = true, .add_eos = true, .add_sep = true};
  EXPECT_EQ(JoinRerankPair(f, kQuery, kDoc), (std::vector<TokenId>{10, 11, 20}));
}

}  // namespace
}  // namespace smallmind::worker
