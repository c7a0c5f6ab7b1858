// Binds call arguments to a Python-style signature for the builtin filters, tests, methods and
// globals: positionals fill parameters in order, keywords by name, with Python's TypeError texts
// for too many, unknown, duplicated or missing arguments. Pure functions; thread-safe.
#pragma once

#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "gateway/jinja/value.h"

namespace smallmind::jinja {

using BoundArgs = std::vector<std::optional<Value>>;

// One slot per name in `params`; the first `required` must be given.
Result<BoundArgs> BindArgs(std::string_view function, CallArgs args,
                           std::initializer_list<std::string_view> params, size_t required = 0);

// Python's operator.index(): ints and bools, else "'str' object cannot be interpreted as an
// integer".
Result<int64_t> ToIndex(const Value& v);

// The slot's value, or `fallback` when the argument was not given.
inline Value Or(const std::optional<Value>& slot, Value fallback) {
  return slot ? *slot : std::move(fallback);
}

}  // namespace smallmind::jinja
