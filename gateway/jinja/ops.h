// Python's operators on template values: arithmetic (int overflow is an error, where Python would
// grow a big int), comparisons, `in`, and markupsafe's escaping `+` on Markup strings. Errors carry
// Python's own TypeError/ZeroDivisionError texts. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "gateway/jinja/ast.h"
#include "gateway/jinja/value.h"

namespace smallmind::jinja {

class Interpreter;

// + - * / // % ** for Op::kAdd .. Op::kPow; `%` on a string is printf-style formatting.
Result<Value> BinaryOp(Interpreter& in, Op op, const Value& a, const Value& b);
// Unary - and +.
Result<Value> UnaryOp(Op op, const Value& v);
// == != < <= > >= in, not in.
Result<bool> CompareOp(Op op, const Value& a, const Value& b);
Result<bool> Contains(const Value& container, const Value& item);
// Python's a < b for sortable values (numbers, strings, sequences of them).
Result<bool> LessThan(const Value& a, const Value& b);

// The UndefinedError (or SecurityError) using an undefined value raises.
Status UndefinedError(const Value& undefined);

// markupsafe.escape of a string: & < > " ' as HTML entities.
std::string HtmlEscape(std::string_view s);

}  // namespace smallmind::jinja
