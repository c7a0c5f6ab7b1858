// The object protocol as jinja2's sandbox applies it: `a.b` prefers the attribute (a method such as
// dict.items) and falls back to the item, `a[b]` the other way round; misses give an Undefined that
// remembers why ("'dict object' has no attribute 'x'"), mutating methods give a SecurityError
// Undefined, and misusing an Undefined is an error. Also len(), iteration and slicing on code
// points. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gateway/jinja/value.h"

namespace smallmind::jinja {

Result<Value> GetAttr(const Value& obj, std::string_view name);
Result<Value> GetItem(const Value& obj, const Value& key);
// obj[start:stop:step] with None for an absent bound; a bound that is not an int (or None) makes
// the result undefined, as jinja2's getitem turns Python's TypeError into an Undefined.
Result<Value> GetSlice(const Value& obj, const Value& start, const Value& stop, const Value& step);

// getattr() without the item fallback (the `attr` filter).
Result<Value> GetAttrOnly(const Value& obj, std::string_view name);

// jinja2's make_attrgetter: follows "a.b.0" (digit parts as indexes) or an int with item-first
// lookups; when `fallback` is given it replaces an Undefined at each step.
Result<Value> AttrPath(const Value& item, const Value& attribute, const Value* fallback);

// Python's iter(): list/tuple items, a string's characters, a dict's keys; an Undefined is empty.
Result<ValueList> Iterate(const Value& v);
// Python's len(); an Undefined has length 0.
Result<int64_t> Length(const Value& v);

// jinja2's object_type_repr: "dict object", "None", "jinja2.utils.Namespace object".
std::string ObjectTypeRepr(const Value& v);

// Normalises a Python index against `size` (negatives count from the end); nullopt if outside.
std::optional<size_t> NormalizeIndex(int64_t index, size_t size);

}  // namespace smallmind::jinja
