#include "gateway/jinja/value.h"

#include <algorithm>

#include "shared/check.h"

namespace smallmind::jinja {
namespace {

const std::string& EmptyString() {
  static const std::string kEmpty;
  return kEmpty;
}

uint16_t Saturate(int depth) { return static_cast<uint16_t>(std::min(depth, 65535)); }

uint16_t ContainerDepth(const ValueList& items) {
  int deepest = 0;
  for (const Value& item : items) deepest = std::max(deepest, item.depth());
  return Saturate(deepest + 1);
}

}  // namespace

Value Value::Undefined(std::string hint, bool unsafe) {
  Value v;
  v.flag_ = unsafe;
  if (!hint.empty()) v.ptr_ = std::make_shared<std::string>(std::move(hint));
  return v;
}

Value Value::None() {
  Value v;
  v.kind_ = Kind::kNone;
  return v;
}

Value Value::Bool(bool b) {
  Value v;
  v.kind_ = Kind::kBool;
  v.b_ = b;
  return v;
}

Value Value::Int(int64_t i) {
  Value v;
  v.kind_ = Kind::kInt;
  v.i_ = i;
  return v;
}

Value Value::Float(double f) {
  Value v;
  v.kind_ = Kind::kFloat;
  v.f_ = f;
  return v;
}

Value Value::String(std::string s, bool safe) {
  Value v;
  v.kind_ = Kind::kString;
  v.flag_ = safe;
  v.ptr_ = std::make_shared<std::string>(std::move(s));
  return v;
}

Value Value::ItemsOf(Kind kind, ValueList items) {
  Value v;
  v.kind_ = kind;
  v.depth_ = ContainerDepth(items);
  v.ptr_ = std::make_shared<ValueList>(std::move(items));
  return v;
}

Value Value::List(ValueList items) { return ItemsOf(Kind::kList, std::move(items)); }

Value Value::Tuple(ValueList items) { return ItemsOf(Kind::kTuple, std::move(items)); }

Value Value::FromDict(Dict dict) {
  Value v;
  v.kind_ = Kind::kDict;
  int deepest = 0;
  for (const auto& [key, value] : dict.entries())
    deepest = std::max({deepest, key.depth(), value.depth()});
  v.depth_ = Saturate(deepest + 1);
  v.ptr_ = std::make_shared<Dict>(std::move(dict));
  return v;
}

Value Value::FromObject(std::shared_ptr<Object> object) {
  Value v;
  v.kind_ = Kind::kObject;
  v.ptr_ = std::move(object);
  return v;
}

Value Value::FromCallable(std::shared_ptr<const Callable> callable) {
  Value v;
  v.kind_ = Kind::kCallable;
  v.ptr_ = std::const_pointer_cast<Callable>(std::move(callable));
  return v;
}

Value Value::Iterator(ValueList items, std::string type_name) {
  Value v;
  v.kind_ = Kind::kIterator;
  v.depth_ = ContainerDepth(items);
  auto state = std::make_shared<IteratorState>();
  state->items = std::move(items);
  state->type_name = std::move(type_name);
  v.ptr_ = std::move(state);
  return v;
}

Value Value::View(ValueList items, DictView view) {
  Value v = ItemsOf(Kind::kDictView, std::move(items));
  v.flag_ = static_cast<uint8_t>(view);
  return v;
}

IteratorState& Value::iterator() const {
  SM_DCHECK(is_iterator());
  return *static_cast<IteratorState*>(ptr_.get());
}

const std::string& Value::str() const {
  SM_DCHECK(is_string());
  return *static_cast<const std::string*>(ptr_.get());
}

const ValueList& Value::list() const {
  SM_DCHECK(is_sequence() || is_view());
  return *static_cast<const ValueList*>(ptr_.get());
}

ValueList& Value::mutable_list() const {
  SM_DCHECK(is_list());
  return *static_cast<ValueList*>(ptr_.get());
}

const Dict& Value::dict() const {
  SM_DCHECK(is_dict());
  return *static_cast<const Dict*>(ptr_.get());
}

Object& Value::object() const {
  SM_DCHECK(is_object());
  return *static_cast<Object*>(ptr_.get());
}

const Callable& Value::callable() const {
  SM_DCHECK(is_callable());
  return *static_cast<const Callable*>(ptr_.get());
}

const std::string& Value::undefined_hint() const {
  SM_DCHECK(is_undefined());
  return ptr_ ? *static_cast<const std::string*>(ptr_.get()) : EmptyString();
}

bool Value::Truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return b_;
    case Kind::kInt: return i_ != 0;
    case Kind::kFloat: return f_ != 0.0;
    case Kind::kString: return !str().empty();
    case Kind::kList:
    case Kind::kTuple:
    case Kind::kDictView: return !list().empty();
    case Kind::kDict: return dict().size() != 0;
    case Kind::kObject:
    case Kind::kCallable:
    case Kind::kIterator: return true;
  }
  return false;
}

std::string Value::TypeName() const {
  switch (kind_) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return flag_ ? "Markup" : "str";
    case Kind::kList: return "list";
    case Kind::kTuple: return "tuple";
    case Kind::kDict: return "dict";
    case Kind::kObject: return object().TypeName();
    case Kind::kCallable: return "function";
    case Kind::kIterator: return iterator().type_name;
    case Kind::kDictView:
      return view() == DictView::kKeys     ? "dict_keys"
             : view() == DictView::kValues ? "dict_values"
                                           : "dict_items";
  }
  return "object";
}

int Value::depth() const { return is_object() ? object().Depth() : depth_; }

bool Value::SameAs(const Value& other) const {
  if (kind_ != other.kind_) return false;
  switch (kind_) {
    case Kind::kUndefined: return ptr_ == other.ptr_;
    case Kind::kNone: return true;
    case Kind::kBool: return b_ == other.b_;
    // CPython caches -5..256, so `1 is 1` holds and `1000 is 1000` may not; say so for small ones.
    case Kind::kInt: return i_ == other.i_ && i_ >= -5 && i_ <= 256;
    case Kind::kFloat: return false;
    default: return ptr_ == other.ptr_;
  }
}

bool Equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.number() == b.number();
    return a.integer() == b.integer();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return true;
    case Kind::kString: return a.str() == b.str();
    case Kind::kList:
    case Kind::kTuple: {
      const ValueList& x = a.list();
      const ValueList& y = b.list();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!Equals(x[i], y[i])) return false;
      }
      return true;
    }
    case Kind::kDict: {
      const Dict& x = a.dict();
      const Dict& y = b.dict();
      if (x.size() != y.size()) return false;
      for (const auto& [key, value] : x.entries()) {
        const Value* other = y.Find(key);
        if (other == nullptr || !Equals(value, *other)) return false;
      }
      return true;
    }
    case Kind::kDictView: {
      if (a.view() != b.view() || a.view() == DictView::kValues) return a.SameAs(b);
      const ValueList& x = a.list();
      const ValueList& y = b.list();
      if (x.size() != y.size()) return false;
      for (const Value& v : x) {  // set equality
        bool found = false;
        for (const Value& w : y) found = found || Equals(v, w);
        if (!found) return false;
      }
      return true;
    }
    case Kind::kObject:
    case Kind::kCallable:
    case Kind::kIterator: return a.SameAs(b);
    default: return false;
  }
}

const Value* Dict::Find(const Value& key) const {
  for (const Entry& e : entries_) {
    if (Equals(e.first, key)) return &e.second;
  }
  return nullptr;
}

const Value* Dict::Find(std::string_view key) const {
  for (const Entry& e : entries_) {
    if (e.first.is_string() && e.first.str() == key) return &e.second;
  }
  return nullptr;
}

void Dict::Set(Value key, Value value) {
  for (Entry& e : entries_) {
    if (Equals(e.first, key)) {
      e.second = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::move(key), std::move(value));
}

Status Object::SetAttr(std::string_view name, Value value) {
  return shared::InvalidArgument("cannot assign attribute '" + std::string(name) + "' on a " +
                                 TypeName() + " object");
}

Result<Value> Object::CallObject(Interpreter&, CallArgs) {
  return shared::InvalidArgument("'" + TypeName() + "' object is not callable");
}

Value CallArgs::TakeKeyword(std::string_view name) {
  for (auto it = keywords.begin(); it != keywords.end(); ++it) {
    if (it->first == name) {
      Value v = std::move(it->second);
      keywords.erase(it);
      return v;
    }
  }
  return Value();
}

}  // namespace smallmind::jinja
