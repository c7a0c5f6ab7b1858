// Statement half of the Parser (see parser.h), plus the token-stream helpers.
#include "gateway/jinja/parser.h"

#include <algorithm>

namespace smallmind::jinja {
namespace {

using shared::Result;
using shared::Status;

bool Contains(const std::vector<std::string_view>& tags, std::string_view name) {
  return std::find(tags.begin(), tags.end(), name) != tags.end();
}

// Marks which of caller/kwargs/varargs a macro body reads, as jinja2 does to shape its signature.
void ScanMacroBody(MacroDef& def) {
  WalkExprs(def.body, [&](const Expr& e) {
    if (e.kind != ExprKind::kName) return;
    const std::string& n = static_cast<const NameExpr&>(e).name;
    def.uses_caller |= n == "caller";
    def.uses_kwargs |= n == "kwargs";
    def.uses_varargs |= n == "varargs";
  });
}

}  // namespace

Result<Body> ParseTemplate(std::string_view source) {
  SM_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(source));
  return Parser(std::move(tokens)).Run();
}

Result<Body> Parser::Run() { return Subparse(nullptr); }

bool Parser::IsName(std::string_view v) const {
  return Cur().type == TokenType::kName && Cur().text == v;
}

bool Parser::IsOp(std::string_view op) const {
  return Cur().type == TokenType::kOperator && Cur().text == op;
}

bool Parser::SkipName(std::string_view v) {
  if (!IsName(v)) return false;
  Next();
  return true;
}

bool Parser::SkipOp(std::string_view op) {
  if (!IsOp(op)) return false;
  Next();
  return true;
}

std::string Parser::Describe(const Token& t) {
  switch (t.type) {
    case TokenType::kData: return "template data / text";
    case TokenType::kVariableBegin: return "begin of print statement";
    case TokenType::kVariableEnd: return "end of print statement";
    case TokenType::kBlockBegin: return "begin of statement block";
    case TokenType::kBlockEnd: return "end of statement block";
    case TokenType::kName:
    case TokenType::kOperator: return t.text;
    case TokenType::kString: return "string";
    case TokenType::kInteger: return "integer";
    case TokenType::kFloat: return "float";
    case TokenType::kEof: return "end of template";
  }
  return "token";
}

Status Parser::Fail(int line, const std::string& message) const {
  return shared::InvalidArgument("line " + std::to_string(line) + ": " + message);
}

Status Parser::Expect(TokenType type) {
  if (Cur().type == type) {
    Next();
    return Status::Ok();
  }
  Token wanted;
  wanted.type = type;
  if (Cur().type == TokenType::kEof) {
    return Fail(Cur().line, "unexpected end of template, expected '" + Describe(wanted) + "'.");
  }
  return Fail(Cur().line,
              "expected token '" + Describe(wanted) + "', got '" + Describe(Cur()) + "'");
}

Status Parser::ExpectName(std::string_view v) {
  if (SkipName(v)) return Status::Ok();
  return Fail(Cur().line, "expected token '" + std::string(v) + "', got '" + Describe(Cur()) + "'");
}

Status Parser::ExpectOp(std::string_view op) {
  if (SkipOp(op)) return Status::Ok();
  if (Cur().type == TokenType::kEof) {
    return Fail(Cur().line, "unexpected end of template, expected '" + std::string(op) + "'.");
  }
  return Fail(Cur().line,
              "expected token '" + std::string(op) + "', got '" + Describe(Cur()) + "'");
}

Status Parser::FailUnknownTag(const std::string& name, int line, const Tags* extra_end) const {
  std::vector<Tags> stack = end_tag_stack_;
  if (extra_end != nullptr) stack.push_back(*extra_end);
  std::string message =
      name.empty() ? "Unexpected end of template." : "Encountered unknown tag '" + name + "'.";
  if (!stack.empty()) {
    std::string looking;
    for (std::string_view t : stack.back()) {
      looking += (looking.empty() ? "'" : " or '") + std::string(t) + "'";
    }
    bool expected_elsewhere = false;
    for (const Tags& tags : stack) expected_elsewhere |= !name.empty() && Contains(tags, name);
    if (expected_elsewhere) {
      message +=
          " You probably made a nesting mistake. Jinja is expecting this tag, but "
          "currently looking for " +
          looking + ".";
    } else {
      message += " Jinja was looking for the following tags: " + looking + ".";
    }
  }
  if (!tag_stack_.empty()) {
    message += " The innermost block that needs to be closed is '" + tag_stack_.back() + "'.";
  }
  return Fail(line, message);
}

Result<Body> Parser::Subparse(const Tags* end_tags) {
  DepthGuard guard(depth_);
  if (depth_ > kMaxNesting) return Fail(Cur().line, "blocks nest too deeply");
  Body body;
  std::unique_ptr<OutputStmt> output;
  auto flush = [&] {
    if (output) body.push_back(std::move(output));
  };
  auto out = [&]() -> OutputStmt& {
    if (!output) output = std::make_unique<OutputStmt>(Cur().line);
    return *output;
  };
  if (end_tags != nullptr) end_tag_stack_.push_back(*end_tags);
  while (Cur().type != TokenType::kEof) {
    const Token& t = Cur();
    if (t.type == TokenType::kData) {
      out().parts.push_back(OutputPart{t.text, nullptr});
      Next();
    } else if (t.type == TokenType::kVariableBegin) {
      OutputStmt& o = out();
      Next();
      SM_ASSIGN_OR_RETURN(ExprPtr e, ParseTuple(false, true, nullptr, false));
      o.parts.push_back(OutputPart{{}, std::move(e)});
      SM_RETURN_IF_ERROR(Expect(TokenType::kVariableEnd));
    } else if (t.type == TokenType::kBlockBegin) {
      flush();
      Next();
      if (end_tags != nullptr && Cur().type == TokenType::kName &&
          Contains(*end_tags, Cur().text)) {
        end_tag_stack_.pop_back();
        return body;
      }
      SM_ASSIGN_OR_RETURN(StmtPtr stmt, ParseStatement());
      body.push_back(std::move(stmt));
      SM_RETURN_IF_ERROR(Expect(TokenType::kBlockEnd));
    } else {
      return Fail(t.line, "unexpected '" + Describe(t) + "'");
    }
  }
  flush();
  if (end_tags != nullptr) end_tag_stack_.pop_back();
  return body;
}

Result<Body> Parser::ParseStatements(const Tags& end_tags, bool drop_needle) {
  SkipOp(":");
  SM_RETURN_IF_ERROR(Expect(TokenType::kBlockEnd));
  SM_ASSIGN_OR_RETURN(Body body, Subparse(&end_tags));
  if (Cur().type == TokenType::kEof) return FailUnknownTag("", Cur().line, &end_tags);
  if (drop_needle) Next();
  return body;
}

Result<StmtPtr> Parser::ParseStatement() {
  const Token& t = Cur();
  if (t.type != TokenType::kName) return Fail(t.line, "tag name expected");
  const std::string name = t.text;
  const int line = t.line;
  static constexpr std::string_view kUnsupported[] = {"block",  "extends", "include",
                                                      "import", "from",    "autoescape"};
  if (std::find(std::begin(kUnsupported), std::end(kUnsupported), name) != std::end(kUnsupported)) {
    return Fail(line, "the '" + name +
                          "' tag is not supported (chat templates render on their own, without "
                          "a template loader)");
  }
  static constexpr std::string_view kKnown[] = {"for",        "if",     "set",     "macro",
                                                "call",       "filter", "with",    "print",
                                                "generation", "break",  "continue"};
  if (std::find(std::begin(kKnown), std::end(kKnown), name) == std::end(kKnown)) {
    return FailUnknownTag(name, line, nullptr);
  }
  tag_stack_.push_back(name);
  auto parse = [&]() -> Result<StmtPtr> {
    if (name == "for") return ParseFor();
    if (name == "if") return ParseIf();
    if (name == "set") return ParseSet();
    if (name == "macro") return ParseMacro();
    if (name == "call") return ParseCallBlock();
    if (name == "filter") return ParseFilterBlock();
    if (name == "with") return ParseWith();
    if (name == "print") return ParsePrint();
    if (name == "generation") return ParseScopedBody("endgeneration");
    Next();  // break / continue
    return StmtPtr(std::make_unique<SimpleStmt>(
        name == "break" ? StmtKind::kBreak : StmtKind::kContinue, line));
  };
  Result<StmtPtr> result = parse();
  tag_stack_.pop_back();
  return result;
}

Result<StmtPtr> Parser::ParseFor() {
  auto f = std::make_unique<ForStmt>(Cur().line);
  Next();
  const Tags in_end = {"in"};
  SM_ASSIGN_OR_RETURN(f->target, ParseAssignTarget(true, false, &in_end, false));
  SM_RETURN_IF_ERROR(ExpectName("in"));
  const Tags recursive_end = {"recursive"};
  SM_ASSIGN_OR_RETURN(f->iter, ParseTuple(false, false, &recursive_end, false));
  if (SkipName("if")) {
    SM_ASSIGN_OR_RETURN(f->filter, ParseExpression());
  }
  f->recursive = SkipName("recursive");
  SM_ASSIGN_OR_RETURN(f->body, ParseStatements({"endfor", "else"}, false));
  const bool has_else = Cur().text == "else";
  Next();
  if (has_else) {
    SM_ASSIGN_OR_RETURN(f->otherwise, ParseStatements({"endfor"}, true));
  }
  return StmtPtr(std::move(f));
}

Result<StmtPtr> Parser::ParseIf() {
  auto node = std::make_unique<IfStmt>(Cur().line);
  Next();
  while (true) {
    SM_ASSIGN_OR_RETURN(ExprPtr test, ParseTuple(false, false, nullptr, false));
    SM_ASSIGN_OR_RETURN(Body body, ParseStatements({"elif", "else", "endif"}, false));
    node->branches.emplace_back(std::move(test), std::move(body));
    const std::string tag = Cur().text;
    Next();
    if (tag == "elif") continue;
    if (tag == "else") {
      SM_ASSIGN_OR_RETURN(node->otherwise, ParseStatements({"endif"}, true));
    }
    break;
  }
  return StmtPtr(std::move(node));
}

Result<StmtPtr> Parser::ParseSet() {
  const int line = Cur().line;
  Next();
  SM_ASSIGN_OR_RETURN(Target target, ParseAssignTarget(true, false, nullptr, true));
  if (SkipOp("=")) {
    auto s = std::make_unique<SetStmt>(line);
    s->target = std::move(target);
    SM_ASSIGN_OR_RETURN(s->value, ParseTuple(false, true, nullptr, false));
    return StmtPtr(std::move(s));
  }
  auto s = std::make_unique<SetBlockStmt>(line);
  s->target = std::move(target);
  if (IsOp("|")) {
    SM_ASSIGN_OR_RETURN(s->filter, ParseFilter(nullptr, false));
  }
  SM_ASSIGN_OR_RETURN(s->body, ParseStatements({"endset"}, true));
  return StmtPtr(std::move(s));
}

Status Parser::ParseSignature(MacroDef& def) {
  SM_RETURN_IF_ERROR(ExpectOp("("));
  while (!IsOp(")")) {
    if (!def.params.empty()) SM_RETURN_IF_ERROR(ExpectOp(","));
    SM_ASSIGN_OR_RETURN(Target arg, ParseAssignTarget(false, true, nullptr, false));
    if (SkipOp("=")) {
      SM_ASSIGN_OR_RETURN(ExprPtr d, ParseExpression());
      def.defaults.push_back(std::move(d));
    } else if (!def.defaults.empty()) {
      return Fail(Cur().line, "non-default argument follows default argument");
    }
    def.params.push_back(std::move(arg.name));
  }
  return ExpectOp(")");
}

Result<StmtPtr> Parser::ParseMacro() {
  auto m = std::make_unique<MacroStmt>(Cur().line);
  Next();
  SM_ASSIGN_OR_RETURN(Target name, ParseAssignTarget(false, true, nullptr, false));
  m->def.name = std::move(name.name);
  SM_RETURN_IF_ERROR(ParseSignature(m->def));
  SM_ASSIGN_OR_RETURN(m->def.body, ParseStatements({"endmacro"}, true));
  ScanMacroBody(m->def);
  return StmtPtr(std::move(m));
}

Result<StmtPtr> Parser::ParseCallBlock() {
  auto c = std::make_unique<CallBlockStmt>(Cur().line);
  Next();
  if (IsOp("(")) SM_RETURN_IF_ERROR(ParseSignature(c->caller));
  SM_ASSIGN_OR_RETURN(c->call, ParseExpression());
  if (c->call->kind != ExprKind::kCall) return Fail(c->line, "expected call");
  SM_ASSIGN_OR_RETURN(c->caller.body, ParseStatements({"endcall"}, true));
  c->caller.name = "caller";
  ScanMacroBody(c->caller);
  return StmtPtr(std::move(c));
}

Result<StmtPtr> Parser::ParseFilterBlock() {
  auto f = std::make_unique<FilterBlockStmt>(Cur().line);
  Next();
  SM_ASSIGN_OR_RETURN(f->filter, ParseFilter(nullptr, true));
  SM_ASSIGN_OR_RETURN(f->body, ParseStatements({"endfilter"}, true));
  return StmtPtr(std::move(f));
}

Result<StmtPtr> Parser::ParseWith() {
  auto w = std::make_unique<WithStmt>(Cur().line);
  Next();
  while (Cur().type != TokenType::kBlockEnd) {
    if (!w->assignments.empty()) SM_RETURN_IF_ERROR(ExpectOp(","));
    SM_ASSIGN_OR_RETURN(Target target, ParseAssignTarget(true, false, nullptr, false));
    SM_RETURN_IF_ERROR(ExpectOp("="));
    SM_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression());
    w->assignments.emplace_back(std::move(target), std::move(value));
  }
  SM_ASSIGN_OR_RETURN(w->body, ParseStatements({"endwith"}, true));
  return StmtPtr(std::move(w));
}

Result<StmtPtr> Parser::ParsePrint() {
  auto o = std::make_unique<OutputStmt>(Cur().line);
  Next();
  while (Cur().type != TokenType::kBlockEnd) {
    if (!o->parts.empty()) SM_RETURN_IF_ERROR(ExpectOp(","));
    SM_ASSIGN_OR_RETURN(ExprPtr e, ParseExpression());
    o->parts.push_back(OutputPart{{}, std::move(e)});
  }
  return StmtPtr(std::move(o));
}

Result<StmtPtr> Parser::ParseScopedBody(std::string_view end_tag) {
  auto s = std::make_unique<ScopeStmt>(Cur().line);
  Next();
  SM_ASSIGN_OR_RETURN(s->body, ParseStatements({end_tag}, true));
  return StmtPtr(std::move(s));
}

Result<Target> Parser::ParseAssignTarget(bool with_tuple, bool name_only, const Tags* extra_end,
                                         bool with_namespace) {
  const int line = Cur().line;
  if (with_namespace && Cur().type == TokenType::kName && Look().type == TokenType::kOperator &&
      Look().text == ".") {
    Target t;
    t.name = Cur().text;
    Next();
    Next();
    if (Cur().type != TokenType::kName) {
      return Fail(Cur().line, "expected token 'name', got '" + Describe(Cur()) + "'");
    }
    t.attr = Cur().text;
    Next();
    return t;
  }
  if (name_only) {
    if (Cur().type != TokenType::kName) {
      return Fail(line, "expected token 'name', got '" + Describe(Cur()) + "'");
    }
    Target t;
    t.name = Cur().text;
    Next();
    return t;
  }
  ExprPtr e;
  if (with_tuple) {
    SM_ASSIGN_OR_RETURN(e, ParseTuple(true, true, extra_end, false));
  } else {
    SM_ASSIGN_OR_RETURN(e, ParsePrimary());
  }
  return ExprToTarget(*e, line);
}

Result<Target> Parser::ExprToTarget(const Expr& e, int line) {
  Target t;
  if (e.kind == ExprKind::kName) {
    t.name = static_cast<const NameExpr&>(e).name;
    return t;
  }
  if (e.kind == ExprKind::kTuple) {
    t.is_tuple = true;
    for (const ExprPtr& item : static_cast<const SequenceExpr&>(e).items) {
      SM_ASSIGN_OR_RETURN(Target sub, ExprToTarget(*item, line));
      t.items.push_back(std::move(sub));
    }
    return t;
  }
  const char* what = e.kind == ExprKind::kLiteral ? "const" : "expression";
  return Fail(line, std::string("can't assign to '") + what + "'");
}

}  // namespace smallmind::jinja
