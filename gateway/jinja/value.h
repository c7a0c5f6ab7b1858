// Value: one Python object as a Jinja template sees it (undefined, None, bool, int, float, str,
// list, tuple, dict, namespace-like objects, callables), with Python's truth and equality. Values
// made while parsing are immutable and shared across threads; a render makes its own values and
// only lists and namespaces can change, within that render. Thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shared/status.h"

namespace smallmind::jinja {

class Value;
class Dict;
class Object;
class Callable;
class Interpreter;
struct CallArgs;
using ValueList = std::vector<Value>;
using shared::Result;
using shared::Status;

// Containers nested deeper than this are refused where a template stores them or a request
// supplies them, so comparing, printing or freeing a value never recurses without bound.
inline constexpr int kMaxValueDepth = 200;

enum class Kind : uint8_t {
  kUndefined,
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kList,
  kTuple,
  kDict,
  kObject,
  kCallable,
  kIterator,  // a one-pass generator or iterator (what map, select, unique, ... return)
  kDictView,  // dict.keys() / values() / items()
};

enum class DictView : uint8_t { kKeys = 1, kValues = 2, kItems = 3 };

// The remaining items of a one-pass iterator, shared by every copy of the value.
struct IteratorState {
  ValueList items;
  size_t pos = 0;
  std::string type_name;  // "generator", "list_reverseiterator", ...
};

class Value {
 public:
  Value() : i_(0) {}  // undefined with no hint
  // An undefined carrying jinja2's message for when it is misused ("'x' is undefined"); `unsafe`
  // marks a sandbox refusal (raised as a SecurityError when used).
  static Value Undefined(std::string hint, bool unsafe = false);
  static Value None();
  static Value Bool(bool b);
  static Value Int(int64_t i);
  static Value Float(double f);
  // `safe` marks markupsafe.Markup (from the safe/escape filters).
  static Value String(std::string s, bool safe = false);
  static Value List(ValueList items);
  static Value Tuple(ValueList items);
  static Value FromDict(Dict dict);
  static Value FromObject(std::shared_ptr<Object> object);
  static Value FromCallable(std::shared_ptr<const Callable> callable);
  static Value Iterator(ValueList items, std::string type_name = "generator");
  static Value View(ValueList items, DictView view);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_tuple() const { return kind_ == Kind::kTuple; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_object() const { return kind_ == Kind::kObject; }
  bool is_callable() const { return kind_ == Kind::kCallable; }
  bool is_iterator() const { return kind_ == Kind::kIterator; }
  bool is_view() const { return kind_ == Kind::kDictView; }
  bool is_integral() const { return is_int() || is_bool(); }  // Python int (bool is one)
  bool is_number() const { return is_integral() || is_float(); }
  bool is_sequence() const { return is_list() || is_tuple(); }

  bool boolean() const { return b_; }
  int64_t integer() const { return is_bool() ? (b_ ? 1 : 0) : i_; }  // kInt or kBool
  double number() const { return is_float() ? f_ : static_cast<double>(integer()); }
  const std::string& str() const;  // kString
  bool safe() const { return flag_ != 0; }
  const ValueList& list() const;    // kList, kTuple or kDictView
  ValueList& mutable_list() const;  // kList: Python lists are shared by reference
  const Dict& dict() const;
  Object& object() const;
  const Callable& callable() const;
  const std::string& undefined_hint() const;
  bool undefined_unsafe() const { return flag_ != 0; }
  DictView view() const { return static_cast<DictView>(flag_); }
  IteratorState& iterator() const;

  bool Truthy() const;
  // Python's type(x).__name__: "str", "int", "NoneType", "list", ...
  std::string TypeName() const;
  // Python's `is`: singletons and small ints by value, containers by identity.
  bool SameAs(const Value& other) const;
  // How many containers deep this value nests: 0 for scalars, 1 + the deepest element for
  // lists, tuples, dicts and the like (an upper bound once a list has been popped).
  int depth() const;

 private:
  // A list, tuple or dict view holding `items` (the kinds whose pointer is a ValueList).
  static Value ItemsOf(Kind kind, ValueList items);

  Kind kind_ = Kind::kUndefined;
  uint8_t flag_ = 0;    // string: Markup; undefined: unsafe; view: which DictView
  uint16_t depth_ = 0;  // containers: nesting depth, saturating
  union {
    bool b_;
    int64_t i_;
    double f_;
  };
  std::shared_ptr<void> ptr_;  // string, undefined hint, list, dict, object, callable, iterator
};

// Python ==: numbers by value across bool/int/float, containers element-wise, list != tuple,
// undefined == undefined (as jinja2's Undefined), objects and callables by identity.
bool Equals(const Value& a, const Value& b);

// An insertion-ordered dict with Python key equality (1, 1.0 and True are one key).
class Dict {
 public:
  using Entry = std::pair<Value, Value>;
  const Value* Find(const Value& key) const;
  const Value* Find(std::string_view key) const;
  void Set(Value key, Value value);  // overwrites in place, else appends
  void AppendUnique(Value key, Value value) {
    entries_.emplace_back(std::move(key), std::move(value));
  }
  const std::vector<Entry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }

 private:
  std::vector<Entry> entries_;
};

// Attribute bags with behaviour: namespace(), the loop variable, cycler, joiner.
class Object {
 public:
  virtual ~Object() = default;
  virtual std::string TypeName() const = 0;
  // Undefined (with jinja2's hint) when there is no such attribute.
  virtual Value GetAttr(std::string_view name) const = 0;
  // Only namespaces accept `{% set ns.x = ... %}`.
  virtual Status SetAttr(std::string_view name, Value value);
  // Python's repr; `depth` is how deep it sits inside other values (objects holding values print
  // those one level deeper).
  virtual std::string Repr(int depth) const = 0;
  // Only the loop object is callable (`loop(children)` in a recursive loop).
  virtual Result<Value> CallObject(Interpreter& interpreter, CallArgs args);
  // How deeply the values this object holds nest (see Value::depth).
  virtual int Depth() const { return 0; }
  // Drops the values held, ending any reference cycle through this object; called when the
  // render that made it finishes.
  virtual void ReleaseValues() {}
};

struct CallArgs {
  ValueList positional;
  std::vector<std::pair<std::string, Value>> keywords;

  // Removes and returns the keyword `name`, or undefined.
  Value TakeKeyword(std::string_view name);
};

// Functions, macros and bound methods.
class Callable {
 public:
  virtual ~Callable() = default;
  virtual Result<Value> Call(Interpreter& interpreter, CallArgs args) const = 0;
  virtual std::string Repr() const = 0;
};

}  // namespace smallmind::jinja
