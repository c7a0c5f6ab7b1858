// Expression nodes of the Jinja syntax tree (ast.h has the statements): what jinja2's parser
// builds for literals, names, operators, lookups, calls, filters and tests. Built once by the
// parser and only read afterwards, so concurrent renders share them. Immutable after parsing;
// thread-safe to read.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gateway/jinja/value.h"

namespace smallmind::jinja {

enum class ExprKind : uint8_t {
  kLiteral,   // Value: string, number, true/false/none
  kName,      // a variable
  kList,      // [a, b]
  kTuple,     // (a, b) or a, b
  kDict,      // {k: v}
  kGetAttr,   // a.name
  kGetItem,   // a[key]
  kSlice,     // the key of a[start:stop:step]
  kCall,      // f(args)
  kFilter,    // a | name(args)
  kTest,      // a is name(args)
  kUnary,     // -a, +a, not a
  kBinary,    // a + b, a and b, ...
  kConcat,    // a ~ b ~ c
  kCompare,   // a < b <= c, a in b
  kCondExpr,  // a if c else b
};

enum class Op : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,
  kAnd,
  kOr,
  kNeg,
  kPos,
  kNot,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kIn,
  kNotIn,
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  Expr(ExprKind k, int l) : kind(k), line(l) {}
  virtual ~Expr() = default;
  ExprKind kind;
  int line;
  int height = 1;  // of this subtree; the parser bounds it so evaluation cannot overflow the stack
};

struct LiteralExpr : Expr {
  LiteralExpr(Value v, int l) : Expr(ExprKind::kLiteral, l), value(std::move(v)) {}
  Value value;
};

struct NameExpr : Expr {
  NameExpr(std::string n, int l) : Expr(ExprKind::kName, l), name(std::move(n)) {}
  std::string name;
};

// kList and kTuple.
struct SequenceExpr : Expr {
  using Expr::Expr;
  std::vector<ExprPtr> items;
};

struct DictExpr : Expr {
  explicit DictExpr(int l) : Expr(ExprKind::kDict, l) {}
  std::vector<std::pair<ExprPtr, ExprPtr>> items;
};

struct GetAttrExpr : Expr {
  GetAttrExpr(ExprPtr o, std::string a, int l)
      : Expr(ExprKind::kGetAttr, l), object(std::move(o)), attr(std::move(a)) {}
  ExprPtr object;
  std::string attr;
};

struct GetItemExpr : Expr {
  GetItemExpr(ExprPtr o, ExprPtr k, int l)
      : Expr(ExprKind::kGetItem, l), object(std::move(o)), key(std::move(k)) {}
  ExprPtr object;
  ExprPtr key;  // may be a SliceExpr
};

struct SliceExpr : Expr {
  explicit SliceExpr(int l) : Expr(ExprKind::kSlice, l) {}
  ExprPtr start, stop, step;  // each may be null
};

// Arguments of a call, filter or test.
struct CallArgsExpr {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keywords;
  ExprPtr dyn_args;    // *args
  ExprPtr dyn_kwargs;  // **kwargs
};

struct CallExpr : Expr {
  explicit CallExpr(int l) : Expr(ExprKind::kCall, l) {}
  ExprPtr callee;
  CallArgsExpr args;
};

// kFilter and kTest. A filter block's filter has no input (the block body is the input).
struct FilterExpr : Expr {
  using Expr::Expr;
  ExprPtr input;
  std::string name;
  CallArgsExpr args;
};

struct UnaryExpr : Expr {
  UnaryExpr(Op o, ExprPtr e, int l) : Expr(ExprKind::kUnary, l), op(o), operand(std::move(e)) {}
  Op op;
  ExprPtr operand;
};

struct BinaryExpr : Expr {
  BinaryExpr(Op o, ExprPtr a, ExprPtr b, int l)
      : Expr(ExprKind::kBinary, l), op(o), left(std::move(a)), right(std::move(b)) {}
  Op op;
  ExprPtr left, right;
};

struct ConcatExpr : Expr {
  explicit ConcatExpr(int l) : Expr(ExprKind::kConcat, l) {}
  std::vector<ExprPtr> items;
};

struct CompareExpr : Expr {
  explicit CompareExpr(int l) : Expr(ExprKind::kCompare, l) {}
  ExprPtr first;
  std::vector<std::pair<Op, ExprPtr>> rest;
};

struct CondExpr : Expr {
  explicit CondExpr(int l) : Expr(ExprKind::kCondExpr, l) {}
  ExprPtr test, then, otherwise;  // otherwise may be null: undefined
};

}  // namespace smallmind::jinja
