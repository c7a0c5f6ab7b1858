#include "gateway/jinja/tests.h"

#include "gateway/jinja/args.h"
#include "gateway/jinja/filters.h"
#include "gateway/jinja/interpreter.h"
#include "gateway/jinja/methods.h"
#include "gateway/jinja/ops.h"
#include "gateway/jinja/repr.h"

namespace smallmind::jinja {
namespace {

using shared::InvalidArgument;

// Tests of the value alone.
template <bool (*Pred)(const Value&)>
Result<bool> Unary(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("test", std::move(args), {}));
  return Pred(v);
}

bool Defined(const Value& v) { return !v.is_undefined(); }
bool IsUndefined(const Value& v) { return v.is_undefined(); }
bool IsNone(const Value& v) { return v.is_none(); }
bool Boolean(const Value& v) { return v.is_bool(); }
bool True(const Value& v) { return v.is_bool() && v.boolean(); }
bool False(const Value& v) { return v.is_bool() && !v.boolean(); }
bool Integer(const Value& v) { return v.is_int(); }
bool IsFloat(const Value& v) { return v.is_float(); }
bool Number(const Value& v) { return v.is_number(); }
bool String(const Value& v) { return v.is_string(); }
bool Mapping(const Value& v) { return v.is_dict(); }
bool Escaped(const Value& v) { return v.is_string() && v.safe(); }
// Python callable(): functions and macros; an Undefined defines __call__ (to raise), and so does
// the loop object.
bool IsCallable(const Value& v) {
  return v.is_callable() || v.is_undefined() ||
         (v.is_object() && v.object().TypeName() == "LoopContext");
}
// len(value) and value.__getitem__ both work.
bool Sequence(const Value& v) {
  return v.is_string() || v.is_sequence() || v.is_dict() || v.is_undefined();
}
bool Iterable(const Value& v) {
  return v.is_string() || v.is_sequence() || v.is_dict() || v.is_undefined() || v.is_iterator() ||
         v.is_view();
}

Result<bool> Lower(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("lower", std::move(args), {}));
  SM_ASSIGN_OR_RETURN(Value r, in.Call(BindMethod(Value::String(Str(v)), "islower"), {}));
  return r.boolean();
}

Result<bool> Upper(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("upper", std::move(args), {}));
  SM_ASSIGN_OR_RETURN(Value r, in.Call(BindMethod(Value::String(Str(v)), "isupper"), {}));
  return r.boolean();
}

// value % 2 == 1 / == 0, value % num == 0, with Python's % (so floats work and strings format).
Result<bool> Modulo(Interpreter& in, const Value& v, const Value& by, int64_t want) {
  SM_ASSIGN_OR_RETURN(Value r, BinaryOp(in, Op::kMod, v, by));
  return Equals(r, Value::Int(want));
}

Result<bool> Odd(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("odd", std::move(args), {}));
  return Modulo(in, v, Value::Int(2), 1);
}

Result<bool> Even(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("even", std::move(args), {}));
  return Modulo(in, v, Value::Int(2), 0);
}

Result<bool> DivisibleBy(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("divisibleby", std::move(args), {"num"}, 1));
  return Modulo(in, v, *a[0], 0);
}

Result<bool> SameAs(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("sameas", std::move(args), {"other"}, 1));
  return v.SameAs(*a[0]);
}

Result<bool> In(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("in", std::move(args), {"seq"}, 1));
  return Contains(*a[0], v);
}

template <Op kOp>
Result<bool> Compare(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("compare", std::move(args), {"other"}, 1));
  return CompareOp(kOp, v, *a[0]);
}

Result<bool> IsFilter(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("filter", std::move(args), {}));
  return v.is_string() && FindFilter(v.str()) != nullptr;
}

Result<bool> IsTest(Interpreter&, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("test", std::move(args), {}));
  return v.is_string() && FindTest(v.str()) != nullptr;
}

}  // namespace

TestFn FindTest(std::string_view name) {
  static const struct {
    std::string_view name;
    TestFn fn;
  } kTests[] = {
      {"defined", Unary<Defined>},
      {"undefined", Unary<IsUndefined>},
      {"none", Unary<IsNone>},
      {"boolean", Unary<Boolean>},
      {"true", Unary<True>},
      {"false", Unary<False>},
      {"integer", Unary<Integer>},
      {"float", Unary<IsFloat>},
      {"number", Unary<Number>},
      {"string", Unary<String>},
      {"mapping", Unary<Mapping>},
      {"sequence", Unary<Sequence>},
      {"iterable", Unary<Iterable>},
      {"callable", Unary<IsCallable>},
      {"escaped", Unary<Escaped>},
      {"lower", Lower},
      {"upper", Upper},
      {"odd", Odd},
      {"even", Even},
      {"divisibleby", DivisibleBy},
      {"sameas", SameAs},
      {"in", In},
      {"filter", IsFilter},
      {"test", IsTest},
      {"==", Compare<Op::kEq>},
      {"eq", Compare<Op::kEq>},
      {"equalto", Compare<Op::kEq>},
      {"!=", Compare<Op::kNe>},
      {"ne", Compare<Op::kNe>},
      {">", Compare<Op::kGt>},
      {"gt", Compare<Op::kGt>},
      {"greaterthan", Compare<Op::kGt>},
      {">=", Compare<Op::kGe>},
      {"ge", Compare<Op::kGe>},
      {"<", Compare<Op::kLt>},
      {"lt", Compare<Op::kLt>},
      {"lessthan", Compare<Op::kLt>},
      {"<=", Compare<Op::kLe>},
      {"le", Compare<Op::kLe>},
  };
  for (const auto& t : kTests) {
    if (t.name == name) return t.fn;
  }
  return nullptr;
}

}  // namespace smallmind::jinja
