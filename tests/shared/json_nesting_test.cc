#include "shared/json_nesting.h"

#include <gtest/gtest.h>

#include <string>

namespace smallmind::shared {
namespace {

TEST(JsonNestingTest, CountsArraysAndObjectsOutsideStrings) {
  EXPECT_EQ(JsonNesting("1", 10), 0);
  EXPECT_EQ(JsonNesting("{}", 10), 1);
  EXPECT_EQ(JsonNesting(R"({"a":[{"b":[]},[]],"c":{}})", 10), 4);
  EXPECT_EQ(JsonNesting(R"({"a":"[[[{{{","b":"\"[[[","c":"\\"})", 10), 1);  // strings, escapes
  EXPECT_EQ(JsonNesting(R"(["\\\"[["])", 10), 1);
  EXPECT_EQ(JsonNesting("]]]][[", 10), 2);  // malformed: still a number, the parser refuses it
}

TEST(JsonNestingTest, StopsCountingPastTheLimit) {
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  EXPECT_EQ(JsonNesting(deep, 200), 201);
  EXPECT_EQ(JsonNesting(std::string(200, '[') + std::string(200, ']'), 200), 200);
}

}  // namespace
}  // namespace smallmind::shared
