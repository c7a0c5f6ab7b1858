// Postfix half of the expression Parser (see parser.h): `.attr`, `[item]` and slices, call
// arguments, `| filter` and `is test`.
#include "gateway/jinja/parser.h"

namespace smallmind::jinja {

using shared::Result;
using shared::Status;

Result<ExprPtr> Parser::ParseSubscript(ExprPtr node) {
  const int line = Cur().line;
  if (SkipOp(".")) {
    const Token& attr = Cur();
    if (attr.type == TokenType::kName) {
      std::string name = attr.text;
      Next();
      return Sized(std::make_unique<GetAttrExpr>(std::move(node), std::move(name), line));
    }
    if (attr.type != TokenType::kInteger) return Fail(attr.line, "expected name or number");
    auto key = std::make_unique<LiteralExpr>(Value::Int(attr.int_value), attr.line);
    Next();
    return Sized(std::make_unique<GetItemExpr>(std::move(node), std::move(key), line));
  }
  SM_RETURN_IF_ERROR(ExpectOp("["));
  std::vector<ExprPtr> args;
  while (!IsOp("]")) {
    if (!args.empty()) SM_RETURN_IF_ERROR(ExpectOp(","));
    SM_ASSIGN_OR_RETURN(ExprPtr arg, ParseSubscribed());
    args.push_back(std::move(arg));
  }
  SM_RETURN_IF_ERROR(ExpectOp("]"));
  ExprPtr key;
  if (args.size() == 1) {
    key = std::move(args[0]);
  } else {
    auto tuple = std::make_unique<SequenceExpr>(ExprKind::kTuple, line);
    tuple->items = std::move(args);
    SM_ASSIGN_OR_RETURN(key, Sized(std::move(tuple)));
  }
  return Sized(std::make_unique<GetItemExpr>(std::move(node), std::move(key), line));
}

Result<ExprPtr> Parser::ParseSubscribed() {
  const int line = Cur().line;
  auto slice = std::make_unique<SliceExpr>(line);
  if (!SkipOp(":")) {
    SM_ASSIGN_OR_RETURN(ExprPtr node, ParseExpression());
    if (!SkipOp(":")) return node;
    slice->start = std::move(node);
  }
  if (!IsOp(":") && !IsOp("]") && !IsOp(",")) {
    SM_ASSIGN_OR_RETURN(slice->stop, ParseExpression());
  }
  if (SkipOp(":")) {
    if (!IsOp("]") && !IsOp(",")) {
      SM_ASSIGN_OR_RETURN(slice->step, ParseExpression());
    }
  }
  return Sized(std::move(slice));
}

Status Parser::ParseCallArgs(CallArgsExpr& args) {
  const int line = Cur().line;
  SM_RETURN_IF_ERROR(ExpectOp("("));
  bool require_comma = false;
  auto ensure = [&](bool ok) {
    return ok ? Status::Ok() : Fail(line, "invalid syntax for function call expression");
  };
  while (!IsOp(")")) {
    if (require_comma) {
      SM_RETURN_IF_ERROR(ExpectOp(","));
      if (IsOp(")")) break;  // trailing comma
    }
    if (IsOp("*")) {
      SM_RETURN_IF_ERROR(ensure(!args.dyn_args && !args.dyn_kwargs));
      Next();
      SM_ASSIGN_OR_RETURN(args.dyn_args, ParseExpression());
    } else if (IsOp("**")) {
      SM_RETURN_IF_ERROR(ensure(!args.dyn_kwargs));
      Next();
      SM_ASSIGN_OR_RETURN(args.dyn_kwargs, ParseExpression());
    } else if (Cur().type == TokenType::kName && Look().type == TokenType::kOperator &&
               Look().text == "=") {
      SM_RETURN_IF_ERROR(ensure(!args.dyn_kwargs));
      std::string key = Cur().text;
      Next();
      Next();
      SM_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression());
      args.keywords.emplace_back(std::move(key), std::move(value));
    } else {
      SM_RETURN_IF_ERROR(ensure(!args.dyn_args && !args.dyn_kwargs && args.keywords.empty()));
      SM_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression());
      args.positional.push_back(std::move(value));
    }
    require_comma = true;
  }
  return ExpectOp(")");
}

Result<ExprPtr> Parser::ParseCall(ExprPtr node) {
  auto call = std::make_unique<CallExpr>(Cur().line);
  call->callee = std::move(node);
  SM_RETURN_IF_ERROR(ParseCallArgs(call->args));
  return Sized(std::move(call));
}

Result<ExprPtr> Parser::ParseFilter(ExprPtr node, bool start_inline) {
  while (IsOp("|") || start_inline) {
    if (!start_inline) Next();
    start_inline = false;
    const int line = Cur().line;
    if (Cur().type != TokenType::kName) {
      return Fail(line, "expected a filter name, got '" + Describe(Cur()) + "'");
    }
    auto filter = std::make_unique<FilterExpr>(ExprKind::kFilter, line);
    filter->name = Cur().text;
    Next();
    while (SkipOp(".")) {
      if (Cur().type != TokenType::kName) return Fail(Cur().line, "expected a name");
      filter->name += "." + Cur().text;
      Next();
    }
    if (IsOp("(")) SM_RETURN_IF_ERROR(ParseCallArgs(filter->args));
    filter->input = std::move(node);
    SM_ASSIGN_OR_RETURN(node, Sized(std::move(filter)));
  }
  return node;
}

Result<ExprPtr> Parser::ParseTest(ExprPtr node) {
  const int line = Cur().line;
  Next();  // is
  const bool negated = SkipName("not");
  if (Cur().type != TokenType::kName) {
    return Fail(Cur().line, "expected a test name, got '" + Describe(Cur()) + "'");
  }
  auto test = std::make_unique<FilterExpr>(ExprKind::kTest, line);
  test->name = Cur().text;
  Next();
  while (SkipOp(".")) {
    if (Cur().type != TokenType::kName) return Fail(Cur().line, "expected a name");
    test->name += "." + Cur().text;
    Next();
  }
  const Token& t = Cur();
  if (IsOp("(")) {
    SM_RETURN_IF_ERROR(ParseCallArgs(test->args));
  } else if ((t.type == TokenType::kName || t.type == TokenType::kString ||
              t.type == TokenType::kInteger || t.type == TokenType::kFloat || IsOp("[") ||
              IsOp("{")) &&
             !IsName("else") && !IsName("or") && !IsName("and")) {
    // One argument without parentheses: `x is divisibleby 3`, `x is sameas false`.
    if (IsName("is")) return Fail(t.line, "You cannot chain multiple tests with is");
    SM_ASSIGN_OR_RETURN(ExprPtr arg, ParsePrimary());
    SM_ASSIGN_OR_RETURN(arg, ParsePostfix(std::move(arg)));
    test->args.positional.push_back(std::move(arg));
  }
  test->input = std::move(node);
  SM_ASSIGN_OR_RETURN(ExprPtr result, Sized(std::move(test)));
  if (!negated) return result;
  return Sized(std::make_unique<UnaryExpr>(Op::kNot, std::move(result), line));
}

}  // namespace smallmind::jinja
