// The values the interpreter makes while rendering: the `loop` variable of a for loop (index,
// first, last, previtem, cycle(), changed(), and loop(...) for recursive loops) and macros (also
// the caller() of a call block). They point into the template's tree, so they live no longer than
// the render that made them. Owned by one render; not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "gateway/jinja/ast.h"
#include "gateway/jinja/interpreter.h"
#include "gateway/jinja/value.h"

namespace smallmind::jinja {

class LoopObject : public Object, public std::enable_shared_from_this<LoopObject> {
 public:
  LoopObject(std::shared_ptr<const ValueList> items, int depth0, const ForStmt* stmt,
             FramePtr outer)
      : items_(std::move(items)), depth0_(depth0), stmt_(stmt), outer_(std::move(outer)) {}

  void set_index0(size_t i) { index0_ = i; }

  std::string TypeName() const override { return "LoopContext"; }
  Value GetAttr(std::string_view name) const override;
  std::string Repr(int depth) const override;
  int Depth() const override;
  void ReleaseValues() override;
  // loop(iterable): renders the loop body again, one level deeper (recursive loops only).
  Result<Value> CallObject(Interpreter& in, CallArgs args) override;

  Result<Value> Cycle(CallArgs args) const;
  Result<Value> Changed(CallArgs args);

 private:
  std::shared_ptr<const ValueList> items_;  // shared: the object may outlive its loop
  size_t index0_ = 0;
  int depth0_;
  const ForStmt* stmt_;
  FramePtr outer_;
  bool has_changed_value_ = false;
  ValueList last_changed_;
};

class MacroCallable : public Callable {
 public:
  MacroCallable(const MacroDef* def, FramePtr closure) : def_(def), closure_(std::move(closure)) {}
  Result<Value> Call(Interpreter& in, CallArgs args) const override {
    return in.InvokeMacro(*def_, closure_, std::move(args));
  }
  std::string Repr() const override { return "<Macro '" + def_->name + "'>"; }

 private:
  const MacroDef* def_;
  FramePtr closure_;
};

}  // namespace smallmind::jinja
