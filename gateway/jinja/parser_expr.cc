// Expression half of the Parser (see parser.h): jinja2's precedence from loosest to tightest
// is  a if c else b  <  or  <  and  <  not  <  comparisons, in  <  + -  <  ~  <  * / // %  <  **  <
// unary - +  <  filters, tests, calls, .attr, [item].
#include <algorithm>

#include "gateway/jinja/parser.h"

namespace smallmind::jinja {
namespace {

using shared::Result;
using shared::Status;

int ChildHeight(const Expr& e) {
  int h = 0;
  ForEachChild(e, [&](const Expr& child) { h = std::max(h, child.height); });
  return h;
}

}  // namespace

Result<ExprPtr> Parser::Sized(ExprPtr e) {
  e->height = 1 + ChildHeight(*e);
  if (e->height > kMaxNesting) {
    return Fail(e->line, "expression nests deeper than " + std::to_string(kMaxNesting) + " levels");
  }
  return e;
}

Result<ExprPtr> Parser::ParseExpression(bool with_condexpr) {
  return with_condexpr ? ParseCondExpr() : ParseOr();
}

Result<ExprPtr> Parser::ParseCondExpr() {
  DepthGuard guard(depth_);
  if (depth_ > kMaxNesting) return Fail(Cur().line, "expression nests too deeply");
  int line = Cur().line;
  SM_ASSIGN_OR_RETURN(ExprPtr expr1, ParseOr());
  while (SkipName("if")) {
    auto cond = std::make_unique<CondExpr>(line);
    SM_ASSIGN_OR_RETURN(cond->test, ParseOr());
    if (SkipName("else")) {
      SM_ASSIGN_OR_RETURN(cond->otherwise, ParseCondExpr());
    }
    cond->then = std::move(expr1);
    SM_ASSIGN_OR_RETURN(expr1, Sized(std::move(cond)));
    line = Cur().line;
  }
  return expr1;
}

Result<ExprPtr> Parser::ParseOr() {
  SM_ASSIGN_OR_RETURN(ExprPtr left, ParseAnd());
  while (true) {
    const int line = Cur().line;
    if (!SkipName("or")) break;
    SM_ASSIGN_OR_RETURN(ExprPtr right, ParseAnd());
    SM_ASSIGN_OR_RETURN(left, Sized(std::make_unique<BinaryExpr>(Op::kOr, std::move(left),
                                                                 std::move(right), line)));
  }
  return left;
}

Result<ExprPtr> Parser::ParseAnd() {
  SM_ASSIGN_OR_RETURN(ExprPtr left, ParseNot());
  while (true) {
    const int line = Cur().line;
    if (!SkipName("and")) break;
    SM_ASSIGN_OR_RETURN(ExprPtr right, ParseNot());
    SM_ASSIGN_OR_RETURN(left, Sized(std::make_unique<BinaryExpr>(Op::kAnd, std::move(left),
                                                                 std::move(right), line)));
  }
  return left;
}

Result<ExprPtr> Parser::ParseNot() {
  if (IsName("not")) {
    DepthGuard guard(depth_);
    if (depth_ > kMaxNesting) return Fail(Cur().line, "expression nests too deeply");
    const int line = Cur().line;
    Next();
    SM_ASSIGN_OR_RETURN(ExprPtr operand, ParseNot());
    return Sized(std::make_unique<UnaryExpr>(Op::kNot, std::move(operand), line));
  }
  return ParseCompare();
}

Result<ExprPtr> Parser::ParseCompare() {
  const int line = Cur().line;
  SM_ASSIGN_OR_RETURN(ExprPtr first, ParseMath1());
  std::unique_ptr<CompareExpr> cmp;
  while (true) {
    Op op;
    const Token& t = Cur();
    if (t.type == TokenType::kOperator && t.text == "==") {
      op = Op::kEq;
    } else if (t.type == TokenType::kOperator && t.text == "!=") {
      op = Op::kNe;
    } else if (t.type == TokenType::kOperator && t.text == "<") {
      op = Op::kLt;
    } else if (t.type == TokenType::kOperator && t.text == "<=") {
      op = Op::kLe;
    } else if (t.type == TokenType::kOperator && t.text == ">") {
      op = Op::kGt;
    } else if (t.type == TokenType::kOperator && t.text == ">=") {
      op = Op::kGe;
    } else if (IsName("in")) {
      op = Op::kIn;
    } else if (IsName("not") && Look().type == TokenType::kName && Look().text == "in") {
      op = Op::kNotIn;
      Next();
    } else {
      break;
    }
    Next();
    SM_ASSIGN_OR_RETURN(ExprPtr operand, ParseMath1());
    if (!cmp) cmp = std::make_unique<CompareExpr>(line);
    cmp->rest.emplace_back(op, std::move(operand));
  }
  if (!cmp) return first;
  cmp->first = std::move(first);
  return Sized(std::move(cmp));
}

Result<ExprPtr> Parser::ParseMath1() {
  SM_ASSIGN_OR_RETURN(ExprPtr left, ParseConcat());
  while (IsOp("+") || IsOp("-")) {
    const Op op = IsOp("+") ? Op::kAdd : Op::kSub;
    const int line = Cur().line;
    Next();
    SM_ASSIGN_OR_RETURN(ExprPtr right, ParseConcat());
    SM_ASSIGN_OR_RETURN(
        left, Sized(std::make_unique<BinaryExpr>(op, std::move(left), std::move(right), line)));
  }
  return left;
}

Result<ExprPtr> Parser::ParseConcat() {
  const int line = Cur().line;
  SM_ASSIGN_OR_RETURN(ExprPtr first, ParseMath2());
  if (!IsOp("~")) return first;
  auto concat = std::make_unique<ConcatExpr>(line);
  concat->items.push_back(std::move(first));
  while (SkipOp("~")) {
    SM_ASSIGN_OR_RETURN(ExprPtr next, ParseMath2());
    concat->items.push_back(std::move(next));
  }
  return Sized(std::move(concat));
}

Result<ExprPtr> Parser::ParseMath2() {
  SM_ASSIGN_OR_RETURN(ExprPtr left, ParsePow());
  while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
    const std::string& t = Cur().text;
    const Op op = t == "*" ? Op::kMul : t == "/" ? Op::kDiv : t == "//" ? Op::kFloorDiv : Op::kMod;
    const int line = Cur().line;
    Next();
    SM_ASSIGN_OR_RETURN(ExprPtr right, ParsePow());
    SM_ASSIGN_OR_RETURN(
        left, Sized(std::make_unique<BinaryExpr>(op, std::move(left), std::move(right), line)));
  }
  return left;
}

Result<ExprPtr> Parser::ParsePow() {
  SM_ASSIGN_OR_RETURN(ExprPtr left, ParseUnary(true));
  while (IsOp("**")) {
    const int line = Cur().line;
    Next();
    SM_ASSIGN_OR_RETURN(ExprPtr right, ParseUnary(true));
    SM_ASSIGN_OR_RETURN(left, Sized(std::make_unique<BinaryExpr>(Op::kPow, std::move(left),
                                                                 std::move(right), line)));
  }
  return left;
}

Result<ExprPtr> Parser::ParseUnary(bool with_filter) {
  DepthGuard guard(depth_);
  if (depth_ > kMaxNesting) return Fail(Cur().line, "expression nests too deeply");
  const int line = Cur().line;
  ExprPtr node;
  if (IsOp("-") || IsOp("+")) {
    const Op op = IsOp("-") ? Op::kNeg : Op::kPos;
    Next();
    SM_ASSIGN_OR_RETURN(ExprPtr operand, ParseUnary(false));
    SM_ASSIGN_OR_RETURN(node, Sized(std::make_unique<UnaryExpr>(op, std::move(operand), line)));
  } else {
    SM_ASSIGN_OR_RETURN(node, ParsePrimary());
  }
  SM_ASSIGN_OR_RETURN(node, ParsePostfix(std::move(node)));
  if (with_filter) {
    SM_ASSIGN_OR_RETURN(node, ParseFilterExpr(std::move(node)));
  }
  return node;
}

Result<ExprPtr> Parser::ParsePrimary() {
  const Token& t = Cur();
  const int line = t.line;
  switch (t.type) {
    case TokenType::kName: {
      ExprPtr node;
      if (t.text == "true" || t.text == "True" || t.text == "false" || t.text == "False") {
        node =
            std::make_unique<LiteralExpr>(Value::Bool(t.text[0] == 't' || t.text[0] == 'T'), line);
      } else if (t.text == "none" || t.text == "None") {
        node = std::make_unique<LiteralExpr>(Value::None(), line);
      } else {
        node = std::make_unique<NameExpr>(t.text, line);
      }
      Next();
      return node;
    }
    case TokenType::kString: {
      std::string s;
      while (Cur().type == TokenType::kString) {  // adjacent literals concatenate
        s += Cur().text;
        Next();
      }
      return ExprPtr(std::make_unique<LiteralExpr>(Value::String(std::move(s)), line));
    }
    case TokenType::kInteger: {
      const int64_t v = t.int_value;
      Next();
      return ExprPtr(std::make_unique<LiteralExpr>(Value::Int(v), line));
    }
    case TokenType::kFloat: {
      const double v = t.float_value;
      Next();
      return ExprPtr(std::make_unique<LiteralExpr>(Value::Float(v), line));
    }
    default: break;
  }
  if (IsOp("(")) {
    Next();
    SM_ASSIGN_OR_RETURN(ExprPtr node, ParseTuple(false, true, nullptr, true));
    SM_RETURN_IF_ERROR(ExpectOp(")"));
    return node;
  }
  if (IsOp("[")) return ParseList();
  if (IsOp("{")) return ParseDict();
  return Fail(line, "unexpected '" + Describe(t) + "'");
}

bool Parser::IsTupleEnd(const Tags* extra_end) const {
  const Token& t = Cur();
  if (t.type == TokenType::kVariableEnd || t.type == TokenType::kBlockEnd || IsOp(")")) {
    return true;
  }
  if (extra_end != nullptr && t.type == TokenType::kName) {
    return std::find(extra_end->begin(), extra_end->end(), t.text) != extra_end->end();
  }
  return false;
}

Result<ExprPtr> Parser::ParseTuple(bool simplified, bool with_condexpr, const Tags* extra_end,
                                   bool explicit_parentheses) {
  const int line = Cur().line;
  auto tuple = std::make_unique<SequenceExpr>(ExprKind::kTuple, line);
  bool is_tuple = false;
  while (true) {
    if (!tuple->items.empty()) SM_RETURN_IF_ERROR(ExpectOp(","));
    if (IsTupleEnd(extra_end)) break;
    ExprPtr item;
    if (simplified) {
      SM_ASSIGN_OR_RETURN(item, ParsePrimary());
    } else {
      SM_ASSIGN_OR_RETURN(item, ParseExpression(with_condexpr));
    }
    tuple->items.push_back(std::move(item));
    if (!IsOp(",")) break;
    is_tuple = true;
  }
  if (!is_tuple) {
    if (!tuple->items.empty()) return std::move(tuple->items[0]);
    if (!explicit_parentheses) {
      return Fail(Cur().line, "Expected an expression, got '" + Describe(Cur()) + "'");
    }
  }
  return Sized(std::move(tuple));
}

Result<ExprPtr> Parser::ParseList() {
  auto list = std::make_unique<SequenceExpr>(ExprKind::kList, Cur().line);
  SM_RETURN_IF_ERROR(ExpectOp("["));
  while (!IsOp("]")) {
    if (!list->items.empty()) SM_RETURN_IF_ERROR(ExpectOp(","));
    if (IsOp("]")) break;
    SM_ASSIGN_OR_RETURN(ExprPtr item, ParseExpression());
    list->items.push_back(std::move(item));
  }
  SM_RETURN_IF_ERROR(ExpectOp("]"));
  return Sized(std::move(list));
}

Result<ExprPtr> Parser::ParseDict() {
  auto dict = std::make_unique<DictExpr>(Cur().line);
  SM_RETURN_IF_ERROR(ExpectOp("{"));
  while (!IsOp("}")) {
    if (!dict->items.empty()) SM_RETURN_IF_ERROR(ExpectOp(","));
    if (IsOp("}")) break;
    SM_ASSIGN_OR_RETURN(ExprPtr key, ParseExpression());
    SM_RETURN_IF_ERROR(ExpectOp(":"));
    SM_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression());
    dict->items.emplace_back(std::move(key), std::move(value));
  }
  SM_RETURN_IF_ERROR(ExpectOp("}"));
  return Sized(std::move(dict));
}

Result<ExprPtr> Parser::ParsePostfix(ExprPtr node) {
  while (true) {
    if (IsOp(".") || IsOp("[")) {
      SM_ASSIGN_OR_RETURN(node, ParseSubscript(std::move(node)));
    } else if (IsOp("(")) {
      SM_ASSIGN_OR_RETURN(node, ParseCall(std::move(node)));
    } else {
      return node;
    }
  }
}

Result<ExprPtr> Parser::ParseFilterExpr(ExprPtr node) {
  while (true) {
    if (IsOp("|")) {
      SM_ASSIGN_OR_RETURN(node, ParseFilter(std::move(node), false));
    } else if (IsName("is")) {
      SM_ASSIGN_OR_RETURN(node, ParseTest(std::move(node)));
    } else if (IsOp("(")) {
      SM_ASSIGN_OR_RETURN(node, ParseCall(std::move(node)));
    } else {
      return node;
    }
  }
}

}  // namespace smallmind::jinja
