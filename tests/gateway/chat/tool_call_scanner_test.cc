// ToolCallScanner over the outputs of a call among several tools: the name once its string ends,
// the arguments object's bytes exactly (whatever the pieces), nothing of the wrapper.
#include "gateway/chat/tool_call_scanner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smallmind::gateway::http {
namespace {

struct Scanned {
  bool has_name;
  std::string name;
  std::string arguments;
};

// `text` fed in pieces of `size` bytes (0: whole).
Scanned Scan(const std::string& text, size_t size) {
  ToolCallScanner s;
  std::string arguments;
  if (size == 0) {
    arguments = s.Feed(text);
  } else {
    for (size_t i = 0; i < text.size(); i += size) arguments += s.Feed(text.substr(i, size));
  }
  return {s.has_name(), s.name(), arguments};
}

TEST(ToolCallScannerTest, ReadsTheNameAndExactlyTheArgumentsWhateverThePieces) {
  struct Case {
    std::string text;
    std::string name;
    std::string arguments;
  };
  const std::vector<Case> cases = {
      {R"({"name":"add","arguments":{"a":1,"b":2}})", "add", R"({"a":1,"b":2})"},
      {"{\n  \"name\": \"neg\",\n  \"arguments\": {\n    \"x\": -2.5\n  }\n}\n", "neg",
       "{\n    \"x\": -2.5\n  }"},
      // Braces, brackets and quotes inside strings, nested values, an escaped name.
      {R"({"name":"a\"b}{","arguments":{"s":"}{\"]","t":[{"u":{}}],"v":"\\"}})", "a\"b}{",
       R"({"s":"}{\"]","t":[{"u":{}}],"v":"\\"})"},
      {R"({"name":"\u00e9t\u00e9","arguments":{}})", "\xc3\xa9t\xc3\xa9", "{}"},
  };
  for (const Case& c : cases) {
    for (const size_t size : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{7}}) {
      const Scanned got = Scan(c.text, size);
      EXPECT_TRUE(got.has_name) << c.text << " in pieces of " << size;
      EXPECT_EQ(got.name, c.name) << c.text << " in pieces of " << size;
      EXPECT_EQ(got.arguments, c.arguments) << c.text << " in pieces of " << size;
    }
  }
}

TEST(ToolCallScannerTest, AnOutputCutShortGivesWhatItHas) {
  Scanned got = Scan(R"({"name":"ad)", 1);
  EXPECT_FALSE(got.has_name);
  EXPECT_EQ(got.name, "");
  EXPECT_EQ(got.arguments, "");
  got = Scan(R"({"name":"add","arguments":{"a":1,"b)", 1);
  EXPECT_TRUE(got.has_name);
  EXPECT_EQ(got.name, "add");
  EXPECT_EQ(got.arguments, R"({"a":1,"b)");
  got = Scan("", 0);
  EXPECT_FALSE(got.has_name);
}

}  // namespace
}  // namespace smallmind::gateway::http
