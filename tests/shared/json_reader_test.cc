#include "shared/json_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace smallmind::shared {
namespace {

using Json = nlohmann::ordered_json;

// An object of `n` distinct keys "k0".."k{n-1}", each mapped to its index.
std::string ManyKeys(size_t n) {
  std::string s = "{";
  for (size_t i = 0; i < n; ++i)
    s += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  return s + "}";
}

TEST(JsonReaderTest, BuildsTheSameDocumentAsTheLibraryParserInKeyOrder) {
  const std::string text =
      R"({"z":1,"a":[true,null,{"y":"s","b":[1.5,-2,18446744073709551615]}],"m":{},"e":[]})";
  Result<Json> doc = ReadJson(text, {}, "the body");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc.value(), Json::parse(text));
  EXPECT_EQ(doc.value().dump(), Json::parse(text).dump());  // same order, same number types
  EXPECT_EQ(doc.value().begin().key(), "z");
}

TEST(JsonReaderTest, RepeatedKeyKeepsItsFirstPlaceAndLastValueAsTheLibraryDoes) {
  for (const std::string& text :
       {std::string(R"({"a":1,"b":2,"a":{"x":3}})"),
        ManyKeys(20).substr(0, ManyKeys(20).size() - 1) + R"(,"k3":"again","k19":[1]})"}) {
    Result<Json> doc = ReadJson(text, {}, "the body");
    ASSERT_TRUE(doc.ok()) << doc.status().ToString();
    EXPECT_EQ(doc.value().dump(), Json::parse(text).dump());
  }
}

TEST(JsonReaderTest, TakesAnObjectOfExactlyTheKeyLimit) {
  JsonLimits limits;
  limits.max_object_keys = 300;
  Result<Json> doc = ReadJson(ManyKeys(300), limits, "the body");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc.value().size(), 300u);
  EXPECT_EQ(doc.value()["k299"], 299);
}

TEST(JsonReaderTest, RefusesAnObjectOverTheKeyLimitNamingItsPath) {
  const std::string text = R"({"tools":[0,{"p":)" + ManyKeys(4097) + "}]}";
  Result<Json> doc = ReadJson(text, {}, "the body");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(doc.status().message(),
            "the body is refused: the object at /tools/1/p has more than 4096 keys");
}

TEST(JsonReaderTest, RefusesNestingPastTheDepthLimit) {
  JsonLimits limits;
  limits.max_depth = 3;
  EXPECT_TRUE(ReadJson(R"({"a":[{}]})", limits, "x").ok());
  Result<Json> doc = ReadJson(R"({"a":[{"b":[]}]})", limits, "json_schema");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().message(),
            "json_schema is refused: arrays and objects nest more than 3 deep (at /a/0/b)");
  // Far past the default: refused, not a stack overflow.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_FALSE(ReadJson(deep, {}, "x").ok());
}

TEST(JsonReaderTest, RefusesLongKeysAndStringsNamingWhere) {
  JsonLimits limits;
  limits.max_key_bytes = 4;
  limits.max_string_bytes = 5;
  EXPECT_TRUE(ReadJson(R"({"abcd":"12345"})", limits, "x").ok());
  Result<Json> key = ReadJson(R"({"a":{"abcde":1}})", limits, "x");
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.status().message(),
            "x is refused: a key of the object at /a is 5 bytes; at most 4");
  Result<Json> str = ReadJson(R"({"a":["1","123456"]})", limits, "x");
  ASSERT_FALSE(str.ok());
  EXPECT_EQ(str.status().message(), "x is refused: the string at /a/1 is 6 bytes; at most 5");
}

TEST(JsonReaderTest, SaysWhereTheSyntaxIsWrong) {
  for (const char* text : {"{\"a\":", "{\"a\" 1}", "[1,]", "", "{} x", "[1e999]"}) {
    Result<Json> doc = ReadJson(text, {}, "the body");
    ASSERT_FALSE(doc.ok()) << text;
    EXPECT_EQ(doc.status().message().rfind("the body is not valid JSON: [json.exception.", 0), 0u)
        << doc.status().message();
  }
}

TEST(JsonReaderTest, ReadsAScalarDocument) {
  Result<Json> doc = ReadJson("\"hi\"", {}, "x");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc.value(), "hi");
}

}  // namespace
}  // namespace smallmind::shared
