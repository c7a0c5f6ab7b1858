#include "gateway/jinja/globals.h"

#include <algorithm>

#include "gateway/jinja/access.h"
#include "gateway/jinja/args.h"
#include "gateway/jinja/interpreter.h"
#include "gateway/jinja/repr.h"

namespace smallmind::jinja {
namespace {

using shared::InvalidArgument;

// jinja2.sandbox.MAX_RANGE.
constexpr int64_t kMaxRange = 100000;

using BuiltinFn = Result<Value> (*)(Interpreter&, CallArgs);

class BuiltinFunction : public Callable {
 public:
  BuiltinFunction(std::string name, BuiltinFn fn) : name_(std::move(name)), fn_(fn) {}
  Result<Value> Call(Interpreter& in, CallArgs args) const override {
    return fn_(in, std::move(args));
  }
  std::string Repr() const override { return "<built-in function " + name_ + ">"; }

 private:
  std::string name_;
  BuiltinFn fn_;
};

Result<Value> Range(Interpreter& in, CallArgs args) {
  if (!args.keywords.empty()) return InvalidArgument("range() takes no keyword arguments");
  const size_t n = args.positional.size();
  if (n < 1 || n > 3)
    return InvalidArgument("range expected 1 to 3 arguments, got " + std::to_string(n));
  int64_t v[3] = {0, 0, 1};
  for (size_t i = 0; i < n; ++i) {
    SM_ASSIGN_OR_RETURN(v[n == 1 ? 1 : i], ToIndex(args.positional[i]));
  }
  const int64_t start = v[0], stop = v[1], step = v[2];
  if (step == 0) return InvalidArgument("range() arg 3 must not be zero");
  int64_t count = 0;
  if (step > 0 && start < stop) count = (stop - start - 1) / step + 1;
  if (step < 0 && start > stop) count = (start - stop - 1) / (-step) + 1;
  if (count > kMaxRange) {
    return InvalidArgument("Range too big. The sandbox blocks ranges larger than MAX_RANGE (" +
                           std::to_string(kMaxRange) + ").");
  }
  SM_RETURN_IF_ERROR(in.Charge(count));
  ValueList out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out.push_back(Value::Int(start + i * step));
  return Value::List(std::move(out));
}

Result<Value> DictFn(Interpreter&, CallArgs args) {
  SM_ASSIGN_OR_RETURN(Dict d, MakeDict(std::move(args)));
  return Value::FromDict(std::move(d));
}

Result<Value> NamespaceFn(Interpreter& in, CallArgs args) {
  SM_ASSIGN_OR_RETURN(Dict d, MakeDict(std::move(args)));
  auto ns = std::make_shared<NamespaceObject>(std::move(d));
  in.ReleaseAtEnd(ns);
  return Value::FromObject(std::move(ns));
}

class CyclerObject : public Object, public std::enable_shared_from_this<CyclerObject> {
 public:
  explicit CyclerObject(ValueList items) : items_(std::move(items)) {}
  std::string TypeName() const override { return "Cycler"; }
  Value GetAttr(std::string_view name) const override;
  std::string Repr(int) const override { return "<jinja2.utils.Cycler object>"; }
  int Depth() const override {
    int d = 1;
    for (const Value& v : items_) d = std::max(d, 1 + v.depth());
    return d;
  }
  void ReleaseValues() override { items_ = {Value()}, pos_ = 0; }

  ValueList items_;
  size_t pos_ = 0;
};

class CyclerMethod : public Callable {
 public:
  CyclerMethod(std::shared_ptr<CyclerObject> c, bool next) : cycler_(std::move(c)), next_(next) {}
  Result<Value> Call(Interpreter&, CallArgs args) const override {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(next_ ? "next" : "reset", std::move(args), {}));
    if (!next_) {
      cycler_->pos_ = 0;
      return Value::None();
    }
    Value v = cycler_->items_[cycler_->pos_];
    cycler_->pos_ = (cycler_->pos_ + 1) % cycler_->items_.size();
    return v;
  }
  std::string Repr() const override { return "<bound method Cycler.next>"; }

 private:
  std::shared_ptr<CyclerObject> cycler_;
  bool next_;
};

Value CyclerObject::GetAttr(std::string_view name) const {
  if (name == "current") return items_[pos_];
  if (name == "next" || name == "reset") {
    auto self = std::const_pointer_cast<CyclerObject>(shared_from_this());
    return Value::FromCallable(std::make_shared<CyclerMethod>(std::move(self), name == "next"));
  }
  return Value();
}

Result<Value> CyclerFn(Interpreter& in, CallArgs args) {
  if (args.positional.empty()) return InvalidArgument("at least one item has to be provided");
  auto cycler = std::make_shared<CyclerObject>(std::move(args.positional));
  in.ReleaseAtEnd(cycler);
  return Value::FromObject(std::move(cycler));
}

class Joiner : public Callable {
 public:
  explicit Joiner(std::string sep) : sep_(std::move(sep)) {}
  Result<Value> Call(Interpreter&, CallArgs args) const override {
    SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("joiner", std::move(args), {}));
    if (!used_) {
      used_ = true;
      return Value::String("");
    }
    return Value::String(sep_);
  }
  std::string Repr() const override { return "<jinja2.utils.Joiner object>"; }

 private:
  std::string sep_;
  mutable bool used_ = false;  // joiners belong to one render
};

Result<Value> JoinerFn(Interpreter&, CallArgs args) {
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("joiner", std::move(args), {"sep"}));
  return Value::FromCallable(std::make_shared<Joiner>(a[0] ? Str(*a[0]) : ", "));
}

}  // namespace

Result<Dict> MakeDict(CallArgs args) {
  if (args.positional.size() > 1) {
    return InvalidArgument("dict expected at most 1 argument, got " +
                           std::to_string(args.positional.size()));
  }
  Dict d;
  if (!args.positional.empty()) {
    const Value& src = args.positional[0];
    if (src.is_dict()) {
      d = src.dict();
    } else if (src.is_object() && src.object().TypeName() == "Namespace") {
      return InvalidArgument("'Namespace' object is not iterable");
    } else {
      SM_ASSIGN_OR_RETURN(ValueList pairs, Iterate(src));
      for (size_t i = 0; i < pairs.size(); ++i) {
        SM_ASSIGN_OR_RETURN(ValueList kv, Iterate(pairs[i]));
        if (kv.size() != 2) {
          return InvalidArgument("dictionary update sequence element #" + std::to_string(i) +
                                 " has length " + std::to_string(kv.size()) + "; 2 is required");
        }
        d.Set(kv[0], kv[1]);
      }
    }
  }
  for (auto& [key, value] : args.keywords) d.Set(Value::String(key), std::move(value));
  return d;
}

NamespaceObject::NamespaceObject(Dict attrs) : attrs_(std::move(attrs)) {
  for (const auto& entry : attrs_.entries()) depth_ = std::max(depth_, 1 + entry.second.depth());
}

Value NamespaceObject::GetAttr(std::string_view name) const {
  const Value* v = attrs_.Find(name);
  return v ? *v : Value();
}

Status NamespaceObject::SetAttr(std::string_view name, Value value) {
  depth_ = std::max(depth_, 1 + value.depth());
  attrs_.Set(Value::String(std::string(name)), std::move(value));
  return Status::Ok();
}

std::string NamespaceObject::Repr(int depth) const {
  if (in_repr_) return "<Namespace {...}>";
  in_repr_ = true;
  std::string out = "<Namespace " + ReprAt(Value::FromDict(attrs_), depth + 1) + ">";
  in_repr_ = false;
  return out;
}

Value LookupBuiltinGlobal(std::string_view name) {
  static const struct {
    const char* name;
    BuiltinFn fn;
  } kGlobals[] = {{"range", Range},
                  {"dict", DictFn},
                  {"namespace", NamespaceFn},
                  {"cycler", CyclerFn},
                  {"joiner", JoinerFn}};
  for (const auto& g : kGlobals) {
    if (name == g.name) return Value::FromCallable(std::make_shared<BuiltinFunction>(g.name, g.fn));
  }
  return Value();
}

}  // namespace smallmind::jinja
