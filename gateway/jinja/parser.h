// Parser: turns jinja_lexer tokens into the jinja_ast tree, following jinja2 3.1's grammar
// (jinja2/parser.py) for the statements and expressions chat templates use. Statements live in
// parser.cc, expressions in parser_expr.cc. One Parser per template, used once by
// ParseTemplate; not thread-safe (nothing shares it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gateway/jinja/ast.h"
#include "gateway/jinja/lexer.h"

namespace smallmind::jinja {

// Nesting beyond this (brackets, blocks, operator chains) is a syntax error, so neither parsing nor
// rendering a hostile template can exhaust the stack.
inline constexpr int kMaxNesting = 128;

// Parses a whole template; syntax errors come back as INVALID_ARGUMENT "line N: ...".
shared::Result<Body> ParseTemplate(std::string_view source);

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}
  shared::Result<Body> Run();

 private:
  using Tags = std::vector<std::string_view>;

  // Token stream.
  const Token& Cur() const { return tokens_[pos_]; }
  const Token& Look() const { return tokens_[pos_ + 1 < tokens_.size() ? pos_ + 1 : pos_]; }
  void Next() {
    if (pos_ + 1 < tokens_.size()) ++pos_;
  }
  bool IsName(std::string_view v) const;
  bool IsOp(std::string_view op) const;
  bool SkipName(std::string_view v);
  bool SkipOp(std::string_view op);
  shared::Status Expect(TokenType type);
  shared::Status ExpectName(std::string_view v);
  shared::Status ExpectOp(std::string_view op);
  shared::Status Fail(int line, const std::string& message) const;
  shared::Status FailUnknownTag(const std::string& name, int line, const Tags* extra_end) const;
  static std::string Describe(const Token& t);

  // Statements (parser.cc).
  shared::Result<Body> Subparse(const Tags* end_tags);
  shared::Result<Body> ParseStatements(const Tags& end_tags, bool drop_needle);
  shared::Result<StmtPtr> ParseStatement();
  shared::Result<StmtPtr> ParseFor();
  shared::Result<StmtPtr> ParseIf();
  shared::Result<StmtPtr> ParseSet();
  shared::Result<StmtPtr> ParseMacro();
  shared::Result<StmtPtr> ParseCallBlock();
  shared::Result<StmtPtr> ParseFilterBlock();
  shared::Result<StmtPtr> ParseWith();
  shared::Result<StmtPtr> ParsePrint();
  shared::Result<StmtPtr> ParseScopedBody(std::string_view end_tag);
  shared::Status ParseSignature(MacroDef& def);
  shared::Result<Target> ParseAssignTarget(bool with_tuple, bool name_only, const Tags* extra_end,
                                           bool with_namespace);
  shared::Result<Target> ExprToTarget(const Expr& e, int line);

  // Expressions (parser_expr.cc).
  shared::Result<ExprPtr> ParseExpression(bool with_condexpr = true);
  shared::Result<ExprPtr> ParseCondExpr();
  shared::Result<ExprPtr> ParseOr();
  shared::Result<ExprPtr> ParseAnd();
  shared::Result<ExprPtr> ParseNot();
  shared::Result<ExprPtr> ParseCompare();
  shared::Result<ExprPtr> ParseMath1();
  shared::Result<ExprPtr> ParseConcat();
  shared::Result<ExprPtr> ParseMath2();
  shared::Result<ExprPtr> ParsePow();
  shared::Result<ExprPtr> ParseUnary(bool with_filter);
  shared::Result<ExprPtr> ParsePrimary();
  shared::Result<ExprPtr> ParseTuple(bool simplified, bool with_condexpr, const Tags* extra_end,
                                     bool explicit_parentheses);
  shared::Result<ExprPtr> ParseList();
  shared::Result<ExprPtr> ParseDict();
  shared::Result<ExprPtr> ParsePostfix(ExprPtr node);
  shared::Result<ExprPtr> ParseFilterExpr(ExprPtr node);
  shared::Result<ExprPtr> ParseSubscript(ExprPtr node);
  shared::Result<ExprPtr> ParseSubscribed();
  shared::Status ParseCallArgs(CallArgsExpr& args);
  shared::Result<ExprPtr> ParseCall(ExprPtr node);
  shared::Result<ExprPtr> ParseFilter(ExprPtr node, bool start_inline);
  shared::Result<ExprPtr> ParseTest(ExprPtr node);
  bool IsTupleEnd(const Tags* extra_end) const;
  // Sets e->height from its children and fails when it passes kMaxNesting.
  shared::Result<ExprPtr> Sized(ExprPtr e);

  // Counts one level of depth_ for the scope of a parse function.
  struct DepthGuard {
    explicit DepthGuard(int& d) : depth(d) { ++depth; }
    ~DepthGuard() { --depth; }
    int& depth;
  };

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;  // recursion depth of the parse functions
  std::vector<Tags> end_tag_stack_;
  std::vector<std::string> tag_stack_;
};

}  // namespace smallmind::jinja
