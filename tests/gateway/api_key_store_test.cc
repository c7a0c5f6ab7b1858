#include "gateway/security/api_key_store.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/testing/scoped_temp_dir.h"

namespace smallmind::gateway {
namespace {

using shared::StatusCode;

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

TEST(ApiKeyStoreTest, KeyFileSkipsCommentsBlankLinesAndTrailingComments) {
  auto keys = ParseApiKeys("# team keys\n\nalpha-1\r\n  beta_2   # bob's laptop\n\t#x\ngamma", "f");
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  EXPECT_EQ(*keys, (std::vector<std::string>{"alpha-1", "beta_2", "gamma"}));
}

TEST(ApiKeyStoreTest, KeyFileErrorsNameTheOriginAndLine) {
  auto spaced = ParseApiKeys("good\nbad key\n", "/etc/keys");
  ASSERT_FALSE(spaced.ok());
  EXPECT_EQ(spaced.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(spaced.status().message().find("/etc/keys line 2"), std::string::npos)
      << spaced.status().message();
  auto binary = ParseApiKeys("ok\nk\x01y\n", "f");
  ASSERT_FALSE(binary.ok());
  EXPECT_NE(binary.status().message().find("line 2: a key must be printable ASCII"),
            std::string::npos)
      << binary.status().message();
}

TEST(ApiKeyStoreTest, AKeyFileWithoutKeysIsAnError) {
  for (const char* text : {"", "\n\n", "# only a comment\n"}) {
    auto keys = ParseApiKeys(text, "f");
    ASSERT_FALSE(keys.ok()) << "'" << text << "'";
    EXPECT_NE(keys.status().message().find("has no key"), std::string::npos);
  }
}

TEST(ApiKeyStoreTest, ConstantTimeEqualsComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("secret", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secreT"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "Secret"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secret2"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secre"));
  EXPECT_FALSE(ConstantTimeEquals("", "x"));
  EXPECT_FALSE(ConstantTimeEquals(std::string_view("a\0", 2), "a"));
}

TEST(ApiKeyStoreTest, WithoutKeysEveryoneIsLetIn) {
  ApiKeyStore store({}, "");
  EXPECT_FALSE(store.enabled());
  EXPECT_TRUE(store.Load().ok());
  EXPECT_TRUE(store.Authenticate(std::nullopt).ok());
  EXPECT_TRUE(store.Authenticate("Bearer anything").ok());
}

TEST(ApiKeyStoreTest, MissingMalformedOrWrongKeysAreUnauthenticated) {
  ApiKeyStore store({"k1", "k2"}, "");
  ASSERT_TRUE(store.enabled());
  EXPECT_TRUE(store.Authenticate("Bearer k1").ok());
  EXPECT_TRUE(store.Authenticate("bearer k2").ok()) << "the scheme is case-insensitive";
  EXPECT_TRUE(store.Authenticate("  BEARER  k2 ").ok());
  for (auto value :
       {std::optional<std::string_view>(), std::optional<std::string_view>("k1"),
        std::optional<std::string_view>("Bearer"), std::optional<std::string_view>("Bearer "),
        std::optional<std::string_view>("Bearer k3"),
        std::optional<std::string_view>("Bearer k1k2"),
        std::optional<std::string_view>("Basic k1")}) {
    const shared::Status status = store.Authenticate(value);
    EXPECT_EQ(status.code(), StatusCode::kUnauthenticated) << value.value_or("(none)");
  }
  EXPECT_NE(store.Authenticate(std::nullopt).message().find("authorization: Bearer <key>"),
            std::string::npos);
}

TEST(ApiKeyStoreTest, FileKeysJoinTheFixedOnesAndAReloadReplacesThem) {
  testing::ScopedTempDir dir;
  const std::string path = dir.File("keys");
  WriteFile(path, "file-a\nfile-b\n");
  ApiKeyStore store({"fixed"}, path);
  ASSERT_TRUE(store.Load().ok());
  EXPECT_EQ(store.size(), 3u);
  EXPECT_TRUE(store.Accepts("fixed"));
  EXPECT_TRUE(store.Accepts("file-a"));
  WriteFile(path, "file-c\n");
  ASSERT_TRUE(store.Load().ok());
  EXPECT_TRUE(store.Accepts("fixed"));
  EXPECT_TRUE(store.Accepts("file-c"));
  EXPECT_FALSE(store.Accepts("file-a")) << "a removed key stops working at the reload";
  EXPECT_EQ(store.size(), 2u);
}

TEST(ApiKeyStoreTest, AFailedReloadKeepsTheKeysInUse) {
  testing::ScopedTempDir dir;
  const std::string path = dir.File("keys");
  WriteFile(path, "good\n");
  ApiKeyStore store({}, path);
  ASSERT_TRUE(store.Load().ok());
  WriteFile(path, "half written key\n");
  const shared::Status bad = store.Load();
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find(path), std::string::npos) << bad.message();
  EXPECT_TRUE(store.Accepts("good"));
  std::filesystem::remove(path);
  EXPECT_EQ(store.Load().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store.Accepts("good"));
  EXPECT_EQ(store.size(), 1u);
}

TEST(ApiKeyStoreTest, AnUnreadableFileLocksEveryoneOutRatherThanLettingEveryoneIn) {
  testing::ScopedTempDir dir;
  ApiKeyStore store({}, dir.File("missing"));
  EXPECT_TRUE(store.enabled());
  EXPECT_FALSE(store.Load().ok());
  EXPECT_EQ(store.Authenticate("Bearer x").code(), StatusCode::kUnauthenticated);
}

}  // namespace
}  // namespace smallmind::gateway
