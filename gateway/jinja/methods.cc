#include "gateway/jinja/methods.h"

#include <algorithm>
#include <string>

#include "gateway/jinja/access.h"
#include "gateway/jinja/args.h"
#include "gateway/jinja/interpreter.h"

namespace smallmind::jinja {
namespace {

using shared::InvalidArgument;

constexpr std::string_view kDictSafe[] = {"get", "items", "keys", "values", "copy"};
constexpr std::string_view kDictUnsafe[] = {"clear", "pop", "popitem", "setdefault", "update"};
constexpr std::string_view kListSafe[] = {"count", "index", "copy", "pop", "clear"};
constexpr std::string_view kListUnsafe[] = {"append", "reverse", "insert",
                                            "sort",   "extend",  "remove"};
constexpr std::string_view kTupleSafe[] = {"count", "index"};

template <size_t N>
bool In(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

class BoundMethod : public Callable {
 public:
  BoundMethod(Value self, std::string name) : self_(std::move(self)), name_(std::move(name)) {}
  Result<Value> Call(Interpreter& in, CallArgs args) const override {
    return CallMethod(in, self_, name_, std::move(args));
  }
  std::string Repr() const override {
    return "<built-in method " + name_ + " of " + self_.TypeName() + " object>";
  }

 private:
  Value self_;
  std::string name_;
};

Result<Value> DictMethod(Interpreter& in, const Value& self, std::string_view name, CallArgs args) {
  const Dict& d = self.dict();
  if (name == "get") {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("get", std::move(args), {"key", "default"}, 1));
    const Value* v = d.Find(*a[0]);
    return v ? *v : Or(a[1], Value::None());
  }
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(name, std::move(args), {}));
  SM_RETURN_IF_ERROR(in.Charge(static_cast<int64_t>(d.size())));
  if (name == "copy") return Value::FromDict(d);
  ValueList out;
  out.reserve(d.size());
  for (const auto& [key, value] : d.entries()) {
    if (name == "items") {
      out.push_back(Value::Tuple({key, value}));
    } else {
      out.push_back(name == "keys" ? key : value);
    }
  }
  return Value::View(std::move(out), name == "items"  ? DictView::kItems
                                     : name == "keys" ? DictView::kKeys
                                                      : DictView::kValues);
}

Result<Value> SequenceMethod(Interpreter& in, const Value& self, std::string_view name,
                             CallArgs args) {
  const ValueList& items = self.list();
  SM_RETURN_IF_ERROR(in.Charge(static_cast<int64_t>(items.size())));
  if (name == "count") {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("count", std::move(args), {"value"}, 1));
    return Value::Int(std::count_if(items.begin(), items.end(),
                                    [&](const Value& v) { return Equals(v, *a[0]); }));
  }
  if (name == "index") {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("index", std::move(args), {"value"}, 1));
    for (size_t i = 0; i < items.size(); ++i) {
      if (Equals(items[i], *a[0])) return Value::Int(static_cast<int64_t>(i));
    }
    return InvalidArgument(self.TypeName() + ".index(x): x not in " + self.TypeName());
  }
  if (name == "copy") {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("copy", std::move(args), {}));
    return Value::List(items);
  }
  if (name == "clear") {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("clear", std::move(args), {}));
    self.mutable_list().clear();
    return Value::None();
  }
  // pop([index]): removes and returns an item of this render's list.
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("pop", std::move(args), {"index"}));
  ValueList& list = self.mutable_list();
  if (list.empty()) return InvalidArgument("pop from empty list");
  int64_t index = -1;
  if (a[0]) {
    SM_ASSIGN_OR_RETURN(index, ToIndex(*a[0]));
  }
  const std::optional<size_t> i = NormalizeIndex(index, list.size());
  if (!i) return InvalidArgument("pop index out of range");
  Value out = std::move(list[*i]);
  list.erase(list.begin() + static_cast<std::ptrdiff_t>(*i));
  return out;
}

}  // namespace

MethodKind LookupMethod(const Value& self, std::string_view name) {
  switch (self.kind()) {
    case Kind::kString: return IsStrMethod(name) ? MethodKind::kSafe : MethodKind::kNone;
    case Kind::kDict:
      if (In(kDictSafe, name)) return MethodKind::kSafe;
      return In(kDictUnsafe, name) ? MethodKind::kUnsafe : MethodKind::kNone;
    case Kind::kList:
      if (In(kListSafe, name)) return MethodKind::kSafe;
      return In(kListUnsafe, name) ? MethodKind::kUnsafe : MethodKind::kNone;
    case Kind::kTuple: return In(kTupleSafe, name) ? MethodKind::kSafe : MethodKind::kNone;
    default: return MethodKind::kNone;
  }
}

Value BindMethod(const Value& self, std::string_view name) {
  return Value::FromCallable(std::make_shared<BoundMethod>(self, std::string(name)));
}

Result<Value> CallMethod(Interpreter& in, const Value& self, std::string_view name, CallArgs args) {
  switch (self.kind()) {
    case Kind::kString: return CallStrMethod(in, self, name, std::move(args));
    case Kind::kDict: return DictMethod(in, self, name, std::move(args));
    case Kind::kList:
    case Kind::kTuple: return SequenceMethod(in, self, name, std::move(args));
    default:
      return InvalidArgument("'" + self.TypeName() + "' object has no attribute '" +
                             std::string(name) + "'");
  }
}

}  // namespace smallmind::jinja
