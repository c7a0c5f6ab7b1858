// Expression half of the Interpreter (see interpreter.h).
#include "gateway/jinja/access.h"
#include "gateway/jinja/filters.h"
#include "gateway/jinja/globals.h"
#include "gateway/jinja/interpreter.h"
#include "gateway/jinja/ops.h"
#include "gateway/jinja/repr.h"
#include "gateway/jinja/tests.h"

namespace smallmind::jinja {
namespace {

using shared::InvalidArgument;

}  // namespace

Result<Value> Interpreter::Eval(const Expr& e, Frame& frame) {
  line_ = e.line;
  SM_RETURN_IF_ERROR(Charge(1));
  SM_RETURN_IF_ERROR(CheckStack());
  switch (e.kind) {
    case ExprKind::kLiteral: return static_cast<const LiteralExpr&>(e).value;
    case ExprKind::kName: return EvalName(static_cast<const NameExpr&>(e), frame);
    case ExprKind::kList:
    case ExprKind::kTuple: return EvalSequence(static_cast<const SequenceExpr&>(e), frame);
    case ExprKind::kDict: return EvalDict(static_cast<const DictExpr&>(e), frame);
    case ExprKind::kGetAttr: {
      const auto& g = static_cast<const GetAttrExpr&>(e);
      SM_ASSIGN_OR_RETURN(Value obj, Eval(*g.object, frame));
      line_ = e.line;
      return GetAttr(obj, g.attr);
    }
    case ExprKind::kGetItem: return EvalGetItem(static_cast<const GetItemExpr&>(e), frame);
    case ExprKind::kSlice: return InvalidArgument("a slice can only be used in a subscript");
    case ExprKind::kCall: return EvalCall(static_cast<const CallExpr&>(e), frame);
    case ExprKind::kFilter: return EvalFilter(static_cast<const FilterExpr&>(e), frame, nullptr);
    case ExprKind::kTest: return EvalTest(static_cast<const FilterExpr&>(e), frame);
    case ExprKind::kUnary: {
      const auto& u = static_cast<const UnaryExpr&>(e);
      SM_ASSIGN_OR_RETURN(Value v, Eval(*u.operand, frame));
      if (u.op == Op::kNot) return Value::Bool(!v.Truthy());
      line_ = e.line;
      return UnaryOp(u.op, v);
    }
    case ExprKind::kBinary: return EvalBinary(static_cast<const BinaryExpr&>(e), frame);
    case ExprKind::kConcat: {
      std::string out;
      for (const ExprPtr& item : static_cast<const ConcatExpr&>(e).items) {
        SM_ASSIGN_OR_RETURN(Value v, Eval(*item, frame));
        AppendStr(out, v);
        SM_RETURN_IF_ERROR(CheckString(out.size()));
      }
      SM_RETURN_IF_ERROR(ChargeBytes(out.size()));
      return Value::String(std::move(out));
    }
    case ExprKind::kCompare: return EvalCompare(static_cast<const CompareExpr&>(e), frame);
    case ExprKind::kCondExpr: {
      const auto& c = static_cast<const CondExpr&>(e);
      SM_ASSIGN_OR_RETURN(Value test, Eval(*c.test, frame));
      if (test.Truthy()) return Eval(*c.then, frame);
      if (c.otherwise) return Eval(*c.otherwise, frame);
      return Value::Undefined("the inline if-expression on line " + std::to_string(e.line) +
                              " evaluated to false and no else section was defined.");
    }
  }
  return InvalidArgument("unknown expression");
}

Result<Value> Interpreter::EvalName(const NameExpr& e, Frame& frame) {
  if (const Value* v = frame.Lookup(e.name)) return *v;
  if (globals_ != nullptr) {
    if (const Value* v = globals_->Lookup(e.name)) return *v;
  }
  Value builtin = LookupBuiltinGlobal(e.name);
  if (!builtin.is_undefined()) return builtin;
  return Value::Undefined("'" + e.name + "' is undefined");
}

Result<Value> Interpreter::EvalSequence(const SequenceExpr& e, Frame& frame) {
  ValueList items;
  items.reserve(e.items.size());
  for (const ExprPtr& item : e.items) {
    SM_ASSIGN_OR_RETURN(Value v, Eval(*item, frame));
    items.push_back(std::move(v));
  }
  return e.kind == ExprKind::kList ? Value::List(std::move(items)) : Value::Tuple(std::move(items));
}

Result<Value> Interpreter::EvalDict(const DictExpr& e, Frame& frame) {
  Dict d;
  for (const auto& [key_expr, value_expr] : e.items) {
    SM_ASSIGN_OR_RETURN(Value key, Eval(*key_expr, frame));
    SM_ASSIGN_OR_RETURN(Value value, Eval(*value_expr, frame));
    if (key.is_list() || key.is_dict() || key.is_view()) {
      return InvalidArgument("unhashable type: '" + key.TypeName() + "'");
    }
    d.Set(std::move(key), std::move(value));
  }
  return Value::FromDict(std::move(d));
}

Result<Value> Interpreter::EvalGetItem(const GetItemExpr& e, Frame& frame) {
  SM_ASSIGN_OR_RETURN(Value obj, Eval(*e.object, frame));
  if (e.key->kind == ExprKind::kSlice) {
    const auto& s = static_cast<const SliceExpr&>(*e.key);
    Value parts[3] = {Value::None(), Value::None(), Value::None()};
    const ExprPtr* exprs[3] = {&s.start, &s.stop, &s.step};
    for (int i = 0; i < 3; ++i) {
      if (*exprs[i]) {
        SM_ASSIGN_OR_RETURN(parts[i], Eval(**exprs[i], frame));
      }
    }
    line_ = e.line;
    SM_ASSIGN_OR_RETURN(Value v, GetSlice(obj, parts[0], parts[1], parts[2]));
    if (v.is_string()) SM_RETURN_IF_ERROR(ChargeBytes(v.str().size()));
    if (v.is_sequence()) SM_RETURN_IF_ERROR(Charge(static_cast<int64_t>(v.list().size())));
    return v;
  }
  SM_ASSIGN_OR_RETURN(Value key, Eval(*e.key, frame));
  line_ = e.line;
  if (obj.is_string() && key.is_integral()) SM_RETURN_IF_ERROR(ChargeBytes(obj.str().size()));
  return GetItem(obj, key);
}

Result<CallArgs> Interpreter::EvalArgs(const CallArgsExpr& a, Frame& frame) {
  CallArgs args;
  for (const ExprPtr& p : a.positional) {
    SM_ASSIGN_OR_RETURN(Value v, Eval(*p, frame));
    args.positional.push_back(std::move(v));
  }
  for (const auto& [name, expr] : a.keywords) {
    SM_ASSIGN_OR_RETURN(Value v, Eval(*expr, frame));
    args.keywords.emplace_back(name, std::move(v));
  }
  if (a.dyn_args) {
    SM_ASSIGN_OR_RETURN(Value v, Eval(*a.dyn_args, frame));
    SM_ASSIGN_OR_RETURN(ValueList extra, Iterate(v));
    for (Value& x : extra) args.positional.push_back(std::move(x));
  }
  if (a.dyn_kwargs) {
    SM_ASSIGN_OR_RETURN(Value v, Eval(*a.dyn_kwargs, frame));
    if (!v.is_dict())
      return InvalidArgument("argument after ** must be a mapping, not " + v.TypeName());
    for (const auto& [key, value] : v.dict().entries()) {
      if (!key.is_string()) return InvalidArgument("keywords must be strings");
      args.keywords.emplace_back(key.str(), value);
    }
  }
  return args;
}

Result<Value> Interpreter::EvalCall(const CallExpr& e, Frame& frame) {
  SM_ASSIGN_OR_RETURN(Value callee, Eval(*e.callee, frame));
  SM_ASSIGN_OR_RETURN(CallArgs args, EvalArgs(e.args, frame));
  line_ = e.line;
  return Call(callee, std::move(args));
}

Result<Value> Interpreter::Call(const Value& callee, CallArgs args) {
  switch (callee.kind()) {
    case Kind::kCallable: return callee.callable().Call(*this, std::move(args));
    case Kind::kObject: return callee.object().CallObject(*this, std::move(args));
    case Kind::kUndefined: return UndefinedError(callee);
    default: return InvalidArgument("'" + callee.TypeName() + "' object is not callable");
  }
}

Result<Value> Interpreter::EvalFilter(const FilterExpr& e, Frame& frame, Value* block_input) {
  Value input;
  if (!e.input) {
    input = *block_input;
  } else if (block_input != nullptr && e.input->kind == ExprKind::kFilter) {
    SM_ASSIGN_OR_RETURN(input,
                        EvalFilter(static_cast<const FilterExpr&>(*e.input), frame, block_input));
  } else {
    SM_ASSIGN_OR_RETURN(input, Eval(*e.input, frame));
  }
  SM_ASSIGN_OR_RETURN(CallArgs args, EvalArgs(e.args, frame));
  line_ = e.line;
  return CallFilter(e.name, std::move(input), std::move(args));
}

Result<Value> Interpreter::CallFilter(std::string_view name, Value input, CallArgs args) {
  const FilterFn fn = FindFilter(name);
  if (fn == nullptr) return InvalidArgument("No filter named '" + std::string(name) + "'.");
  if (input.is_string()) SM_RETURN_IF_ERROR(ChargeBytes(input.str().size()));
  return fn(*this, input, std::move(args));
}

Result<Value> Interpreter::EvalTest(const FilterExpr& e, Frame& frame) {
  SM_ASSIGN_OR_RETURN(Value input, Eval(*e.input, frame));
  SM_ASSIGN_OR_RETURN(CallArgs args, EvalArgs(e.args, frame));
  line_ = e.line;
  SM_ASSIGN_OR_RETURN(bool r, CallTest(e.name, input, std::move(args)));
  return Value::Bool(r);
}

Result<bool> Interpreter::CallTest(std::string_view name, const Value& input, CallArgs args) {
  const TestFn fn = FindTest(name);
  if (fn == nullptr) return InvalidArgument("No test named '" + std::string(name) + "'.");
  return fn(*this, input, std::move(args));
}

Result<Value> Interpreter::EvalBinary(const BinaryExpr& e, Frame& frame) {
  SM_ASSIGN_OR_RETURN(Value left, Eval(*e.left, frame));
  if (e.op == Op::kAnd) return left.Truthy() ? Eval(*e.right, frame) : left;
  if (e.op == Op::kOr) return left.Truthy() ? left : Eval(*e.right, frame);
  SM_ASSIGN_OR_RETURN(Value right, Eval(*e.right, frame));
  line_ = e.line;
  return BinaryOp(*this, e.op, left, right);
}

Result<Value> Interpreter::EvalCompare(const CompareExpr& e, Frame& frame) {
  SM_ASSIGN_OR_RETURN(Value left, Eval(*e.first, frame));
  for (const auto& [op, expr] : e.rest) {
    SM_ASSIGN_OR_RETURN(Value right, Eval(*expr, frame));
    line_ = e.line;
    SM_ASSIGN_OR_RETURN(bool r, CompareOp(op, left, right));
    if (!r) return Value::Bool(false);
    left = std::move(right);
  }
  return Value::Bool(true);
}

}  // namespace smallmind::jinja
