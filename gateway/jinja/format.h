// Python string formatting for templates: printf-style `"%s: %d" % (a, b)` (also behind the
// `format` filter) and str.format() with its format-spec mini-language, as jinja2's sandboxed
// formatter allows them (percent_format.cc and format.cc). Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "gateway/jinja/value.h"

namespace smallmind::jinja {

// `fmt % args`: a tuple supplies positional values, a dict named ones (%(name)s), anything else
// is the single value.
Result<Value> PercentFormat(Interpreter& in, const Value& fmt, const Value& args);

// fmt.format(*args, **kwargs).
Result<Value> StrFormat(Interpreter& in, const std::string& fmt, CallArgs args);

// format(value, spec) for str, int, float, bool and None.
Result<std::string> FormatWithSpec(const Value& v, std::string_view spec);

}  // namespace smallmind::jinja
