// Python's str() and repr() of template values, which is what `{{ x }}` prints: `[1, 'a']`, `True`,
// `None`, floats as `1.0`/`1e-05`, dicts as `{'a': 1}`. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "gateway/jinja/value.h"

namespace smallmind::jinja {

std::string Str(const Value& v);
void AppendStr(std::string& out, const Value& v);
std::string Repr(const Value& v);
void AppendRepr(std::string& out, const Value& v);

// repr of a value found `depth` levels inside another (objects' Repr use it for what they hold).
std::string ReprAt(const Value& v, int depth);

std::string ReprFloat(double d);             // float.__repr__
std::string ReprString(std::string_view s);  // str.__repr__, quotes included

}  // namespace smallmind::jinja
