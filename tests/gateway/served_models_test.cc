// ServedModels: the names a request's `model` may give, and their default.
#include "gateway/relay/served_models.h"

#include <gtest/gtest.h>

namespace smallmind::gateway {
namespace {

TEST(ServedModelsTest, DefaultIsTheFileNameWithoutItsFolderNeverThePath) {
  const ServedModels m({}, "/srv/models/llama-7b.Q4_0.gguf");
  EXPECT_EQ(m.primary(), "llama-7b.Q4_0.gguf");
  ASSERT_EQ(m.names().size(), 1u);
  EXPECT_FALSE(m.Accepts("/srv/models/llama-7b.Q4_0.gguf"));
  EXPECT_TRUE(m.Accepts("llama-7b.Q4_0.gguf"));
  EXPECT_TRUE(m.Accepts("")) << "no model named: the one served";
  EXPECT_EQ(ServedModels({}, "builtin:tiny").primary(), "builtin:tiny");
}

TEST(ServedModelsTest, AliasesReplaceTheDefaultAndAnotherNameIsNotFound) {
  const ServedModels m({"chat", "chat-v2"}, "/srv/models/llama.gguf");
  EXPECT_EQ(m.primary(), "chat");
  EXPECT_TRUE(m.Accepts("chat-v2"));
  EXPECT_FALSE(m.Accepts("llama.gguf"));
  const shared::Status s = m.Check("gpt-4");
  EXPECT_EQ(s.code(), shared::StatusCode::kNotFound);
  EXPECT_EQ(s.message(),
            "the model `gpt-4` is not served here; this server serves `chat`, "
            "`chat-v2`");
  EXPECT_TRUE(m.Check("chat").ok());
}

TEST(ServedModelsTest, ANameGivenTwiceIsAUsageError) {
  EXPECT_TRUE(ValidateServedModelNames({"a", "b"}).ok());
  const shared::Status s = ValidateServedModelNames({"a", "b", "a"});
  EXPECT_EQ(s.code(), shared::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "--served-model-name: `a` is given twice");
}

}  // namespace
}  // namespace smallmind::gateway
