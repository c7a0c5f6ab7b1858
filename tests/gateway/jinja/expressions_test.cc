// Expressions: Python reprs of printed values, operators, attribute/item lookup, slicing, string
// methods and jinja2's lenient Undefined. Expected strings come from jinja2 3.1.2.
#include <gtest/gtest.h>

#include "tests/gateway/jinja/test_util.h"

namespace smallmind::jinja {
namespace {

using nlohmann::ordered_json;
using testing::J;
using testing::Render;

TEST(JinjaExpressionsTest, PrintsValuesAsPythonStrDoes) {
  EXPECT_EQ(Render("{{ 1 }} {{ 1.0 }} {{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1e-5 }} "
                   "{{ 123456789012345678 }} {{ -0.0 }} {{ 1/3 }}"),
            "1 1.0 0.30000000000000004 1e+16 1e-05 123456789012345678 -0.0 0.3333333333333333");
  EXPECT_EQ(Render("{{ true }} {{ none }} {{ [1, 'a', none, true] }} {{ (1,) }} "
                   "{{ {'a': 1, 'b': 'c'} }} {{ [\"it's\"] }} {{ ['\\n\\t\\\\'] }}"),
            "True None [1, 'a', None, True] (1,) {'a': 1, 'b': 'c'} [\"it's\"] ['\\n\\t\\\\']");
  EXPECT_EQ(Render("{{ [1.5, 2.0, 'x'] }} {{ {'k': [1, {'n': none}]} }}"),
            "[1.5, 2.0, 'x'] {'k': [1, {'n': None}]}");
}

TEST(JinjaExpressionsTest, ReprEscapesNonPrintableCharactersOnly) {
  EXPECT_EQ(Render("{{ ['é🙂', '\\x7f\\x00', '\\u00a0\\u2028\\u200b'] }}"),
            "['é🙂', '\\x7f\\x00', '\\xa0\\u2028\\u200b']");
}

TEST(JinjaExpressionsTest, ArithmeticFollowsPython) {
  EXPECT_EQ(Render("{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 8 }} {{ 7 / 2 }} "
                   "{{ 'ab' ~ 1 }} {{ 'a' * 3 }}"),
            "3 -4 1 2 256 3.5 ab1 aaa");
  // jinja2 parses ** left-associatively and binds unary minus tighter than **.
  EXPECT_EQ(Render("{{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ -1|abs }}"), "64 4 1");
}

TEST(JinjaExpressionsTest, ComparisonsChainAndMembershipWorksOnStringsListsAndDicts) {
  EXPECT_EQ(Render("{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 'a' in 'cat' }} {{ 2 not in [1] }} "
                   "{{ 1 == 1.0 }} {{ 'a' if 0 else 'b' }}"),
            "True False True True True b");
  EXPECT_EQ(Render("{{ 'k' in d }} {{ 'z' in d }}", J(R"({"d": {"k": 1}})")), "True False");
}

TEST(JinjaExpressionsTest, AndOrReturnTheDecidingOperand) {
  EXPECT_EQ(Render("{{ 0 or 'b' }} {{ 1 and 'y' }} {{ none and 1 }} {{ missing or 'fallback' }}"),
            "b y None fallback");
}

TEST(JinjaExpressionsTest, DotPrefersAttributesAndBracketsPreferItems) {
  const ordered_json vars = {{"m", {{"role", "user"}, {"items", 3}}}};
  EXPECT_EQ(Render("{{ m.role }} {{ m['role'] }} {{ m.items()|list }} {{ m['items'] }} "
                   "{{ m.get('x', 'dflt') }} {{ m.keys()|list }}",
                   vars),
            "user user [('role', 'user'), ('items', 3)] 3 dflt ['role', 'items']");
  EXPECT_EQ(Render("{{ l.0 }} {{ n.a.b[1].c }}",
                   J(R"({"l": [5, 6], "n": {"a": {"b": [1, {"c": "x"}]}}})")),
            "5 x");
}

TEST(JinjaExpressionsTest, SlicesWorkOnCodePointsAndSequences) {
  EXPECT_EQ(Render("{{ s[1:3] }} {{ s[-2:] }} {{ s[::-1] }} {{ l[1:] }} {{ l[::2] }} {{ l[-1] }}",
                   {{"s", "héllo"}, {"l", {1, 2, 3, 4}}}),
            "él lo olléh [2, 3, 4] [1, 3] 4");
  EXPECT_EQ(Render("{{ l[::0] }}", J(R"({"l": [1]})")), "ERROR: line 1: slice step cannot be zero");
}

TEST(JinjaExpressionsTest, StringMethodsBehaveAsInPython) {
  EXPECT_EQ(
      Render("{{ '{}-{}'.format(1, 'x') }} {{ '%s=%d' % ('a', 3) }} {{ 'x,y'.split(',') }} "
             "{{ '  p  '.strip() }} {{ 'abc'.upper() }} {{ 'Hi'.startswith(('H', 'X')) }} "
             "{{ 'aXbX'.replace('X', '-') }} {{ 'abc'.find('c') }} {{ ', '.join(['a', 'b']) }}"),
      "1-x a=3 ['x', 'y'] p ABC True a-b- 2 a, b");
  EXPECT_EQ(Render("{{ 'ß'.upper() }} {{ 'ǆ'.capitalize() }} {{ 'héllo wörld'.title() }}"),
            "SS ǅ Héllo Wörld");
}

TEST(JinjaExpressionsTest, UndefinedIsLenientUntilMisused) {
  EXPECT_EQ(Render("[{{ u }}] [{{ u is defined }}] [{{ u|default('d') }}] [{{ u|length }}] "
                   "[{% for a in u %}x{% endfor %}] [{{ u ~ 'c' }}] [{{ u == u }}] [{{ not u }}]"),
            "[] [False] [d] [0] [] [c] [True] [True]");
  EXPECT_EQ(Render("{{ d.missing }}|{{ d.missing is defined }}|{{ d['missing'] is undefined }}",
                   J(R"({"d": {"a": 1}})")),
            "|False|True");
}

TEST(JinjaExpressionsTest, MisusingAnUndefinedFailsWithJinja2sMessage) {
  EXPECT_EQ(Render("{{ u.x }}"), "ERROR: line 1: 'u' is undefined");
  EXPECT_EQ(Render("{{ u + 1 }}"), "ERROR: line 1: 'u' is undefined");
  EXPECT_EQ(Render("{{ u() }}"), "ERROR: line 1: 'u' is undefined");
  EXPECT_EQ(Render("\n{{ d.missing.deeper }}", J(R"({"d": {"a": 1}})")),
            "ERROR: line 2: 'dict object' has no attribute 'missing'");
}

TEST(JinjaExpressionsTest, TypeErrorsCarryPythonsMessages) {
  EXPECT_EQ(Render("{{ 'a' + 1 }}"),
            "ERROR: line 1: can only concatenate str (not \"int\") to str");
  EXPECT_EQ(Render("{{ 1 < 'a' }}"),
            "ERROR: line 1: '<' not supported between instances of 'int' and 'str'");
  EXPECT_EQ(Render("{{ 1 / 0 }}"), "ERROR: line 1: division by zero");
  EXPECT_EQ(Render("{{ 10 ** 30 }}"),
            "ERROR: line 1: integer result does not fit in 64 bits (Python would use a big int)");
}

TEST(JinjaExpressionsTest, TheSandboxRefusesMutatingMethodsButAllowsListPop) {
  EXPECT_EQ(Render("{{ x.append(4) }}", J(R"({"x": [1]})")),
            "ERROR: line 1: access to attribute 'append' of 'list' object is unsafe.");
  EXPECT_EQ(Render("[{{ x.append }}]", J(R"({"x": [1]})")), "[]");
  EXPECT_EQ(Render("{% set l = [1, 2, 3] %}{{ l.pop() }}{{ l }}"), "3[1, 2]");
}

}  // namespace
}  // namespace smallmind::jinja
