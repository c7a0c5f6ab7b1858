// Python methods that templates call on values: str (strip, split, startswith, replace, format,
// ...; in str_methods.cc), dict (get, items, keys, values, copy) and list/tuple (count,
// index, copy; list.pop and list.clear, which jinja2's ImmutableSandboxedEnvironment still allows).
// Mutators the sandbox forbids (list.append, dict.update, ...) are reported as unsafe. Pure
// dispatch; thread-safe (a list's pop/clear changes that render's own list).
#pragma once

#include <string_view>

#include "gateway/jinja/value.h"

namespace smallmind::jinja {

enum class MethodKind : uint8_t { kNone, kSafe, kUnsafe };

MethodKind LookupMethod(const Value& self, std::string_view name);
// A callable value for `self.name` (a bound method).
Value BindMethod(const Value& self, std::string_view name);
Result<Value> CallMethod(Interpreter& in, const Value& self, std::string_view name, CallArgs args);

// The str half (str_methods.cc).
bool IsStrMethod(std::string_view name);
Result<Value> CallStrMethod(Interpreter& in, const Value& self, std::string_view name,
                            CallArgs args);

}  // namespace smallmind::jinja
