#include "gateway/jinja/access.h"

#include "gateway/jinja/methods.h"
#include "gateway/jinja/ops.h"
#include "gateway/jinja/repr.h"
#include "gateway/jinja/unicode.h"

namespace smallmind::jinja {
namespace {

using shared::InvalidArgument;

Value NoAttribute(const Value& obj, std::string_view name) {
  return Value::Undefined("'" + ObjectTypeRepr(obj) + "' has no attribute '" + std::string(name) +
                          "'");
}

Value NoElement(const Value& obj, const Value& key) {
  if (key.is_string()) return NoAttribute(obj, key.str());
  return Value::Undefined(ObjectTypeRepr(obj) + " has no element " + Repr(key));
}

bool IsDunder(std::string_view name) {
  return name.size() > 4 && name.substr(0, 2) == "__" && name.substr(name.size() - 2) == "__";
}

// getattr() proper: methods and object attributes, nullopt when Python has no such attribute.
std::optional<Value> PythonAttr(const Value& obj, std::string_view name) {
  if (IsDunder(name)) {
    return Value::Undefined("access to attribute '" + std::string(name) + "' of '" +
                                obj.TypeName() + "' object is unsafe.",
                            /*unsafe=*/true);
  }
  if (obj.is_object()) {
    Value v = obj.object().GetAttr(name);
    if (v.is_undefined()) return std::nullopt;
    return v;
  }
  switch (LookupMethod(obj, name)) {
    case MethodKind::kNone: return std::nullopt;
    case MethodKind::kUnsafe:
      return Value::Undefined("access to attribute '" + std::string(name) + "' of '" +
                                  obj.TypeName() + "' object is unsafe.",
                              /*unsafe=*/true);
    case MethodKind::kSafe: return BindMethod(obj, name);
  }
  return std::nullopt;
}

// obj[key] proper: nullopt where Python raises TypeError/LookupError (jinja2 catches those).
std::optional<Value> PythonItem(const Value& obj, const Value& key) {
  if (obj.is_dict()) {
    if (key.is_list() || key.is_dict()) return std::nullopt;  // unhashable
    const Value* v = obj.dict().Find(key);
    return v ? std::optional<Value>(*v) : std::nullopt;
  }
  if ((obj.is_sequence() || obj.is_string()) && key.is_integral()) {
    if (obj.is_string()) {
      const std::u32string cps = unicode::Decode(obj.str());
      const std::optional<size_t> i = NormalizeIndex(key.integer(), cps.size());
      if (!i) return std::nullopt;
      return Value::String(unicode::Encode(cps.substr(*i, 1)));
    }
    const std::optional<size_t> i = NormalizeIndex(key.integer(), obj.list().size());
    if (!i) return std::nullopt;
    return obj.list()[*i];
  }
  return std::nullopt;
}

// Python's slice.indices(): clamps start/stop for `size` and the step's direction.
void SliceIndices(int64_t size, std::optional<int64_t> start, std::optional<int64_t> stop,
                  int64_t step, int64_t& lo, int64_t& hi) {
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v;
    if (x < 0) {
      x += size;
      if (x < 0) x = step < 0 ? -1 : 0;
    } else if (x >= size) {
      x = step < 0 ? size - 1 : size;
    }
    return x;
  };
  lo = clamp(start, step < 0 ? size - 1 : 0);
  hi = clamp(stop, step < 0 ? -1 : size);
}

}  // namespace

std::string ObjectTypeRepr(const Value& v) {
  if (v.is_none()) return "None";
  if (v.is_object()) return "jinja2.utils." + v.TypeName() + " object";
  if (v.is_undefined()) return "jinja2.runtime.Undefined object";
  if (v.is_string() && v.safe()) return "markupsafe.Markup object";
  return v.TypeName() + " object";
}

std::optional<size_t> NormalizeIndex(int64_t index, size_t size) {
  const int64_t n = static_cast<int64_t>(size);
  if (index < 0) index += n;
  if (index < 0 || index >= n) return std::nullopt;
  return static_cast<size_t>(index);
}

Result<Value> GetAttr(const Value& obj, std::string_view name) {
  if (obj.is_undefined()) return UndefinedError(obj);
  if (std::optional<Value> attr = PythonAttr(obj, name)) return *attr;
  if (obj.is_dict()) {
    if (const Value* v = obj.dict().Find(name)) return *v;
  }
  return NoAttribute(obj, name);
}

Result<Value> GetItem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) return UndefinedError(obj);
  if (std::optional<Value> item = PythonItem(obj, key)) return *item;
  if (key.is_string()) {
    if (std::optional<Value> attr = PythonAttr(obj, key.str())) return *attr;
  }
  return NoElement(obj, key);
}

Result<Value> GetAttrOnly(const Value& obj, std::string_view name) {
  if (obj.is_undefined()) return UndefinedError(obj);
  if (std::optional<Value> attr = PythonAttr(obj, name)) return *attr;
  return NoAttribute(obj, name);
}

Result<Value> AttrPath(const Value& item, const Value& attribute, const Value* fallback) {
  ValueList parts;
  if (attribute.is_string()) {
    const std::string& a = attribute.str();
    size_t start = 0;
    while (true) {
      const size_t dot = a.find('.', start);
      const std::string part = a.substr(start, dot == std::string::npos ? dot : dot - start);
      const bool digits =
          !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
      parts.push_back(digits && part.size() < 18
                          ? Value::Int(std::strtoll(part.c_str(), nullptr, 10))
                          : Value::String(part));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
  } else if (!attribute.is_none() && !attribute.is_undefined()) {
    parts.push_back(attribute);
  }
  Value v = item;
  for (const Value& part : parts) {
    SM_ASSIGN_OR_RETURN(v, GetItem(v, part));
    if (fallback != nullptr && v.is_undefined()) v = *fallback;
  }
  return v;
}

Result<Value> GetSlice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
  if (obj.is_undefined()) return UndefinedError(obj);
  auto bound = [](const Value& v, bool& ok) -> std::optional<int64_t> {
    if (v.is_none()) return std::nullopt;
    if (!v.is_integral()) ok = false;
    return v.is_integral() ? std::optional<int64_t>(v.integer()) : std::nullopt;
  };
  bool ok = true;
  const std::optional<int64_t> a = bound(start, ok);
  const std::optional<int64_t> b = bound(stop, ok);
  const std::optional<int64_t> s = bound(step, ok);
  const Value undefined =
      Value::Undefined(ObjectTypeRepr(obj) + " has no element slice(" + Repr(start) + ", " +
                       Repr(stop) + ", " + Repr(step) + ")");
  if (!ok || !(obj.is_string() || obj.is_sequence())) return undefined;
  const int64_t st = s.value_or(1);
  if (st == 0) return InvalidArgument("slice step cannot be zero");
  std::u32string cps;
  if (obj.is_string()) cps = unicode::Decode(obj.str());
  const int64_t size = static_cast<int64_t>(obj.is_string() ? cps.size() : obj.list().size());
  int64_t lo = 0, hi = 0;
  SliceIndices(size, a, b, st, lo, hi);
  std::u32string out_cps;
  ValueList out_items;
  for (int64_t i = lo; st > 0 ? i < hi : i > hi; i += st) {
    if (obj.is_string()) {
      out_cps.push_back(cps[static_cast<size_t>(i)]);
    } else {
      out_items.push_back(obj.list()[static_cast<size_t>(i)]);
    }
  }
  if (obj.is_string()) return Value::String(unicode::Encode(out_cps), obj.safe());
  return obj.is_list() ? Value::List(std::move(out_items)) : Value::Tuple(std::move(out_items));
}

Result<ValueList> Iterate(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined: return ValueList{};
    case Kind::kList:
    case Kind::kTuple:
    case Kind::kDictView: return v.list();
    case Kind::kIterator: {  // one pass: what is taken now is gone for later loops
      IteratorState& it = v.iterator();
      ValueList rest(it.items.begin() + static_cast<std::ptrdiff_t>(it.pos), it.items.end());
      it.pos = it.items.size();
      return rest;
    }
    case Kind::kString: {
      ValueList out;
      const std::string& s = v.str();
      for (size_t i = 0; i < s.size();) {
        const size_t start = i;
        unicode::Next(s, i);
        out.push_back(Value::String(s.substr(start, i - start)));
      }
      return out;
    }
    case Kind::kDict: {
      ValueList out;
      out.reserve(v.dict().size());
      for (const auto& entry : v.dict().entries()) out.push_back(entry.first);
      return out;
    }
    default: return InvalidArgument("'" + v.TypeName() + "' object is not iterable");
  }
}

Result<int64_t> Length(const Value& v) {
  switch (v.kind()) {
    case Kind::kUndefined: return 0;
    case Kind::kString: return static_cast<int64_t>(unicode::Length(v.str()));
    case Kind::kList:
    case Kind::kTuple:
    case Kind::kDictView: return static_cast<int64_t>(v.list().size());
    case Kind::kDict: return static_cast<int64_t>(v.dict().size());
    default: return InvalidArgument("object of type '" + v.TypeName() + "' has no len()");
  }
}

}  // namespace smallmind::jinja
