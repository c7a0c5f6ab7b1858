// The syntax tree of a parsed Jinja template: statements (expressions are in expr.h) as
// jinja2's parser builds them (jinja2/nodes.py), plus walks for analyses. Built once by the parser
// and only read afterwards, so one tree serves any number of concurrent renders. Immutable after
// parsing; thread-safe to read.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gateway/jinja/expr.h"
#include "gateway/jinja/value.h"

namespace smallmind::jinja {

enum class StmtKind : uint8_t {
  kOutput,  // template data and {{ expressions }}
  kIf,
  kFor,
  kSet,       // {% set target = expr %}
  kSetBlock,  // {% set target | filters %}body{% endset %}
  kMacro,
  kCallBlock,
  kFilterBlock,
  kWith,
  kBreak,
  kContinue,
  kScope,  // a body rendered in place ({% generation %})
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Stmt {
  Stmt(StmtKind k, int l) : kind(k), line(l) {}
  virtual ~Stmt() = default;
  StmtKind kind;
  int line;
};

// An element of an Output: literal template text (when `expr` is null) or an expression.
struct OutputPart {
  std::string data;
  ExprPtr expr;
};

struct OutputStmt : Stmt {
  explicit OutputStmt(int l) : Stmt(StmtKind::kOutput, l) {}
  std::vector<OutputPart> parts;
};

struct IfStmt : Stmt {
  explicit IfStmt(int l) : Stmt(StmtKind::kIf, l) {}
  std::vector<std::pair<ExprPtr, Body>> branches;  // if and each elif
  Body otherwise;
};

// Assignment targets: a name, a (nested) tuple of names, or namespace.attr.
struct Target {
  std::string name;           // a name, or the namespace variable
  std::string attr;           // namespace attribute when non-empty
  std::vector<Target> items;  // tuple unpacking when non-empty
  bool is_tuple = false;
};

struct ForStmt : Stmt {
  explicit ForStmt(int l) : Stmt(StmtKind::kFor, l) {}
  Target target;
  ExprPtr iter;
  ExprPtr filter;  // `for x in xs if cond`, may be null
  bool recursive = false;
  Body body;
  Body otherwise;
};

struct SetStmt : Stmt {
  explicit SetStmt(int l) : Stmt(StmtKind::kSet, l) {}
  Target target;
  ExprPtr value;
};

struct SetBlockStmt : Stmt {
  explicit SetBlockStmt(int l) : Stmt(StmtKind::kSetBlock, l) {}
  Target target;
  ExprPtr filter;  // a FilterExpr chain whose innermost input is null, or null
  Body body;
};

// A macro's or call block's signature and body.
struct MacroDef {
  std::string name;
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;  // for the last defaults.size() params
  Body body;
  bool uses_caller = false;   // the body reads `caller`
  bool uses_kwargs = false;   // ... `kwargs`
  bool uses_varargs = false;  // ... `varargs`
};

struct MacroStmt : Stmt {
  explicit MacroStmt(int l) : Stmt(StmtKind::kMacro, l) {}
  MacroDef def;
};

struct CallBlockStmt : Stmt {
  explicit CallBlockStmt(int l) : Stmt(StmtKind::kCallBlock, l) {}
  ExprPtr call;     // a CallExpr
  MacroDef caller;  // the body, callable as caller(...)
};

struct FilterBlockStmt : Stmt {
  explicit FilterBlockStmt(int l) : Stmt(StmtKind::kFilterBlock, l) {}
  ExprPtr filter;  // a FilterExpr chain whose innermost input is null
  Body body;
};

struct WithStmt : Stmt {
  explicit WithStmt(int l) : Stmt(StmtKind::kWith, l) {}
  std::vector<std::pair<Target, ExprPtr>> assignments;
  Body body;
};

struct ScopeStmt : Stmt {
  explicit ScopeStmt(int l) : Stmt(StmtKind::kScope, l) {}
  Body body;
};

struct SimpleStmt : Stmt {  // kBreak, kContinue
  using Stmt::Stmt;
};

// Tree walks for analyses (the parser's macro signature scan, chat content-format detection).
using ExprVisitor = std::function<void(const Expr&)>;
using StmtVisitor = std::function<void(const Stmt&)>;
// Calls `fn` on each direct subexpression of `e`.
void ForEachChild(const Expr& e, const ExprVisitor& fn);
// Calls `fn` on every statement of `body`, nested bodies included (parents first).
void WalkStmts(const Body& body, const StmtVisitor& fn);
// Calls `fn` on every expression in `body`, subexpressions included (parents first).
void WalkExprs(const Body& body, const ExprVisitor& fn);

}  // namespace smallmind::jinja
