// jinja2's builtin tests (`x is defined`, `x is equalto y`, ...) with their Python semantics:
// `undefined is sequence` is true, `true is number` is true, `1.0 is integer` is false. Stateless
// lookups; thread-safe.
#pragma once

#include <string_view>

#include "gateway/jinja/value.h"

namespace smallmind::jinja {

using TestFn = Result<bool> (*)(Interpreter& in, const Value& input, CallArgs args);

// The test called `name`, or nullptr.
TestFn FindTest(std::string_view name);

}  // namespace smallmind::jinja
