// Whitespace control as jinja2 applies it under transformers' settings (trim_blocks,
// lstrip_blocks, keep_trailing_newline=False). Expected strings come from jinja2 3.1.2.
#include <gtest/gtest.h>

#include "tests/gateway/jinja/test_util.h"

namespace smallmind::jinja {
namespace {

using testing::Render;

TEST(JinjaWhitespaceTest, TrimBlocksRemovesTheFirstNewlineAfterABlockTag) {
  EXPECT_EQ(Render("{% if true %}\nx\n{% endif %}\ny"), "x\ny");
  EXPECT_EQ(Render("{% for i in [1,2] %}\n  - {{ i }}\n{% endfor %}"), "  - 1\n  - 2\n");
}

TEST(JinjaWhitespaceTest, LstripBlocksStripsIndentationBeforeABlockTagOnly) {
  EXPECT_EQ(Render("  {% if true %}x{% endif %}"), "x");
  EXPECT_EQ(Render("a  {% if true %}x{% endif %}"), "a  x");  // not at the start of a line
  EXPECT_EQ(Render("  {{ 1 }}"), "  1");                      // variables are never stripped
  EXPECT_EQ(Render("  \t{% if true %}\n  inner\n  {% endif %}\nend"), "  inner\nend");
  EXPECT_EQ(Render("{% if true %}\n    {% if true %}x{% endif %}\n{% endif %}"), "x");
}

TEST(JinjaWhitespaceTest, LstripBlocksCountsUnicodeWhitespaceAsPythonsRegexDoes) {
  EXPECT_EQ(Render("\u00a0\u3000{% if true %}x{% endif %}"), "x");
}

TEST(JinjaWhitespaceTest, MinusStripsAllWhitespaceIncludingNewlines) {
  EXPECT_EQ(Render("a \n {{- 1 -}} \n b"), "a1b");
  EXPECT_EQ(Render("{{ 'a' -}}\n\n  b"), "ab");
  EXPECT_EQ(Render("{%- if true -%}  x  {%- endif -%}"), "x");
  EXPECT_EQ(Render("a {#- c -#} b"), "ab");
}

TEST(JinjaWhitespaceTest, PlusDisablesTrimBlocksAndLstripBlocksForOneTag) {
  EXPECT_EQ(Render("{% if true +%}\nx{% endif %}"), "\nx");
  EXPECT_EQ(Render("  {%+ if true %}x{% endif %}"), "  x");
}

TEST(JinjaWhitespaceTest, CommentsAreRemovedWithTheSameRulesAsBlocks) {
  EXPECT_EQ(Render("  {# c #}\nx"), "x");
  EXPECT_EQ(Render("a{# one #}b{#- two -#} c"), "abc");
}

TEST(JinjaWhitespaceTest, OneTrailingNewlineOfTheSourceIsDropped) {
  EXPECT_EQ(Render("x\n"), "x");
  EXPECT_EQ(Render("x\n\n"), "x\n");
}

TEST(JinjaWhitespaceTest, CarriageReturnsBecomeNewlines) {
  EXPECT_EQ(Render("a\r\n{% if true %}\r\nb\r\n{% endif %}\r\nc"), "a\nb\nc");
  EXPECT_EQ(Render("a\rb"), "a\nb");
}

TEST(JinjaWhitespaceTest, RawBlocksKeepTheirBodyAndTrimOnlyAfterEndraw) {
  EXPECT_EQ(Render("{% raw %}\n{{x}}{% endraw %}\ny"), "\n{{x}}y");
  EXPECT_EQ(Render("{%- raw -%}  {{ a }}  {%- endraw -%}"), "{{ a }}");
}

TEST(JinjaWhitespaceTest, EscapesInStringLiteralsAreDecodedLikePython) {
  EXPECT_EQ(Render("{{ '\\n' }}|{{ \"\\t\" }}"), "\n|\t");
  EXPECT_EQ(Render("{{ \"\\x41\\u00e9\\U0001F642\\101\" }}"), "Aé🙂A");
  EXPECT_EQ(Render("{{ '\\d' }}"), "\\d");  // unknown escapes stay as written
}

}  // namespace
}  // namespace smallmind::jinja
