// Statements: for loops and the loop variable, scoping of set, namespaces, macros with caller(),
// filter and set blocks, with, break/continue, generation. Expected strings come from jinja2 3.1.2.
#include <gtest/gtest.h>

#include "tests/gateway/jinja/test_util.h"

namespace smallmind::jinja {
namespace {

using testing::Render;

TEST(JinjaStatementsTest, LoopVariableTracksPositionAndNeighbours) {
  EXPECT_EQ(
      Render("{% for i in ['a','b','c'] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}"
             "{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}|{% endfor %}"),
      "1032TrueFalse3|2121FalseFalse3|3210FalseTrue3|");
  EXPECT_EQ(Render("{% for i in ['a','b','c'] %}{{ loop.previtem|default('^') }}{{ i }}"
                   "{{ loop.nextitem|default('$') }} {% endfor %}"),
            "^ab abc bc$ ");
  EXPECT_EQ(Render("{% for i in range(5) %}{{ loop.cycle('x','y') }}{% endfor %}"), "xyxyx");
}

TEST(JinjaStatementsTest, LoopFilterRunsBeforeTheLoopSoLengthCountsKeptItems) {
  EXPECT_EQ(Render("{% for i in range(6) if i is even %}{{ i }}:{{ loop.index }}/{{ loop.length }} "
                   "{% endfor %}"),
            "0:1/3 2:2/3 4:3/3 ");
  EXPECT_EQ(Render("{% for i in [] %}x{% else %}empty{% endfor %}"), "empty");
}

TEST(JinjaStatementsTest, BreakAndContinueLeaveTheInnermostLoop) {
  EXPECT_EQ(Render("{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}"
                   "{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}"),
            "0134");
}

TEST(JinjaStatementsTest, SetInsideALoopIsScopedToOneIteration) {
  EXPECT_EQ(Render("{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{% endfor %}{{ x }}"), "1");
  EXPECT_EQ(Render("{% for i in [1, 2] %}{% if i == 2 %}[{{ y }}]{% endif %}{% set y = i %}"
                   "{% endfor %}"),
            "[]");
  EXPECT_EQ(Render("{% if true %}{% set q = 1 %}{% endif %}{{ q }}"), "1");  // if is no scope
}

TEST(JinjaStatementsTest, NamespacesCarryValuesOutOfLoops) {
  EXPECT_EQ(Render("{% set ns = namespace(n=0) %}{% for i in [1,2,3] %}{% set ns.n = ns.n + i %}"
                   "{% endfor %}{{ ns.n }}"),
            "6");
  EXPECT_EQ(Render("{% set ns = namespace(a=1) %}{{ ns }}"), "<Namespace {'a': 1}>");
  EXPECT_EQ(Render("{% set v = 1 %}{% set v.x = 2 %}"),
            "ERROR: line 1: cannot assign attribute on non-namespace object");
}

TEST(JinjaStatementsTest, TupleUnpackingInSetAndFor) {
  EXPECT_EQ(Render("{% set a, (b, c) = [1, (2, 3)] %}{{ a }}{{ b }}{{ c }}"
                   "{% for k, v in {'x': 1}.items() %}{{ k }}={{ v }}{% endfor %}"),
            "123x=1");
  EXPECT_EQ(Render("{% set a, b = [1] %}"),
            "ERROR: line 1: not enough values to unpack (expected 2, got 1)");
}

TEST(JinjaStatementsTest, SetBlocksCaptureAndFilter) {
  EXPECT_EQ(Render("{% set g %}Hi {{ 'x'|upper }}!{% endset %}[{{ g }}]"
                   "{% set h | upper | replace('!', '?') %}hey!{% endset %}[{{ h }}]"),
            "[Hi X!][HEY?]");
}

TEST(JinjaStatementsTest, MacrosTakeDefaultsKeywordsVarargsAndKwargs) {
  EXPECT_EQ(Render("{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}"
                   "{{ greet('Ann') }} {{ greet('Bob', '?') }} {{ greet(punct='.', name='C') }} "
                   "{{ greet() }}"),
            "Hi Ann! Hi Bob? Hi C. Hi !");
  EXPECT_EQ(Render("{% macro m(a) %}{{ a }}|{{ varargs }}|{{ kwargs }}{% endmacro %}"
                   "{{ m(1, 2, 3, k='v') }}"),
            "1|(2, 3)|{'k': 'v'}");
  EXPECT_EQ(Render("{% macro one(a) %}{{ a }}{% endmacro %}{{ one(1, 2) }}"),
            "ERROR: line 1: macro 'one' takes not more than 1 argument(s)");
}

TEST(JinjaStatementsTest, MacrosSeeTheirDefiningScopeAtCallTime) {
  EXPECT_EQ(Render("{% set top = 'T' %}{% macro show() %}{{ top }}{% endmacro %}{{ show() }}"
                   "{% set top = 'U' %}{{ show() }}"),
            "TU");
  EXPECT_EQ(Render("{% macro fact(k) %}{% if k <= 1 %}1{% else %}{{ k * fact(k - 1)|int }}"
                   "{% endif %}{% endmacro %}{{ fact(6) }}"),
            "720");
}

TEST(JinjaStatementsTest, CallBlocksPassTheirBodyAsCaller) {
  EXPECT_EQ(Render("{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}"
                   "{% call wrap('b') %}in{% endcall %}"),
            "<b>in</b>");
  EXPECT_EQ(Render("{% macro each(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}"
                   "{% endmacro %}{% call(v) each([1, 2]) %}[{{ v * 2 }}]{% endcall %}"),
            "[2][4]");
}

TEST(JinjaStatementsTest, FilterWithAndGenerationBlocks) {
  EXPECT_EQ(Render("{% filter upper %}shout{% endfilter %}"), "SHOUT");
  EXPECT_EQ(Render("{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a is defined }}]"),
            "3[False]");
  EXPECT_EQ(Render("{% generation %}gen{% set s = 1 %}{% endgeneration %}{{ s is defined }}"),
            "genFalse");
}

TEST(JinjaStatementsTest, RecursiveLoopsRenderChildrenThroughLoopCall) {
  EXPECT_EQ(Render("{% for item in tree recursive %}<{{ item.n }}{{ loop.depth }}"
                   "{% if item.c %}{{ loop(item.c) }}{% endif %}>{% endfor %}",
                   testing::J(R"({"tree": [{"n": "a", "c": [{"n": "b", "c": []}]}]})")),
            "<a1<b2>>");
}

TEST(JinjaStatementsTest, UnknownFiltersFailAtParseTimeUnlessInsideAnIf) {
  EXPECT_EQ(Render("{% if false %}{{ x|nosuch }}{% endif %}fine"), "fine");
  EXPECT_EQ(Render("{{ x|nosuch }}"), "ERROR: line 1: No filter named 'nosuch'.");
  EXPECT_EQ(Render("{% break %}"), "ERROR: line 1: 'break' outside loop");
}

}  // namespace
}  // namespace smallmind::jinja
