// jinja2's builtin filters with their Python semantics, plus transformers' tojson. Text filters
// live in filters.cc, number filters in filters_number.cc, collection filters (map,
// select, sort, ...) in filters_seq.cc.
// Filters that return generators in jinja2 (map, select*, reject*, unique, batch, slice, items)
// return one-pass iterator values here too. Stateless lookups; thread-safe.
#pragma once

#include <string_view>

#include "gateway/jinja/value.h"

namespace smallmind::jinja {

using FilterFn = Result<Value> (*)(Interpreter& in, const Value& input, CallArgs args);

// The filter called `name`, or nullptr.
FilterFn FindFilter(std::string_view name);

// The parts of the table: text (filters.cc), numbers (filters_number.cc), collections
// (filters_seq.cc).
FilterFn FindTextFilter(std::string_view name);
FilterFn FindNumberFilter(std::string_view name);
FilterFn FindSequenceFilter(std::string_view name);

// jinja2's soft_str: str(), keeping Markup as Markup.
Value SoftStr(const Value& v);

}  // namespace smallmind::jinja
