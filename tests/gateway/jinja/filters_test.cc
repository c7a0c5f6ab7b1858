// Every builtin filter and test at least once, with Python's semantics (transformers' tojson
// included). Expected strings come from jinja2 3.1.2.
#include <gtest/gtest.h>

#include "tests/gateway/jinja/test_util.h"

namespace smallmind::jinja {
namespace {

using nlohmann::ordered_json;
using testing::Render;

const ordered_json kPeople = {
    {"p", {{{"n", "x"}, {"r", "u"}, {"q", 1}, {"a", 2}}, {{"n", "y"}, {"r", "a"}, {"a", 1}}}}};

TEST(JinjaFiltersTest, TextFilters) {
  EXPECT_EQ(Render("{{ '  a b \n'|trim }}|{{ 'xxaxx'|trim('x') }}"), "a b|a");
  EXPECT_EQ(Render("{{ 'ÀB ß'|lower }} {{ 'àb ß'|upper }} {{ 'hello big-world (x)'|title }} "
                   "{{ 'hELLO wORLD'|capitalize }}"),
            "àb ß ÀB SS Hello Big-World (X) Hello world");
  EXPECT_EQ(Render("{{ 'a-a-a'|replace('a', 'b') }} {{ 'a-a-a'|replace('a', 'b', 2) }}"),
            "b-b-b b-b-a");
  EXPECT_EQ(Render("{{ 12|string ~ 'x' }} {{ none|string }} {{ [1]|string }}"), "12x None [1]");
  EXPECT_EQ(
      Render("{{ 'one two  three'|wordcount }} {{ 'ab'|center(6) }}|"
             "{{ 'The quick brown fox jumps'|truncate(15) }}|"
             "{{ 'The quick brown fox jumps'|truncate(15, true) }}|{{ 'short'|truncate(10) }}"),
      "3   ab  |The quick...|The quick br...|short");
  EXPECT_EQ(Render("{{ 'a\nb\n\nc'|indent }}|{{ 'a\nb'|indent(2, true) }}|"
                   "{{ 'a\n\nb'|indent('>', blank=true) }}"),
            "a\n    b\n\n    c|  a\n  b|a\n>\n>b");
  EXPECT_EQ(Render("{{ '%s-%s'|format('a', 1) }} {{ '%(k)s'|format(k='v') }}"), "a-1 v");
  EXPECT_EQ(Render("{{ '<b>'|safe }} {{ '<b>\"&\\''|escape }} {{ '<b>'|e }}"),
            "<b> &lt;b&gt;&#34;&amp;&#39; &lt;b&gt;");
}

TEST(JinjaFiltersTest, SequenceFilters) {
  EXPECT_EQ(Render("{{ 'héllo'|length }} {{ [1,2]|count }} {{ {'a':1}|length }}"), "5 2 1");
  EXPECT_EQ(Render("{{ 'ab'|list }} {{ {'k': 1}|list }} {{ (1, 2)|list }}"),
            "['a', 'b'] ['k'] [1, 2]");
  EXPECT_EQ(Render("{{ [3,1]|first }} {{ [3,1]|last }} {{ 'ab'|first }} {{ []|first is defined }}"),
            "3 1 a False");
  EXPECT_EQ(Render("{{ [1, 'a']|join('|') }} {{ p|join(', ', attribute='n') }}", kPeople),
            "1|a x, y");
  EXPECT_EQ(
      Render("{{ ['b', 'A', 'a', 'b']|unique|list }} {{ [3, 1, 2]|reverse|list }} "
             "{{ 'abc'|reverse }} {{ ['b', 'A', 'c']|sort }} {{ [3, 1, 2]|sort(reverse=true) }} "
             "{{ p|sort(attribute='a')|map(attribute='n')|list }}",
             kPeople),
      "['b', 'A'] [2, 1, 3] cba ['A', 'b', 'c'] [3, 2, 1] ['y', 'x']");
  EXPECT_EQ(Render("{{ [1, 2, 3, 4, 5]|batch(2)|list }} {{ [1, 2, 3]|batch(2, 0)|list }} "
                   "{{ [1, 2, 3]|sum }} {{ p|sum(attribute='a') }} {{ [3, 1, 2]|min }} "
                   "{{ [3, 1, 2]|max }} {{ ['b', 'A']|min }} {{ p|max(attribute='a')|attr('n') }}",
                   kPeople),
            "[[1, 2], [3, 4], [5]] [[1, 2], [3, 0]] 6 3 1 3 A ");
}

TEST(JinjaFiltersTest, SelectRejectAndMap) {
  EXPECT_EQ(Render("{{ p|selectattr('r', 'equalto', 'u')|map(attribute='n')|list }} "
                   "{{ p|rejectattr('r', 'eq', 'u')|map(attribute='n')|list }} "
                   "{{ [1, 2, 3, 4]|select('odd')|list }} {{ [0, 1, '', 'a']|select|list }} "
                   "{{ [none, 1]|reject('none')|list }} {{ ['a', 1]|select('string')|list }} "
                   "{{ p|selectattr('q', 'defined')|list|length }}",
                   kPeople),
            "['x'] ['y'] [1, 3] [1, 'a'] [1] ['a'] 1");
  EXPECT_EQ(Render("{{ p|map(attribute='n')|join }} {{ ['a', 'b']|map('upper')|list }} "
                   "{{ p|map(attribute='z', default='-')|list }}",
                   kPeople),
            "xy ['A', 'B'] ['-', '-']");
}

TEST(JinjaFiltersTest, SelectReturnsAGeneratorThatIsAlwaysTruthy) {
  EXPECT_EQ(Render("{% if p|selectattr('n', 'equalto', 'nobody') %}truthy{% endif %}|"
                   "{% if p|selectattr('n', 'equalto', 'nobody')|list %}never{% endif %}",
                   kPeople),
            "truthy|");
}

TEST(JinjaFiltersTest, DictFilters) {
  const ordered_json d = {{"d", {{"b", 1}, {"a", 2}, {"C", 3}}}};
  EXPECT_EQ(Render("{{ d|items|list }} {{ d|dictsort }} {{ d|dictsort(reverse=true) }} "
                   "{{ d|dictsort(by='value') }}",
                   d),
            "[('b', 1), ('a', 2), ('C', 3)] [('a', 2), ('b', 1), ('C', 3)] "
            "[('C', 3), ('b', 1), ('a', 2)] [('b', 1), ('a', 2), ('C', 3)]");
}

TEST(JinjaFiltersTest, NumberFilters) {
  EXPECT_EQ(Render("{{ '42'|int }} {{ '4.7'|int }} {{ 'z'|int }} {{ 'z'|int(9) }} "
                   "{{ 'ff'|int(base=16) }} {{ 3.9|int }} {{ '2.5'|float }} {{ 'z'|float }} "
                   "{{ 2|float }}"),
            "42 4 0 9 255 3 2.5 0.0 2.0");
  EXPECT_EQ(Render("{{ -3|abs }} {{ -1.5|abs }} {{ 2.5|round }} {{ 3.14159|round(2) }} "
                   "{{ 2.1|round(0, 'ceil') }} {{ 2.9|round(0, 'floor') }} {{ 5|round }}"),
            "3 1.5 2.0 3.14 3.0 2.0 5");
  EXPECT_EQ(Render("{{ u|default('d') }} {{ ''|d('e', true) }} {{ 0|default(5) }}"), "d e 0");
}

TEST(JinjaFiltersTest, ToJsonWritesPythonsJsonDumps) {
  const ordered_json d = {{"d", {{"b", {1, 2}}, {"a", {{"c", "x"}}}}}};
  EXPECT_EQ(Render("{{ d|tojson }} {{ d|tojson(sort_keys=true) }} {{ 'é\"'|tojson }} "
                   "{{ 'é'|tojson(ensure_ascii=true) }} "
                   "{{ [1, 2.5, none, true]|tojson(separators=(',', ':')) }}",
                   d),
            "{\"b\": [1, 2], \"a\": {\"c\": \"x\"}} {\"a\": {\"c\": \"x\"}, \"b\": [1, 2]} "
            "\"é\\\"\" \"\\u00e9\" [1,2.5,null,true]");
  EXPECT_EQ(Render("{{ d|tojson(indent=2) }}", d),
            "{\n  \"b\": [\n    1,\n    2\n  ],\n  \"a\": {\n    \"c\": \"x\"\n  }\n}");
  EXPECT_EQ(Render("{{ u|tojson }}"),
            "ERROR: line 1: Object of type Undefined is not JSON serializable");
}

TEST(JinjaFiltersTest, Tests) {
  EXPECT_EQ(
      Render("{{ 1 is odd }} {{ 2 is even }} {{ 6 is divisibleby 3 }} {{ u is defined }} "
             "{{ u is undefined }} {{ none is none }} {{ 'a' is string }} {{ 1.5 is number }} "
             "{{ 1 is integer }} {{ 1.5 is float }} {{ false is boolean }} {{ true is true }} "
             "{{ false is false }} {{ {} is mapping }} {{ [] is iterable }} "
             "{{ 'a' is sequence }} {{ range is callable }} {{ 1 is equalto 1 }} "
             "{{ 1 is eq 1 }} {{ 1 is ne 2 }} {{ 1 is lt 2 }} {{ 2 is gt 1 }} {{ 1 is le 1 }} "
             "{{ 1 is ge 2 }} {{ 1 is in [1] }} {{ 'ab' is lower }} {{ 'AB' is upper }} "
             "{{ none is sameas none }}"),
      "True True True False True True True True True True True True True True True True "
      "True True True True True True True False True True True True");
  EXPECT_EQ(
      Render("{{ true is number }} {{ 1.0 is integer }} {{ u is sequence }} {{ 1 is string }}"),
      "True False True False");
}

}  // namespace
}  // namespace smallmind::jinja
