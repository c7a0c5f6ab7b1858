// Python's str.split, rsplit, splitlines and partition/rpartition for the template string methods
// (str_methods.cc): whitespace runs and line breaks as Python defines them. Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "gateway/jinja/value.h"

namespace smallmind::jinja {

// split()/rsplit() without a separator: runs of Unicode whitespace, empty parts dropped.
ValueList SplitWhitespace(const std::u32string& s, int64_t maxsplit, bool from_right);
// split(sep)/rsplit(sep); maxsplit < 0 means no limit.
ValueList SplitOn(const std::string& s, const std::string& sep, int64_t maxsplit, bool from_right);
// splitlines(keepends) on all of Python's line boundaries (\n, \r\n, \r, \v, \f, \x1c-\x1e,
// \x85, U+2028, U+2029).
ValueList SplitLines(const std::u32string& s, bool keepends);
// partition(sep) / rpartition(sep): a 3-tuple.
Result<Value> Partition(const std::string& s, bool from_right, const Value& sep);

}  // namespace smallmind::jinja
