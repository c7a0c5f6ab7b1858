#include "gateway/jinja/template.h"

#include "gateway/jinja/filters.h"
#include "gateway/jinja/parser.h"
#include "gateway/jinja/tests.h"

namespace smallmind::jinja {
namespace {

using shared::InvalidArgument;

Status Fail(int line, const std::string& message) {
  return InvalidArgument("line " + std::to_string(line) + ": " + message);
}

// jinja2 rejects an unknown filter or test when it compiles, except inside an `if` or an inline
// if-expression (a "soft" frame), where the error waits until the filter actually runs.
Status CheckExpr(const Expr& e, bool soft) {
  if (e.kind == ExprKind::kFilter || e.kind == ExprKind::kTest) {
    const auto& f = static_cast<const FilterExpr&>(e);
    const bool known =
        e.kind == ExprKind::kFilter ? FindFilter(f.name) != nullptr : FindTest(f.name) != nullptr;
    if (!known && !soft) {
      return Fail(e.line, std::string("No ") + (e.kind == ExprKind::kFilter ? "filter" : "test") +
                              " named '" + f.name + "'.");
    }
  }
  const bool child_soft = soft || e.kind == ExprKind::kCondExpr;
  Status status;
  ForEachChild(e, [&](const Expr& child) {
    if (status.ok()) status = CheckExpr(child, child_soft);
  });
  return status;
}

Status CheckOptional(const ExprPtr& e, bool soft) { return e ? CheckExpr(*e, soft) : Status::Ok(); }

Status CheckBody(const Body& body, bool soft, bool in_loop);

Status CheckMacro(const MacroDef& def) {
  for (const ExprPtr& d : def.defaults) SM_RETURN_IF_ERROR(CheckExpr(*d, false));
  return CheckBody(def.body, false, false);
}

Status CheckStmt(const Stmt& s, bool soft, bool in_loop) {
  switch (s.kind) {
    case StmtKind::kOutput:
      for (const OutputPart& p : static_cast<const OutputStmt&>(s).parts) {
        SM_RETURN_IF_ERROR(CheckOptional(p.expr, soft));
      }
      return Status::Ok();
    case StmtKind::kIf: {
      const auto& i = static_cast<const IfStmt&>(s);
      for (const auto& [test, body] : i.branches) {
        SM_RETURN_IF_ERROR(CheckExpr(*test, true));
        SM_RETURN_IF_ERROR(CheckBody(body, true, in_loop));
      }
      return CheckBody(i.otherwise, true, in_loop);
    }
    case StmtKind::kFor: {
      const auto& f = static_cast<const ForStmt&>(s);
      SM_RETURN_IF_ERROR(CheckExpr(*f.iter, soft));
      SM_RETURN_IF_ERROR(CheckOptional(f.filter, false));
      SM_RETURN_IF_ERROR(CheckBody(f.body, false, true));
      return CheckBody(f.otherwise, false, in_loop);
    }
    case StmtKind::kSet: return CheckExpr(*static_cast<const SetStmt&>(s).value, soft);
    case StmtKind::kSetBlock: {
      const auto& b = static_cast<const SetBlockStmt&>(s);
      SM_RETURN_IF_ERROR(CheckOptional(b.filter, false));
      return CheckBody(b.body, false, in_loop);
    }
    case StmtKind::kMacro: return CheckMacro(static_cast<const MacroStmt&>(s).def);
    case StmtKind::kCallBlock: {
      const auto& c = static_cast<const CallBlockStmt&>(s);
      SM_RETURN_IF_ERROR(CheckExpr(*c.call, soft));
      return CheckMacro(c.caller);
    }
    case StmtKind::kFilterBlock: {
      const auto& b = static_cast<const FilterBlockStmt&>(s);
      SM_RETURN_IF_ERROR(CheckExpr(*b.filter, false));
      return CheckBody(b.body, false, in_loop);
    }
    case StmtKind::kWith: {
      const auto& w = static_cast<const WithStmt&>(s);
      for (const auto& a : w.assignments) SM_RETURN_IF_ERROR(CheckExpr(*a.second, soft));
      return CheckBody(w.body, false, in_loop);
    }
    case StmtKind::kBreak:
    case StmtKind::kContinue:
      if (!in_loop) {
        return Fail(s.line, std::string("'") + (s.kind == StmtKind::kBreak ? "break" : "continue") +
                                "' outside loop");
      }
      return Status::Ok();
    case StmtKind::kScope: return CheckBody(static_cast<const ScopeStmt&>(s).body, false, false);
  }
  return Status::Ok();
}

Status CheckBody(const Body& body, bool soft, bool in_loop) {
  for (const StmtPtr& s : body) SM_RETURN_IF_ERROR(CheckStmt(*s, soft, in_loop));
  return Status::Ok();
}

}  // namespace

Result<Template> Template::Parse(std::string_view source) {
  SM_ASSIGN_OR_RETURN(Body body, ParseTemplate(source));
  SM_RETURN_IF_ERROR(CheckBody(body, false, false));
  return Template(std::make_shared<const Body>(std::move(body)));
}

Result<std::string> Template::Render(const Variables& variables, const Frame* globals,
                                     const RenderLimits& limits,
                                     std::string_view error_prefix) const {
  auto root = std::make_shared<Frame>();
  for (const auto& [name, value] : variables) root->Set(name, value);
  Interpreter interpreter(limits, globals, error_prefix);
  return interpreter.Render(*body_, root);
}

}  // namespace smallmind::jinja
