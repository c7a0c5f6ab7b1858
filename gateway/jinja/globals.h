// jinja2's default globals: range (the sandbox's, capped at 100000 items), dict, namespace (the one
// object templates may assign attributes to), cycler and joiner. Made per render; a namespace,
// cycler or joiner belongs to the render that made it. The lookup itself is thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "gateway/jinja/value.h"

namespace smallmind::jinja {

// The builtin global `name`, or an undefined value when there is none.
Value LookupBuiltinGlobal(std::string_view name);

// namespace(...): attributes from a mapping, pairs and/or keywords, as dict(...) takes them.
class NamespaceObject : public Object {
 public:
  explicit NamespaceObject(Dict attrs);
  std::string TypeName() const override { return "Namespace"; }
  Value GetAttr(std::string_view name) const override;
  Status SetAttr(std::string_view name, Value value) override;
  std::string Repr(int depth) const override;
  int Depth() const override { return depth_; }
  void ReleaseValues() override { attrs_ = Dict(); }

 private:
  Dict attrs_;
  int depth_ = 1;  // an upper bound: 1 + the deepest attribute ever held
  // Set while printing, so a namespace inside itself prints as "<Namespace {...}>" as in Python.
  // Namespaces live within one render, on one thread.
  mutable bool in_repr_ = false;
};

// dict(*args, **kwargs) as Python builds it.
Result<Dict> MakeDict(CallArgs args);

}  // namespace smallmind::jinja
