#include "gateway/jinja/ast.h"

namespace smallmind::jinja {
namespace {

void EachArg(const CallArgsExpr& a, const ExprVisitor& fn) {
  for (const ExprPtr& p : a.positional) fn(*p);
  for (const auto& kw : a.keywords) fn(*kw.second);
  if (a.dyn_args) fn(*a.dyn_args);
  if (a.dyn_kwargs) fn(*a.dyn_kwargs);
}

void EachIf(const ExprPtr& e, const ExprVisitor& fn) {
  if (e) fn(*e);
}

// ForEachChild's steps, one per kind of expression with more than one child.
void EachDictChild(const DictExpr& d, const ExprVisitor& fn) {
  for (const auto& [k, v] : d.items) {
    fn(*k);
    fn(*v);
  }
}

void EachGetItemChild(const GetItemExpr& g, const ExprVisitor& fn) {
  fn(*g.object);
  fn(*g.key);
}

void EachSliceChild(const SliceExpr& s, const ExprVisitor& fn) {
  EachIf(s.start, fn);
  EachIf(s.stop, fn);
  EachIf(s.step, fn);
}

void EachCallChild(const CallExpr& c, const ExprVisitor& fn) {
  fn(*c.callee);
  EachArg(c.args, fn);
}

void EachFilterChild(const FilterExpr& f, const ExprVisitor& fn) {
  EachIf(f.input, fn);
  EachArg(f.args, fn);
}

void EachBinaryChild(const BinaryExpr& b, const ExprVisitor& fn) {
  fn(*b.left);
  fn(*b.right);
}

void EachCompareChild(const CompareExpr& c, const ExprVisitor& fn) {
  fn(*c.first);
  for (const auto& r : c.rest) fn(*r.second);
}

void EachCondChild(const CondExpr& c, const ExprVisitor& fn) {
  fn(*c.test);
  fn(*c.then);
  EachIf(c.otherwise, fn);
}

// Calls `fn` on each expression held directly by `s` (not those of nested statements).
void EachStmtExpr(const Stmt& s, const ExprVisitor& fn) {
  switch (s.kind) {
    case StmtKind::kOutput:
      for (const OutputPart& p : static_cast<const OutputStmt&>(s).parts) EachIf(p.expr, fn);
      return;
    case StmtKind::kIf:
      for (const auto& branch : static_cast<const IfStmt&>(s).branches) fn(*branch.first);
      return;
    case StmtKind::kFor: {
      const auto& f = static_cast<const ForStmt&>(s);
      fn(*f.iter);
      EachIf(f.filter, fn);
      return;
    }
    case StmtKind::kSet: fn(*static_cast<const SetStmt&>(s).value); return;
    case StmtKind::kSetBlock: EachIf(static_cast<const SetBlockStmt&>(s).filter, fn); return;
    case StmtKind::kMacro:
      for (const ExprPtr& d : static_cast<const MacroStmt&>(s).def.defaults) fn(*d);
      return;
    case StmtKind::kCallBlock: {
      const auto& c = static_cast<const CallBlockStmt&>(s);
      fn(*c.call);
      for (const ExprPtr& d : c.caller.defaults) fn(*d);
      return;
    }
    case StmtKind::kFilterBlock: fn(*static_cast<const FilterBlockStmt&>(s).filter); return;
    case StmtKind::kWith:
      for (const auto& a : static_cast<const WithStmt&>(s).assignments) fn(*a.second);
      return;
    default: return;
  }
}

void WalkExpr(const Expr& e, const ExprVisitor& fn) {
  fn(e);
  ForEachChild(e, [&](const Expr& child) { WalkExpr(child, fn); });
}

}  // namespace

void ForEachChild(const Expr& e, const ExprVisitor& fn) {
  switch (e.kind) {
    case ExprKind::kLiteral:
    case ExprKind::kName: return;
    case ExprKind::kList:
    case ExprKind::kTuple:
      for (const ExprPtr& i : static_cast<const SequenceExpr&>(e).items) fn(*i);
      return;
    case ExprKind::kDict: return EachDictChild(static_cast<const DictExpr&>(e), fn);
    case ExprKind::kGetAttr: fn(*static_cast<const GetAttrExpr&>(e).object); return;
    case ExprKind::kGetItem: return EachGetItemChild(static_cast<const GetItemExpr&>(e), fn);
    case ExprKind::kSlice: return EachSliceChild(static_cast<const SliceExpr&>(e), fn);
    case ExprKind::kCall: return EachCallChild(static_cast<const CallExpr&>(e), fn);
    case ExprKind::kFilter:
    case ExprKind::kTest: return EachFilterChild(static_cast<const FilterExpr&>(e), fn);
    case ExprKind::kUnary: fn(*static_cast<const UnaryExpr&>(e).operand); return;
    case ExprKind::kBinary: return EachBinaryChild(static_cast<const BinaryExpr&>(e), fn);
    case ExprKind::kConcat:
      for (const ExprPtr& i : static_cast<const ConcatExpr&>(e).items) fn(*i);
      return;
    case ExprKind::kCompare: return EachCompareChild(static_cast<const CompareExpr&>(e), fn);
    case ExprKind::kCondExpr: return EachCondChild(static_cast<const CondExpr&>(e), fn);
  }
}

void WalkStmts(const Body& body, const StmtVisitor& fn) {
  for (const StmtPtr& s : body) {
    fn(*s);
    switch (s->kind) {
      case StmtKind::kIf: {
        const auto& i = static_cast<const IfStmt&>(*s);
        for (const auto& branch : i.branches) WalkStmts(branch.second, fn);
        WalkStmts(i.otherwise, fn);
        break;
      }
      case StmtKind::kFor: {
        const auto& f = static_cast<const ForStmt&>(*s);
        WalkStmts(f.body, fn);
        WalkStmts(f.otherwise, fn);
        break;
      }
      case StmtKind::kSetBlock: WalkStmts(static_cast<const SetBlockStmt&>(*s).body, fn); break;
      case StmtKind::kMacro: WalkStmts(static_cast<const MacroStmt&>(*s).def.body, fn); break;
      case StmtKind::kCallBlock:
        WalkStmts(static_cast<const CallBlockStmt&>(*s).caller.body, fn);
        break;
      case StmtKind::kFilterBlock:
        WalkStmts(static_cast<const FilterBlockStmt&>(*s).body, fn);
        break;
      case StmtKind::kWith: WalkStmts(static_cast<const WithStmt&>(*s).body, fn); break;
      case StmtKind::kScope: WalkStmts(static_cast<const ScopeStmt&>(*s).body, fn); break;
      default: break;
    }
  }
}

void WalkExprs(const Body& body, const ExprVisitor& fn) {
  WalkStmts(body, [&](const Stmt& s) { EachStmtExpr(s, [&](const Expr& e) { WalkExpr(e, fn); }); });
}

}  // namespace smallmind::jinja
