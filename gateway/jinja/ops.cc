#include "gateway/jinja/ops.h"

#include <cmath>
#include <limits>

#include "gateway/jinja/format.h"
#include "gateway/jinja/interpreter.h"

namespace smallmind::jinja {
namespace {

using shared::InvalidArgument;

const char* OpSymbol(Op op) {
  switch (op) {
    case Op::kAdd: return "+";
    case Op::kSub: return "-";
    case Op::kMul: return "*";
    case Op::kDiv: return "/";
    case Op::kFloorDiv: return "//";
    case Op::kMod: return "%";
    case Op::kPow: return "** or pow()";
    case Op::kLt: return "<";
    case Op::kLe: return "<=";
    case Op::kGt: return ">";
    case Op::kGe: return ">=";
    default: return "?";
  }
}

Status Unsupported(Op op, const Value& a, const Value& b) {
  return InvalidArgument(std::string("unsupported operand type(s) for ") + OpSymbol(op) + ": '" +
                         a.TypeName() + "' and '" + b.TypeName() + "'");
}

Status Overflow() {
  return InvalidArgument("integer result does not fit in 64 bits (Python would use a big int)");
}

Result<Value> IntArith(Op op, int64_t x, int64_t y) {
  int64_t r = 0;
  switch (op) {
    case Op::kAdd:
      if (__builtin_add_overflow(x, y, &r)) return Overflow();
      return Value::Int(r);
    case Op::kSub:
      if (__builtin_sub_overflow(x, y, &r)) return Overflow();
      return Value::Int(r);
    case Op::kMul:
      if (__builtin_mul_overflow(x, y, &r)) return Overflow();
      return Value::Int(r);
    case Op::kDiv:
      if (y == 0) return InvalidArgument("division by zero");
      return Value::Float(static_cast<double>(x) / static_cast<double>(y));
    case Op::kFloorDiv:
    case Op::kMod: {
      if (y == 0) return InvalidArgument("integer division or modulo by zero");
      if (x == std::numeric_limits<int64_t>::min() && y == -1) return Overflow();
      int64_t q = x / y;
      int64_t m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {  // Python floors toward -infinity
        --q;
        m += y;
      }
      return Value::Int(op == Op::kFloorDiv ? q : m);
    }
    case Op::kPow: {
      if (y < 0) {
        if (x == 0) return InvalidArgument("0.0 cannot be raised to a negative power");
        return Value::Float(std::pow(static_cast<double>(x), static_cast<double>(y)));
      }
      int64_t result = 1;
      int64_t base = x;
      for (int64_t e = y; e > 0; e >>= 1) {
        if ((e & 1) && __builtin_mul_overflow(result, base, &result)) return Overflow();
        if (e > 1 && __builtin_mul_overflow(base, base, &base)) return Overflow();
      }
      return Value::Int(result);
    }
    default: return InvalidArgument("bad operator");
  }
}

Result<Value> FloatArith(Op op, double x, double y) {
  switch (op) {
    case Op::kAdd: return Value::Float(x + y);
    case Op::kSub: return Value::Float(x - y);
    case Op::kMul: return Value::Float(x * y);
    case Op::kDiv:
      if (y == 0) return InvalidArgument("float division by zero");
      return Value::Float(x / y);
    case Op::kFloorDiv:
      if (y == 0) return InvalidArgument("float floor division by zero");
      return Value::Float(std::floor(x / y));
    case Op::kMod: {
      if (y == 0) return InvalidArgument("float modulo");
      double m = std::fmod(x, y);
      if (m != 0 && ((m < 0) != (y < 0))) m += y;
      if (m == 0) m = std::copysign(0.0, y);
      return Value::Float(m);
    }
    case Op::kPow:
      if (x == 0 && y < 0) return InvalidArgument("0.0 cannot be raised to a negative power");
      if (x < 0 && y != std::floor(y)) {
        return InvalidArgument("a negative number to a fractional power is complex in Python");
      }
      return Value::Float(std::pow(x, y));
    default: return InvalidArgument("bad operator");
  }
}

Result<Value> Repeat(Interpreter& in, const Value& seq, int64_t n) {
  // An empty sequence repeated any number of times is empty: without this, '' * 10**18 passes
  // every size check (0 bytes) and then loops 10**18 times appending nothing.
  const bool empty = seq.is_string() ? seq.str().empty() : seq.list().empty();
  if (n <= 0 || empty)
    return seq.is_string() ? Value::String("") : seq.is_list() ? Value::List({}) : Value::Tuple({});
  if (seq.is_string()) {
    const size_t total = seq.str().size() * static_cast<size_t>(n);
    if (!seq.str().empty() && (total / seq.str().size() != static_cast<size_t>(n))) {
      return in.CheckString(std::numeric_limits<size_t>::max());
    }
    SM_RETURN_IF_ERROR(in.CheckString(total));
    SM_RETURN_IF_ERROR(in.ChargeBytes(total));
    std::string out;
    out.reserve(total);
    for (int64_t i = 0; i < n; ++i) out += seq.str();
    return Value::String(std::move(out), seq.safe());
  }
  const ValueList& items = seq.list();
  const size_t total = items.size() * static_cast<size_t>(n);
  if (!items.empty() && total / items.size() != static_cast<size_t>(n)) {
    return in.CheckItems(std::numeric_limits<size_t>::max());
  }
  SM_RETURN_IF_ERROR(in.CheckItems(total));
  SM_RETURN_IF_ERROR(in.Charge(static_cast<int64_t>(total)));
  ValueList out;
  out.reserve(total);
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
  return seq.is_list() ? Value::List(std::move(out)) : Value::Tuple(std::move(out));
}

Result<Value> AddStrings(Interpreter& in, const Value& a, const Value& b) {
  const size_t total = a.str().size() + b.str().size();
  SM_RETURN_IF_ERROR(in.CheckString(total));
  SM_RETURN_IF_ERROR(in.ChargeBytes(total));
  const bool safe = a.safe() || b.safe();
  std::string out;
  out.reserve(total);
  out += safe && !a.safe() ? HtmlEscape(a.str()) : a.str();
  out += safe && !b.safe() ? HtmlEscape(b.str()) : b.str();
  return Value::String(std::move(out), safe);
}

Result<Value> Add(Interpreter& in, const Value& a, const Value& b) {
  if (a.is_string() && b.is_string()) return AddStrings(in, a, b);
  if (a.is_string()) {
    return InvalidArgument("can only concatenate str (not \"" + b.TypeName() + "\") to str");
  }
  if (a.is_sequence() && a.kind() == b.kind()) {
    const size_t total = a.list().size() + b.list().size();
    SM_RETURN_IF_ERROR(in.CheckItems(total));
    SM_RETURN_IF_ERROR(in.Charge(static_cast<int64_t>(total)));
    ValueList out;
    out.reserve(total);
    out.insert(out.end(), a.list().begin(), a.list().end());
    out.insert(out.end(), b.list().begin(), b.list().end());
    return a.is_list() ? Value::List(std::move(out)) : Value::Tuple(std::move(out));
  }
  if (a.is_sequence()) {
    return InvalidArgument("can only concatenate " + a.TypeName() + " (not \"" + b.TypeName() +
                           "\") to " + a.TypeName());
  }
  return Unsupported(Op::kAdd, a, b);
}

}  // namespace

std::string HtmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

Status UndefinedError(const Value& undefined) {
  const std::string& hint = undefined.undefined_hint();
  return InvalidArgument(hint.empty() ? "value is undefined" : hint);
}

Result<Value> BinaryOp(Interpreter& in, Op op, const Value& a, const Value& b) {
  if (a.is_undefined()) return UndefinedError(a);
  if (b.is_undefined()) return UndefinedError(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return FloatArith(op, a.number(), b.number());
    return IntArith(op, a.integer(), b.integer());
  }
  switch (op) {
    case Op::kAdd: return Add(in, a, b);
    case Op::kMul:
      if ((a.is_string() || a.is_sequence()) && b.is_integral()) return Repeat(in, a, b.integer());
      if ((b.is_string() || b.is_sequence()) && a.is_integral()) return Repeat(in, b, a.integer());
      if ((a.is_string() || a.is_sequence()) && !b.is_sequence() && !b.is_string()) {
        return InvalidArgument("can't multiply sequence by non-int of type '" + b.TypeName() + "'");
      }
      return Unsupported(op, a, b);
    case Op::kMod:
      if (a.is_string()) return PercentFormat(in, a, b);
      return Unsupported(op, a, b);
    default: return Unsupported(op, a, b);
  }
}

Result<Value> UnaryOp(Op op, const Value& v) {
  if (v.is_undefined()) return UndefinedError(v);
  if (v.is_float()) return Value::Float(op == Op::kNeg ? -v.number() : v.number());
  if (v.is_integral()) {
    if (op == Op::kPos) return Value::Int(v.integer());
    if (v.integer() == std::numeric_limits<int64_t>::min()) return Overflow();
    return Value::Int(-v.integer());
  }
  return InvalidArgument(std::string("bad operand type for unary ") + (op == Op::kNeg ? "-" : "+") +
                         ": '" + v.TypeName() + "'");
}

Result<bool> LessThan(const Value& a, const Value& b) {
  if (a.is_undefined()) return UndefinedError(a);
  if (b.is_undefined()) return UndefinedError(b);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.number() < b.number();
    return a.integer() < b.integer();
  }
  if (a.is_string() && b.is_string()) return a.str() < b.str();  // UTF-8 order = code points
  if (a.is_sequence() && a.kind() == b.kind()) {
    const ValueList& x = a.list();
    const ValueList& y = b.list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (Equals(x[i], y[i])) continue;
      return LessThan(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  return InvalidArgument("'<' not supported between instances of '" + a.TypeName() + "' and '" +
                         b.TypeName() + "'");
}

Result<bool> CompareOp(Op op, const Value& a, const Value& b) {
  switch (op) {
    case Op::kEq: return Equals(a, b);
    case Op::kNe: return !Equals(a, b);
    case Op::kIn: return Contains(b, a);
    case Op::kNotIn: {
      SM_ASSIGN_OR_RETURN(bool in, Contains(b, a));
      return !in;
    }
    default: break;
  }
  if (a.is_number() && b.is_number()) {  // direct, so NaN compares false as in Python
    if (a.is_float() || b.is_float()) {
      const double x = a.number(), y = b.number();
      return op == Op::kLt ? x < y : op == Op::kLe ? x <= y : op == Op::kGt ? x > y : x >= y;
    }
    const int64_t x = a.integer(), y = b.integer();
    return op == Op::kLt ? x < y : op == Op::kLe ? x <= y : op == Op::kGt ? x > y : x >= y;
  }
  // Other orderable types are totally ordered: a > b is b < a, a <= b is not b < a.
  auto ordered = [&](const Value& x, const Value& y) -> Result<bool> {
    Result<bool> r = LessThan(x, y);
    if (!r.ok() && !x.is_undefined() && !y.is_undefined()) {
      return InvalidArgument(std::string("'") + OpSymbol(op) +
                             "' not supported between instances of '" + a.TypeName() + "' and '" +
                             b.TypeName() + "'");
    }
    return r;
  };
  switch (op) {
    case Op::kLt: return ordered(a, b);
    case Op::kGt: return ordered(b, a);
    case Op::kLe: {
      SM_ASSIGN_OR_RETURN(bool gt, ordered(b, a));
      return !gt;
    }
    case Op::kGe: {
      SM_ASSIGN_OR_RETURN(bool lt, ordered(a, b));
      return !lt;
    }
    default: return InvalidArgument("bad comparison");
  }
}

Result<bool> Contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Kind::kString:
      if (!item.is_string()) {
        return InvalidArgument("'in <string>' requires string as left operand, not " +
                               item.TypeName());
      }
      return container.str().find(item.str()) != std::string::npos;
    case Kind::kList:
    case Kind::kTuple:
      for (const Value& v : container.list()) {
        if (Equals(v, item)) return true;
      }
      return false;
    case Kind::kDict:
      if (item.is_sequence() && !item.is_tuple()) {
        return InvalidArgument("unhashable type: '" + item.TypeName() + "'");
      }
      if (item.is_dict()) return InvalidArgument("unhashable type: 'dict'");
      return container.dict().Find(item) != nullptr;
    case Kind::kDictView:
      for (const Value& v : container.list()) {
        if (Equals(v, item)) return true;
      }
      return false;
    case Kind::kIterator: {  // consumes up to the match, as Python's `in` does
      IteratorState& it = container.iterator();
      while (it.pos < it.items.size()) {
        if (Equals(it.items[it.pos++], item)) return true;
      }
      return false;
    }
    case Kind::kUndefined: return false;  // iterates as empty
    default:
      return InvalidArgument("argument of type '" + container.TypeName() + "' is not iterable");
  }
}

}  // namespace smallmind::jinja
