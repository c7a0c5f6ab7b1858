#include "gateway/jinja/runtime_objects.h"

#include <algorithm>

#include "gateway/jinja/args.h"
#include "gateway/jinja/repr.h"

namespace smallmind::jinja {
namespace {

class LoopMethod : public Callable {
 public:
  LoopMethod(std::shared_ptr<LoopObject> loop, bool cycle)
      : loop_(std::move(loop)), cycle_(cycle) {}
  Result<Value> Call(Interpreter&, CallArgs args) const override {
    return cycle_ ? loop_->Cycle(std::move(args)) : loop_->Changed(std::move(args));
  }
  std::string Repr() const override {
    return std::string("<bound method LoopContext.") + (cycle_ ? "cycle" : "changed") + ">";
  }

 private:
  std::shared_ptr<LoopObject> loop_;
  bool cycle_;
};

}  // namespace

Value LoopObject::GetAttr(std::string_view name) const {
  const int64_t length = static_cast<int64_t>(items_->size());
  const int64_t i = static_cast<int64_t>(index0_);
  if (name == "index") return Value::Int(i + 1);
  if (name == "index0") return Value::Int(i);
  if (name == "revindex") return Value::Int(length - i);
  if (name == "revindex0") return Value::Int(length - i - 1);
  if (name == "first") return Value::Bool(i == 0);
  if (name == "last") return Value::Bool(i == length - 1);
  if (name == "length") return Value::Int(length);
  if (name == "depth") return Value::Int(depth0_ + 1);
  if (name == "depth0") return Value::Int(depth0_);
  if (name == "previtem") {
    if (i == 0) return Value::Undefined("there is no previous item");
    return (*items_)[index0_ - 1];
  }
  if (name == "nextitem") {
    if (i >= length - 1) return Value::Undefined("there is no next item");
    return (*items_)[index0_ + 1];
  }
  if (name == "cycle" || name == "changed") {
    auto self = std::const_pointer_cast<LoopObject>(shared_from_this());
    return Value::FromCallable(std::make_shared<LoopMethod>(std::move(self), name == "cycle"));
  }
  return Value();
}

int LoopObject::Depth() const {
  int d = 1;
  for (const Value& v : *items_) d = std::max(d, 1 + v.depth());
  return d;
}

void LoopObject::ReleaseValues() {
  outer_.reset();
  last_changed_.clear();
}

std::string LoopObject::Repr(int) const {
  return "<LoopContext " + std::to_string(index0_ + 1) + "/" + std::to_string(items_->size()) + ">";
}

Result<Value> LoopObject::CallObject(Interpreter& in, CallArgs args) {
  if (!stmt_->recursive) {
    return shared::InvalidArgument(
        "The loop must have the 'recursive' marker to be called recursively.");
  }
  SM_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("loop", std::move(args), {"iterable"}, 1));
  if (!outer_) return shared::InvalidArgument("the loop has ended");
  SM_ASSIGN_OR_RETURN(std::string out, in.RunLoop(*stmt_, outer_, *a[0], depth0_ + 1));
  return Value::String(std::move(out));
}

Result<Value> LoopObject::Cycle(CallArgs args) const {
  if (!args.keywords.empty()) return shared::InvalidArgument("cycle() takes no keyword arguments");
  if (args.positional.empty()) return shared::InvalidArgument("no items for cycling given");
  return args.positional[index0_ % args.positional.size()];
}

Result<Value> LoopObject::Changed(CallArgs args) {
  if (!args.keywords.empty())
    return shared::InvalidArgument("changed() takes no keyword arguments");
  const Value now = Value::Tuple(args.positional);
  if (has_changed_value_ && Equals(Value::Tuple(last_changed_), now)) return Value::Bool(false);
  has_changed_value_ = true;
  last_changed_ = std::move(args.positional);
  return Value::Bool(true);
}

}  // namespace smallmind::jinja
