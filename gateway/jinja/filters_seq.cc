// Collection filters (see filters.h): list, first, last, join, map, select/reject(attr),
// sort, unique, reverse, items, dictsort, sum, min, max, batch, slice.
#include <algorithm>

#include "gateway/jinja/access.h"
#include "gateway/jinja/args.h"
#include "gateway/jinja/filters.h"
#include "gateway/jinja/interpreter.h"
#include "gateway/jinja/ops.h"
#include "gateway/jinja/repr.h"
#include "gateway/jinja/unicode.h"

namespace smallmind::jinja {
namespace {

using shared::InvalidArgument;

Value IgnoreCase(const Value& v) {
  return v.is_string() ? Value::String(unicode::Lower(v.str())) : v;
}

Result<ValueList> Items(Interpreter& in, const Value& v) {
  SM_ASSIGN_OR_RETURN(ValueList items, Iterate(v));
  SM_RETURN_IF_ERROR(in.Charge(static_cast<int64_t>(items.size())));
  return items;
}

Result<Value> List(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("list", std::move(args), {}));
  SM_ASSIGN_OR_RETURN(ValueList items, Items(in, v));
  return Value::List(std::move(items));
}

Result<Value> First(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("first", std::move(args), {}));
  if (v.is_iterator()) {  // next(iter(seq)) takes just one item
    IteratorState& it = v.iterator();
    if (it.pos < it.items.size()) return it.items[it.pos++];
    return Value::Undefined("No first item, sequence was empty.");
  }
  if (v.is_sequence()) {
    if (!v.list().empty()) return v.list().front();
    return Value::Undefined("No first item, sequence was empty.");
  }
  SM_ASSIGN_OR_RETURN(ValueList items, Items(in, v));
  if (items.empty()) return Value::Undefined("No first item, sequence was empty.");
  return items.front();
}

Result<Value> Last(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("last", std::move(args), {}));
  if (v.is_iterator()) return InvalidArgument("'" + v.TypeName() + "' object is not reversible");
  if (v.is_undefined()) return Value::Undefined("No last item, sequence was empty.");
  SM_ASSIGN_OR_RETURN(ValueList items, Items(in, v));
  if (items.empty()) return Value::Undefined("No last item, sequence was empty.");
  return items.back();
}

Result<Value> Join(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("join", std::move(args), {"d", "attribute"}));
  const std::string sep = a[0] ? Str(*a[0]) : "";
  SM_ASSIGN_OR_RETURN(ValueList items, Items(in, v));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    Value item = items[i];
    if (a[1] && !a[1]->is_none()) {
      SM_ASSIGN_OR_RETURN(item, AttrPath(item, *a[1], nullptr));
    }
    if (i > 0) out += sep;
    AppendStr(out, item);
    SM_RETURN_IF_ERROR(in.CheckString(out.size()));
  }
  SM_RETURN_IF_ERROR(in.ChargeBytes(out.size()));
  return Value::String(std::move(out));
}

Result<Value> Map(Interpreter& in, const Value& v, CallArgs args) {
  if (!v.Truthy()) return Value::Iterator({});
  SM_ASSIGN_OR_RETURN(ValueList items, Items(in, v));
  ValueList out;
  out.reserve(items.size());
  if (args.positional.empty()) {
    Value attribute = args.TakeKeyword("attribute");
    if (!attribute.is_undefined()) {
      Value fallback = args.TakeKeyword("default");
      if (!args.keywords.empty()) {
        return InvalidArgument("Unexpected keyword argument '" + args.keywords[0].first + "'");
      }
      const bool has_fallback = !fallback.is_undefined() && !fallback.is_none();
      for (const Value& item : items) {
        SM_ASSIGN_OR_RETURN(Value x, AttrPath(item, attribute, has_fallback ? &fallback : nullptr));
        out.push_back(std::move(x));
      }
      return Value::Iterator(std::move(out));
    }
    return InvalidArgument("map requires a filter argument");
  }
  const std::string name = Str(args.positional[0]);
  args.positional.erase(args.positional.begin());
  for (const Value& item : items) {
    SM_ASSIGN_OR_RETURN(Value x, in.CallFilter(name, item, args));
    out.push_back(std::move(x));
  }
  return Value::Iterator(std::move(out));
}

// select / reject / selectattr / rejectattr.
Result<Value> SelectOrReject(Interpreter& in, const Value& v, CallArgs args, bool select,
                             bool by_attr) {
  if (!v.Truthy()) return Value::Iterator({});
  Value attribute;
  size_t off = 0;
  if (by_attr) {
    if (args.positional.empty()) return InvalidArgument("Missing parameter for attribute name");
    attribute = args.positional[0];
    off = 1;
  }
  std::string test;
  const bool has_test = args.positional.size() > off;
  if (has_test) test = Str(args.positional[off]);
  CallArgs test_args;
  if (has_test) {
    test_args.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(off) + 1,
                                args.positional.end());
  }
  test_args.keywords = std::move(args.keywords);
  SM_ASSIGN_OR_RETURN(ValueList items, Items(in, v));
  ValueList out;
  for (const Value& item : items) {
    Value subject = item;
    if (by_attr) {
      SM_ASSIGN_OR_RETURN(subject, AttrPath(item, attribute, nullptr));
    }
    bool pass = subject.Truthy();
    if (has_test) {
      SM_ASSIGN_OR_RETURN(pass, in.CallTest(test, subject, test_args));
    }
    if (pass == select) out.push_back(item);
  }
  return Value::Iterator(std::move(out));
}

Result<Value> Select(Interpreter& in, const Value& v, CallArgs a) {
  return SelectOrReject(in, v, std::move(a), true, false);
}
Result<Value> Reject(Interpreter& in, const Value& v, CallArgs a) {
  return SelectOrReject(in, v, std::move(a), false, false);
}
Result<Value> SelectAttr(Interpreter& in, const Value& v, CallArgs a) {
  return SelectOrReject(in, v, std::move(a), true, true);
}
Result<Value> RejectAttr(Interpreter& in, const Value& v, CallArgs a) {
  return SelectOrReject(in, v, std::move(a), false, true);
}

// The sort key of jinja2's make_multi_attrgetter: one value per comma-separated attribute.
Result<Value> SortKey(const Value& item, const std::optional<Value>& attribute, bool ignore_case) {
  ValueList key;
  if (!attribute || attribute->is_none()) {
    key.push_back(ignore_case ? IgnoreCase(item) : item);
  } else {
    ValueList attrs;
    if (attribute->is_string()) {
      CallArgs none;
      const std::string& s = attribute->str();
      size_t start = 0;
      while (true) {
        const size_t comma = s.find(',', start);
        attrs.push_back(
            Value::String(s.substr(start, comma == std::string::npos ? comma : comma - start)));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else {
      attrs.push_back(*attribute);
    }
    for (const Value& attr : attrs) {
      SM_ASSIGN_OR_RETURN(Value x, AttrPath(item, attr, nullptr));
      key.push_back(ignore_case ? IgnoreCase(x) : x);
    }
  }
  return Value::List(std::move(key));
}

Result<ValueList> SortedBy(ValueList items, ValueList keys, bool reverse) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  Status error;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (!error.ok()) return false;
    Result<bool> lt = reverse ? LessThan(keys[y], keys[x]) : LessThan(keys[x], keys[y]);
    if (!lt.ok()) error = lt.status();
    return lt.ok() && *lt;
  });
  SM_RETURN_IF_ERROR(error);
  ValueList out;
  out.reserve(items.size());
  for (size_t i : order) out.push_back(std::move(items[i]));
  return out;
}

Result<Value> Sort(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(
      BoundArgs a, BindArgs("sort", std::move(args), {"reverse", "case_sensitive", "attribute"}));
  SM_ASSIGN_OR_RETURN(ValueList items, Items(in, v));
  SM_RETURN_IF_ERROR(in.Charge(static_cast<int64_t>(items.size()) * 8));
  ValueList keys;
  for (const Value& item : items) {
    SM_ASSIGN_OR_RETURN(Value k, SortKey(item, a[2], !(a[1] && a[1]->Truthy())));
    keys.push_back(std::move(k));
  }
  SM_ASSIGN_OR_RETURN(ValueList sorted,
                      SortedBy(std::move(items), std::move(keys), a[0] && a[0]->Truthy()));
  return Value::List(std::move(sorted));
}

Result<Value> DictSort(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a,
                      BindArgs("dictsort", std::move(args), {"case_sensitive", "by", "reverse"}));
  if (!v.is_dict()) {
    if (v.is_undefined()) return UndefinedError(v);
    return InvalidArgument("'" + v.TypeName() + "' object has no attribute 'items'");
  }
  const std::string by = a[1] ? Str(*a[1]) : "key";
  if (by != "key" && by != "value") {
    return InvalidArgument("You can only sort by either \"key\" or \"value\"");
  }
  SM_RETURN_IF_ERROR(in.Charge(static_cast<int64_t>(v.dict().size()) * 8));
  ValueList items, keys;
  const bool ignore_case = !(a[0] && a[0]->Truthy());
  for (const auto& [key, value] : v.dict().entries()) {
    items.push_back(Value::Tuple({key, value}));
    const Value& k = by == "key" ? key : value;
    keys.push_back(ignore_case ? IgnoreCase(k) : k);
  }
  SM_ASSIGN_OR_RETURN(ValueList sorted,
                      SortedBy(std::move(items), std::move(keys), a[2] && a[2]->Truthy()));
  return Value::List(std::move(sorted));
}

Result<Value> Unique(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a,
                      BindArgs("unique", std::move(args), {"case_sensitive", "attribute"}));
  SM_ASSIGN_OR_RETURN(ValueList items, Items(in, v));
  SM_RETURN_IF_ERROR(in.Charge(static_cast<int64_t>(items.size() * items.size() / 16)));
  const bool ignore_case = !(a[0] && a[0]->Truthy());
  ValueList seen, out;
  for (const Value& item : items) {
    Value key = item;
    if (a[1] && !a[1]->is_none()) {
      SM_ASSIGN_OR_RETURN(key, AttrPath(item, *a[1], nullptr));
    }
    if (ignore_case) key = IgnoreCase(key);
    if (key.is_list() || key.is_dict() || key.is_view()) {
      return InvalidArgument("unhashable type: '" + key.TypeName() + "'");
    }
    if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return Equals(s, key); })) {
      seen.push_back(key);
      out.push_back(item);
    }
  }
  return Value::Iterator(std::move(out));
}

Result<Value> Reverse(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("reverse", std::move(args), {}));
  if (v.is_string()) {
    std::u32string s = unicode::Decode(v.str());
    std::reverse(s.begin(), s.end());
    return Value::String(unicode::Encode(s), v.safe());
  }
  SM_ASSIGN_OR_RETURN(ValueList items, Items(in, v));
  std::reverse(items.begin(), items.end());
  if (v.is_iterator()) return Value::List(std::move(items));  // list(value).reverse()
  const char* type = v.is_dict()                        ? "dict_reversekeyiterator"
                     : v.is_view()                      ? "dict_reverseitemiterator"
                     : v.is_tuple() || v.is_undefined() ? "reversed"
                                                        : "list_reverseiterator";
  return Value::Iterator(std::move(items), type);
}

Result<Value> ItemsFilter(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("items", std::move(args), {}));
  if (v.is_undefined()) return Value::Iterator({});
  if (!v.is_dict()) return InvalidArgument("Can only get item pairs from a mapping.");
  SM_RETURN_IF_ERROR(in.Charge(static_cast<int64_t>(v.dict().size())));
  ValueList out;
  for (const auto& [key, value] : v.dict().entries()) out.push_back(Value::Tuple({key, value}));
  return Value::Iterator(std::move(out));
}

Result<Value> Sum(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("sum", std::move(args), {"attribute", "start"}));
  SM_ASSIGN_OR_RETURN(ValueList items, Items(in, v));
  Value total = Or(a[1], Value::Int(0));
  for (const Value& item : items) {
    Value x = item;
    if (a[0] && !a[0]->is_none()) {
      SM_ASSIGN_OR_RETURN(x, AttrPath(item, *a[0], nullptr));
    }
    if (total.is_string())
      return InvalidArgument("sum() can't sum strings [use ''.join(seq) instead]");
    SM_ASSIGN_OR_RETURN(total, BinaryOp(in, Op::kAdd, total, x));
  }
  return total;
}

Result<Value> MinMax(Interpreter& in, const Value& v, CallArgs args, bool max) {
  SM_ASSIGN_OR_RETURN(
      BoundArgs a, BindArgs(max ? "max" : "min", std::move(args), {"case_sensitive", "attribute"}));
  SM_ASSIGN_OR_RETURN(ValueList items, Items(in, v));
  if (items.empty()) return Value::Undefined("No aggregated item, sequence was empty.");
  const bool ignore_case = !(a[0] && a[0]->Truthy());
  size_t best = 0;
  Value best_key;
  for (size_t i = 0; i < items.size(); ++i) {
    Value key = items[i];
    if (a[1] && !a[1]->is_none()) {
      SM_ASSIGN_OR_RETURN(key, AttrPath(items[i], *a[1], nullptr));
    }
    if (ignore_case) key = IgnoreCase(key);
    if (i > 0) {
      SM_ASSIGN_OR_RETURN(bool better, max ? LessThan(best_key, key) : LessThan(key, best_key));
      if (!better) continue;
    }
    best = i;
    best_key = std::move(key);
  }
  return items[best];
}

Result<Value> Min(Interpreter& in, const Value& v, CallArgs a) {
  return MinMax(in, v, std::move(a), false);
}
Result<Value> Max(Interpreter& in, const Value& v, CallArgs a) {
  return MinMax(in, v, std::move(a), true);
}

Result<Value> Batch(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a,
                      BindArgs("batch", std::move(args), {"linecount", "fill_with"}, 1));
  SM_ASSIGN_OR_RETURN(int64_t n, ToIndex(*a[0]));
  SM_ASSIGN_OR_RETURN(ValueList items, Items(in, v));
  ValueList out, row;
  for (const Value& item : items) {
    if (static_cast<int64_t>(row.size()) == n) {
      out.push_back(Value::List(std::move(row)));
      row.clear();
    }
    row.push_back(item);
  }
  if (!row.empty()) {
    if (a[1] && !a[1]->is_none()) {
      SM_RETURN_IF_ERROR(in.CheckItems(static_cast<size_t>(std::max<int64_t>(0, n))));
      while (static_cast<int64_t>(row.size()) < n) row.push_back(*a[1]);
    }
    out.push_back(Value::List(std::move(row)));
  }
  return Value::Iterator(std::move(out));
}

Result<Value> Slice(Interpreter& in, const Value& v, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("slice", std::move(args), {"slices", "fill_with"}, 1));
  SM_ASSIGN_OR_RETURN(int64_t slices, ToIndex(*a[0]));
  if (slices <= 0) return InvalidArgument("integer division or modulo by zero");
  SM_RETURN_IF_ERROR(in.CheckItems(static_cast<size_t>(slices)));
  SM_ASSIGN_OR_RETURN(ValueList seq, Items(in, v));
  const int64_t length = static_cast<int64_t>(seq.size());
  const int64_t per = length / slices;
  const int64_t extra = length % slices;
  int64_t offset = 0;
  ValueList out;
  for (int64_t s = 0; s < slices; ++s) {
    const int64_t start = offset + s * per;
    if (s < extra) ++offset;
    const int64_t end = offset + (s + 1) * per;
    ValueList part(seq.begin() + start, seq.begin() + end);
    if (a[1] && !a[1]->is_none() && s >= extra) part.push_back(*a[1]);
    out.push_back(Value::List(std::move(part)));
  }
  return Value::Iterator(std::move(out));
}

}  // namespace

FilterFn FindSequenceFilter(std::string_view name) {
  static const struct {
    std::string_view name;
    FilterFn fn;
  } kFilters[] = {
      {"batch", Batch},       {"dictsort", DictSort}, {"first", First},
      {"items", ItemsFilter}, {"join", Join},         {"last", Last},
      {"list", List},         {"map", Map},           {"max", Max},
      {"min", Min},           {"reject", Reject},     {"rejectattr", RejectAttr},
      {"reverse", Reverse},   {"select", Select},     {"selectattr", SelectAttr},
      {"slice", Slice},       {"sort", Sort},         {"sum", Sum},
      {"unique", Unique},
  };
  for (const auto& f : kFilters) {
    if (f.name == name) return f.fn;
  }
  return nullptr;
}

}  // namespace smallmind::jinja
