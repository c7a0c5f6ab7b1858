// Errors and limits: syntax errors say where, runtime errors say what, and hostile templates
// (endless loops, exponential macros, string doubling, deep nesting, garbage) end with an error,
// never a crash or a hang.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "tests/gateway/jinja/test_util.h"

namespace smallmind::jinja {
namespace {

using testing::Render;
using testing::RenderWith;

TEST(JinjaErrorsTest, SyntaxErrorsNameTheLineAndTheProblem) {
  EXPECT_EQ(Render("line one\n{% if true %}never closed"),
            "ERROR: line 2: Unexpected end of template. Jinja was looking for the following tags: "
            "'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'.");
  EXPECT_EQ(Render("a\nb\n{% frobnicate %}"),
            "ERROR: line 3: Encountered unknown tag 'frobnicate'.");
  EXPECT_EQ(Render("{{ 1 + }}"), "ERROR: line 1: unexpected 'end of print statement'");
  EXPECT_EQ(Render("{{ (1, 2 }}"), "ERROR: line 1: unexpected '}', expected ')'");
  EXPECT_EQ(Render("{# never closed"), "ERROR: line 1: Missing end of comment tag");
  EXPECT_EQ(Render("{% for x in y %}{% endif %}"),
            "ERROR: line 1: Encountered unknown tag 'endif'. Jinja was looking for the following "
            "tags: 'endfor' or 'else'. The innermost block that needs to be closed is 'for'.");
  EXPECT_EQ(Render("{% if a %}{% for x in y %}{% endif %}"),
            "ERROR: line 1: Encountered unknown tag 'endif'. You probably made a nesting mistake. "
            "Jinja is expecting this tag, but currently looking for 'endfor' or 'else'. The "
            "innermost block that needs to be closed is 'for'.");
  EXPECT_EQ(Render("{% include 'x.jinja' %}"),
            "ERROR: line 1: the 'include' tag is not supported (chat templates render on their "
            "own, without a template loader)");
}

TEST(JinjaErrorsTest, InvalidUtf8TemplateIsRejected) {
  EXPECT_EQ(Render("ok \xff bad"), "ERROR: template is not valid UTF-8 (byte offset 3)");
}

TEST(JinjaErrorsTest, RuntimeErrorsNameTheLine) {
  EXPECT_EQ(Render("a\n\n{{ 'x' ~ (1 / 0) }}"), "ERROR: line 3: division by zero");
  EXPECT_EQ(Render("{% for m in [1] %}\n{{ m.content.strip() }}{% endfor %}"),
            "ERROR: line 2: 'int object' has no attribute 'content'");
}

TEST(JinjaErrorsTest, EndlessLoopsRunOutOfWork) {
  RenderLimits limits;
  limits.max_work = 200000;
  const auto r =
      RenderWith("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
                 {}, limits);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("units of work"), std::string::npos) << r.error;
}

TEST(JinjaErrorsTest, ExponentialMacroRecursionRunsOutOfWork) {
  RenderLimits limits;
  limits.max_work = 100000;
  const auto r = RenderWith(
      "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) "
      "}}",
      {}, limits);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("units of work"), std::string::npos) << r.error;
}

TEST(JinjaErrorsTest, UnboundedRecursionStopsAtTheCallDepthLimit) {
  const auto r = RenderWith("{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}", {});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("macro calls nest deeper than 64 levels"), std::string::npos) << r.error;
}

TEST(JinjaErrorsTest, GrowingStringsAndListsHitTheSizeLimits) {
  RenderLimits limits;
  limits.max_output_bytes = 1 << 16;
  limits.max_items = 1000;
  auto r = RenderWith(
      "{% set ns = namespace(s='x') %}{% for i in range(40) %}"
      "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
      {}, limits);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("65536 bytes"), std::string::npos) << r.error;
  r = RenderWith("{{ 'ab' * 1000000000 }}", {}, limits);
  EXPECT_FALSE(r.ok);
  // A tab expanded to a huge width is refused before the memory is asked for (it was bad_alloc).
  r = RenderWith("{{ 'a\\tb'.expandtabs(1000000000000) }}", {}, limits);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("65536 bytes"), std::string::npos) << r.error;
  EXPECT_EQ(RenderWith("{{ 'a\\tb'.expandtabs(4) }}", {}, limits).text, "a   b");
  r = RenderWith("{{ ([0] * 100000)|length }}", {}, limits);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("1000 items"), std::string::npos) << r.error;
  r = RenderWith("{% for i in range(100000) %}xxxxxxxxxx{% endfor %}", {}, limits);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("rendered text would exceed"), std::string::npos) << r.error;
}

// An empty string, list or tuple times a huge count is empty at once; it used to pass the size
// checks (nothing to add) and then loop the count (found by tests/fuzz/chat_template_fuzz).
TEST(JinjaErrorsTest, AnEmptySequenceTimesAHugeCountIsEmptyAtOnce) {
  EXPECT_EQ(Render("[{{ '' * 999999999999999999 }}]"), "[]");
  EXPECT_EQ(Render("{{ ([] * 999999999999999999)|length }} {{ (() * 10 ** 18)|length }}"), "0 0");
  EXPECT_EQ(Render("{{ ('ab' * 0) ~ ('' * 10 ** 18) ~ 'x' }}"), "x");
}

// A format precision or width past 2^24 is refused as it is read: '{:.1000000000f}' used to format
// a gigabyte (54 s, 5.8 GB) before the size check, and longer digit runs overflowed the int.
TEST(JinjaErrorsTest, HugeFormatPrecisionsAndWidthsAreRefusedBeforeFormatting) {
  for (const char* t :
       {"{{ '{0:.1000000000f}'.format(1.5) }}", "{{ '{:.99999999999999999999999f}'.format(1.5) }}",
        "{{ '{:99999999999999999999999}'.format(1) }}"}) {
    EXPECT_EQ(Render(t), "ERROR: line 1: Invalid format specifier") << t;
  }
  EXPECT_EQ(Render("{{ '{:.3f}|{:>6.2f}|{:8}'.format(1.5, 2.25, 'ab') }}"),
            "1.500|  2.25|ab      ");
}

TEST(JinjaErrorsTest, SandboxRangeIsCappedAsInJinja2) {
  EXPECT_EQ(Render("{{ range(1000000)|length }}"),
            "ERROR: line 1: Range too big. The sandbox blocks ranges larger than MAX_RANGE "
            "(100000).");
}

TEST(JinjaErrorsTest, DeepNestingIsASyntaxErrorNotAStackOverflow) {
  const std::string parens = std::string(5000, '(') + "1" + std::string(5000, ')');
  EXPECT_NE(Render("{{ " + parens + " }}").find("nests too deeply"), std::string::npos);
  std::string chain = "{{ 1";
  for (int i = 0; i < 20000; ++i) chain += " + 1";
  EXPECT_NE(Render(chain + " }}").find("nests deeper than"), std::string::npos);
  std::string blocks;
  for (int i = 0; i < 5000; ++i) blocks += "{% if true %}";
  EXPECT_NE(Render(blocks).find("nests too deeply"), std::string::npos);
  EXPECT_NE(Render("{{ " + std::string(5000, '-') + "1 }}").find("nests too deeply"),
            std::string::npos);
  EXPECT_NE(Render("{{ " + std::string(5000, '[') + std::string(5000, ']') + " }}")
                .find("nests too deeply"),
            std::string::npos);
}

TEST(JinjaErrorsTest, ValuesBuiltDeeperThanTheLimitAreAnErrorNotAStackOverflow) {
  EXPECT_EQ(Render("{% set ns = namespace(x=[]) %}{% for i in range(1000) %}"
                   "{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x|length }}"),
            "ERROR: line 1: a value nests deeper than 200 levels");
  EXPECT_EQ(Render("{% macro wrap(x, n) %}{% if n > 0 %}{{ wrap([x], n - 1) }}{% endif %}"
                   "{% endmacro %}{{ wrap(1, 60) }}ok"),
            "ok");
  nlohmann::ordered_json deep = 1;
  for (int i = 0; i < 250; ++i) deep = nlohmann::ordered_json::array({deep});
  EXPECT_FALSE(FromJson(deep).ok());
  nlohmann::ordered_json shallow = 1;
  for (int i = 0; i < 150; ++i) shallow = nlohmann::ordered_json::array({shallow});
  EXPECT_EQ(Render("{{ v|tojson|length }} {{ v|string|length }}", {{"v", shallow}}), "301 301");
}

TEST(JinjaErrorsTest, ANamespaceHoldingItselfPrintsAsInPython) {
  EXPECT_EQ(Render("{% set ns = namespace(a=1) %}{% set ns.self = ns %}{{ ns.self.self.a }} "
                   "{{ ns }} {{ [ns] }}"),
            "1 <Namespace {'a': 1, 'self': <Namespace {...}>}> "
            "[<Namespace {'a': 1, 'self': <Namespace {...}>}>]");
  EXPECT_EQ(Render("{% set ns = namespace(a=1) %}{% set n2 = namespace(o=ns) %}"
                   "{% set ns.b = n2 %}{{ ns }}"),
            "<Namespace {'a': 1, 'b': <Namespace {'o': <Namespace {...}>}>}>");
  // Each self-assignment counts as one level more, so a loop of them hits the limit.
  EXPECT_EQ(Render("{% set ns = namespace() %}{% for i in range(300) %}{% set ns.s = ns %}"
                   "{% endfor %}"),
            "ERROR: line 1: a value nests deeper than 200 levels");
}

TEST(JinjaErrorsTest, DeepBlocksInsideDeepRecursionRunOutOfStackBudgetNotStack) {
  // 110 nested blocks (within the parser's limit) times 64 macro calls would need megabytes of
  // stack; the render stops at its stack budget instead.
  std::string body = "{% if n > 0 %}";
  for (int i = 0; i < 110; ++i) body += "{% if true %}";
  body += "{{ m(n - 1) }}";
  for (int i = 0; i < 111; ++i) body += "{% endif %}";
  const std::string out = Render("{% macro m(n) %}" + body + "{% endmacro %}{{ m(100) }}");
  EXPECT_NE(out.find("the template nests too deeply to render"), std::string::npos) << out;
  // The same blocks with shallow recursion render.
  EXPECT_EQ(Render("{% macro m(n) %}" + body + "{% endmacro %}{{ m(2) }}done"), "done");
}

TEST(JinjaErrorsTest, RandomTemplatesEitherRenderOrFailCleanly) {
  // Fragments of real template syntax glued at random: the renderer must always return.
  const char* kPieces[] = {
      "{{",       "}}",   "{%",      "%}",       "{#",     "#}", "-",       "+",         "if",
      "for",      "in",   "endif",   "endfor",   "set",    "=",  "x",       "y",         "loop",
      ".",        "[",    "]",       "(",        ")",      "{",  "}",       "'s'",       "\"",
      "1",        "2.5",  "|",       "trim",     "length", "is", "defined", "not",       "and",
      "or",       "~",    "*",       "**",       "//",     "%",  ",",       ":",         "macro",
      "endmacro", "call", "endcall", "raw",      "endraw", " ",  "\n",      "namespace", "ns",
      "else",     "elif", "break",   "continue", "é",      "\\"};
  std::mt19937 rng(1234);
  std::uniform_int_distribution<size_t> piece(0, sizeof(kPieces) / sizeof(kPieces[0]) - 1);
  std::uniform_int_distribution<int> length(1, 40);
  RenderLimits limits;
  limits.max_work = 100000;
  int rendered = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string source;
    const int n = length(rng);
    for (int k = 0; k < n; ++k) source += kPieces[piece(rng)];
    const auto r = RenderWith(source, testing::J(R"({"x": [1, 2], "y": "s"})"), limits);
    rendered += r.ok;
    if (!r.ok) {
      EXPECT_FALSE(r.error.empty()) << source;
    }
  }
  EXPECT_GT(rendered, 100);  // the generator does reach valid templates
}

}  // namespace
}  // namespace smallmind::jinja
