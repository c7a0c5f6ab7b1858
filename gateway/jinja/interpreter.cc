// Statement half of the Interpreter (see interpreter.h).
#include "gateway/jinja/interpreter.h"

#include <memory>
#include <vector>

#include "gateway/jinja/access.h"
#include "gateway/jinja/filters.h"
#include "gateway/jinja/repr.h"
#include "gateway/jinja/runtime_objects.h"
#include "gateway/jinja/tests.h"

namespace smallmind::jinja {
namespace {

using shared::InvalidArgument;

Status CheckDepth(const Value& v) {
  if (v.depth() <= kMaxValueDepth) return Status::Ok();
  return InvalidArgument("a value nests deeper than " + std::to_string(kMaxValueDepth) + " levels");
}

// Appends `item`, first dropping the entries already gone when the list has doubled since the
// last sweep, so a loop that makes a namespace per iteration keeps the list short.
template <typename T>
void AppendWeak(std::vector<std::weak_ptr<T>>& list, const std::shared_ptr<T>& item) {
  if (list.size() >= 64 && list.size() == list.capacity()) {
    std::erase_if(list, [](const std::weak_ptr<T>& w) { return w.expired(); });
  }
  list.push_back(item);
}

// InvokeMacro's step after the named parameters: binds `caller`, `kwargs` and `varargs` from
// what `args` has left, or fails on arguments the macro does not take.
Status BindMacroExtras(const MacroDef& def, CallArgs& args, bool found_caller, Frame& scope) {
  const size_t argc = def.params.size();
  const ValueList& pos = args.positional;
  if (def.uses_caller && !found_caller) {
    Value caller = args.TakeKeyword("caller");
    scope.Set("caller", caller.is_undefined() ? Value::Undefined("No caller defined") : caller);
  }
  if (def.uses_kwargs) {
    Dict kwargs;
    for (auto& [k, v] : args.keywords) kwargs.Set(Value::String(k), std::move(v));
    scope.Set("kwargs", Value::FromDict(std::move(kwargs)));
  } else if (!args.keywords.empty()) {
    if (args.keywords[0].first == "caller") {
      return InvalidArgument("macro '" + def.name +
                             "' was invoked with two values for the special caller argument. "
                             "This is most likely a bug.");
    }
    return InvalidArgument("macro '" + def.name + "' takes no keyword argument '" +
                           args.keywords[0].first + "'");
  }
  if (def.uses_varargs) {
    scope.Set(
        "varargs",
        Value::Tuple(pos.size() > argc
                         ? ValueList(pos.begin() + static_cast<std::ptrdiff_t>(argc), pos.end())
                         : ValueList{}));
  } else if (pos.size() > argc) {
    return InvalidArgument("macro '" + def.name + "' takes not more than " + std::to_string(argc) +
                           " argument(s)");
  }
  return Status::Ok();
}

}  // namespace

const Value* Frame::Lookup(std::string_view name) const {
  for (const Frame* f = this; f != nullptr; f = f->parent_.get()) {
    for (const auto& [n, v] : f->vars_) {
      if (n == name) return &v;
    }
  }
  return nullptr;
}

void Frame::Set(std::string_view name, Value value) {
  for (auto& [n, v] : vars_) {
    if (n == name) {
      v = std::move(value);
      return;
    }
  }
  vars_.emplace_back(std::string(name), std::move(value));
}

Result<std::string> Interpreter::Render(const Body& body, const FramePtr& root) {
  stack_base_ = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  std::string out;
  out_ = &out;
  Result<Flow> flow = Exec(body, root);
  out_ = nullptr;
  for (const auto& weak : frames_to_release_) {
    if (FramePtr frame = weak.lock()) frame->Clear();
  }
  for (const auto& weak : objects_to_release_) {
    if (std::shared_ptr<Object> object = weak.lock()) object->ReleaseValues();
  }
  root->Clear();
  if (!flow.ok()) return flow.status();
  return out;
}

void Interpreter::ReleaseAtEnd(const FramePtr& frame) { AppendWeak(frames_to_release_, frame); }

void Interpreter::ReleaseAtEnd(const std::shared_ptr<Object>& object) {
  AppendWeak(objects_to_release_, object);
}

Status Interpreter::Charge(int64_t units) {
  work_ += units;
  if (work_ > limits_.max_work) {
    return InvalidArgument("the template did more than " + std::to_string(limits_.max_work) +
                           " units of work (a loop that runs too long?)");
  }
  return Status::Ok();
}

Status Interpreter::CheckStack() const {
  const auto here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  const uintptr_t used = here < stack_base_ ? stack_base_ - here : here - stack_base_;
  if (used > limits_.max_stack_bytes) {
    return InvalidArgument(
        "the template nests too deeply to render (blocks inside macro calls "
        "used more than " +
        std::to_string(limits_.max_stack_bytes >> 10) + " KiB of stack)");
  }
  return Status::Ok();
}

Status Interpreter::CheckString(size_t bytes) const {
  if (bytes > limits_.max_output_bytes) {
    return InvalidArgument("a string would exceed the render limit of " +
                           std::to_string(limits_.max_output_bytes) + " bytes");
  }
  return Status::Ok();
}

Status Interpreter::CheckItems(size_t items) const {
  if (items > limits_.max_items) {
    return InvalidArgument("a list would exceed the render limit of " +
                           std::to_string(limits_.max_items) + " items");
  }
  return Status::Ok();
}

Status Interpreter::Raise(std::string message) {
  error_annotated_ = true;  // the template's own words, exactly
  return InvalidArgument(std::move(message));
}

Status Interpreter::Annotate(Status status) {
  if (status.ok() || error_annotated_) return status;
  error_annotated_ = true;
  return Status(status.code(),
                error_prefix_ + "line " + std::to_string(line_) + ": " + status.message());
}

Status Interpreter::Emit(std::string_view text) {
  out_->append(text);
  if (out_->size() > limits_.max_output_bytes) {
    return InvalidArgument("the rendered text would exceed the limit of " +
                           std::to_string(limits_.max_output_bytes) + " bytes");
  }
  return Status::Ok();
}

Result<std::string> Interpreter::Capture(const Body& body, const FramePtr& scope) {
  std::string buffer;
  std::string* saved = out_;
  out_ = &buffer;
  Result<Flow> flow = Exec(body, scope);
  out_ = saved;
  if (!flow.ok()) return flow.status();
  return buffer;
}

Result<Flow> Interpreter::Exec(const Body& body, const FramePtr& frame) {
  for (const StmtPtr& stmt : body) {
    SM_ASSIGN_OR_RETURN(Flow flow, ExecStmt(*stmt, frame));
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

Result<Flow> Interpreter::ExecStmt(const Stmt& stmt, const FramePtr& frame) {
  line_ = stmt.line;
  SM_RETURN_IF_ERROR(CheckStack());
  Status status;
  switch (stmt.kind) {
    case StmtKind::kOutput: status = ExecOutput(static_cast<const OutputStmt&>(stmt), frame); break;
    case StmtKind::kIf: {
      Result<Flow> flow = ExecIf(static_cast<const IfStmt&>(stmt), frame);
      if (!flow.ok()) return Annotate(flow.status());
      return flow;
    }
    case StmtKind::kFor: status = ExecFor(static_cast<const ForStmt&>(stmt), frame); break;
    case StmtKind::kSet: {
      const auto& s = static_cast<const SetStmt&>(stmt);
      Result<Value> v = Eval(*s.value, *frame);
      status = v.ok() ? Assign(s.target, std::move(v).value(), *frame) : v.status();
      break;
    }
    case StmtKind::kSetBlock:
      status = ExecSetBlock(static_cast<const SetBlockStmt&>(stmt), frame);
      break;
    case StmtKind::kMacro: {
      const auto& m = static_cast<const MacroStmt&>(stmt);
      frame->Set(m.def.name, Value::FromCallable(std::make_shared<MacroCallable>(&m.def, frame)));
      ReleaseAtEnd(frame);
      break;
    }
    case StmtKind::kCallBlock:
      status = ExecCallBlock(static_cast<const CallBlockStmt&>(stmt), frame);
      break;
    case StmtKind::kFilterBlock:
      status = ExecFilterBlock(static_cast<const FilterBlockStmt&>(stmt), frame);
      break;
    case StmtKind::kWith: status = ExecWith(static_cast<const WithStmt&>(stmt), frame); break;
    case StmtKind::kBreak: return Flow::kBreak;
    case StmtKind::kContinue: return Flow::kContinue;
    case StmtKind::kScope: {
      Result<Flow> flow =
          Exec(static_cast<const ScopeStmt&>(stmt).body, std::make_shared<Frame>(frame));
      if (!flow.ok()) return Annotate(flow.status());
      break;
    }
  }
  if (!status.ok()) return Annotate(status);
  return Flow::kNormal;
}

Status Interpreter::ExecOutput(const OutputStmt& s, const FramePtr& frame) {
  for (const OutputPart& part : s.parts) {
    if (!part.expr) {
      SM_RETURN_IF_ERROR(Emit(part.data));
      continue;
    }
    SM_ASSIGN_OR_RETURN(Value v, Eval(*part.expr, *frame));
    if (v.is_string()) {
      SM_RETURN_IF_ERROR(Emit(v.str()));
    } else {
      SM_RETURN_IF_ERROR(Emit(Str(v)));
    }
  }
  return Status::Ok();
}

Result<Flow> Interpreter::ExecIf(const IfStmt& s, const FramePtr& frame) {
  for (const auto& [test, body] : s.branches) {
    SM_ASSIGN_OR_RETURN(Value v, Eval(*test, *frame));
    if (v.Truthy()) return Exec(body, frame);
  }
  return Exec(s.otherwise, frame);
}

Status Interpreter::ExecFor(const ForStmt& s, const FramePtr& frame) {
  SM_ASSIGN_OR_RETURN(Value iterable, Eval(*s.iter, *frame));
  SM_ASSIGN_OR_RETURN(ValueList items, Iterate(iterable));
  SM_ASSIGN_OR_RETURN(Flow flow, RunLoopBody(s, frame, std::move(items), 0));
  (void)flow;
  return Status::Ok();
}

Result<std::string> Interpreter::RunLoop(const ForStmt& stmt, const FramePtr& outer,
                                         const Value& iterable, int depth0) {
  if (depth0 >= limits_.max_call_depth) {
    return InvalidArgument("recursive loop nests deeper than " +
                           std::to_string(limits_.max_call_depth) + " levels");
  }
  SM_ASSIGN_OR_RETURN(ValueList items, Iterate(iterable));
  std::string buffer;
  std::string* saved = out_;
  out_ = &buffer;
  Result<Flow> flow = RunLoopBody(stmt, outer, std::move(items), depth0);
  out_ = saved;
  if (!flow.ok()) return flow.status();
  return buffer;
}

Result<Flow> Interpreter::RunLoopBody(const ForStmt& s, const FramePtr& outer, ValueList items,
                                      int depth0) {
  if (s.filter) {  // `for x in xs if cond`: the test sees the target, not `loop`
    ValueList kept;
    for (Value& item : items) {
      SM_RETURN_IF_ERROR(Charge(1));
      Frame test_frame(outer);
      SM_RETURN_IF_ERROR(Assign(s.target, item, test_frame));
      SM_ASSIGN_OR_RETURN(Value keep, Eval(*s.filter, test_frame));
      if (keep.Truthy()) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    SM_ASSIGN_OR_RETURN(Flow flow, Exec(s.otherwise, std::make_shared<Frame>(outer)));
    (void)flow;
    return Flow::kNormal;
  }
  auto shared_items = std::make_shared<const ValueList>(std::move(items));
  auto loop = std::make_shared<LoopObject>(shared_items, depth0, &s, outer);
  ReleaseAtEnd(loop);
  const Value loop_value = Value::FromObject(loop);
  for (size_t i = 0; i < shared_items->size(); ++i) {
    SM_RETURN_IF_ERROR(Charge(1));
    loop->set_index0(i);
    auto scope = std::make_shared<Frame>(outer);
    scope->Set("loop", loop_value);
    SM_RETURN_IF_ERROR(Assign(s.target, (*shared_items)[i], *scope));
    SM_ASSIGN_OR_RETURN(Flow flow, Exec(s.body, scope));
    if (flow == Flow::kBreak) break;
  }
  return Flow::kNormal;
}

Status Interpreter::Assign(const Target& target, Value value, Frame& frame) {
  SM_RETURN_IF_ERROR(CheckDepth(value));
  if (!target.is_tuple) {
    if (target.attr.empty()) {
      frame.Set(target.name, std::move(value));
      return Status::Ok();
    }
    const Value* ns = frame.Lookup(target.name);
    if (ns == nullptr || !ns->is_object() || ns->object().TypeName() != "Namespace") {
      return InvalidArgument("cannot assign attribute on non-namespace object");
    }
    return ns->object().SetAttr(target.attr, std::move(value));
  }
  SM_ASSIGN_OR_RETURN(ValueList items, Iterate(value));
  if (items.size() < target.items.size()) {
    return InvalidArgument("not enough values to unpack (expected " +
                           std::to_string(target.items.size()) + ", got " +
                           std::to_string(items.size()) + ")");
  }
  if (items.size() > target.items.size()) {
    return InvalidArgument("too many values to unpack (expected " +
                           std::to_string(target.items.size()) + ")");
  }
  for (size_t i = 0; i < items.size(); ++i) {
    SM_RETURN_IF_ERROR(Assign(target.items[i], std::move(items[i]), frame));
  }
  return Status::Ok();
}

Status Interpreter::ExecSetBlock(const SetBlockStmt& s, const FramePtr& frame) {
  SM_ASSIGN_OR_RETURN(std::string text, Capture(s.body, std::make_shared<Frame>(frame)));
  Value value = Value::String(std::move(text));
  if (s.filter) {
    SM_ASSIGN_OR_RETURN(value,
                        EvalFilter(static_cast<const FilterExpr&>(*s.filter), *frame, &value));
  }
  return Assign(s.target, std::move(value), *frame);
}

Status Interpreter::ExecFilterBlock(const FilterBlockStmt& s, const FramePtr& frame) {
  SM_ASSIGN_OR_RETURN(std::string text, Capture(s.body, std::make_shared<Frame>(frame)));
  Value input = Value::String(std::move(text));
  SM_ASSIGN_OR_RETURN(Value v,
                      EvalFilter(static_cast<const FilterExpr&>(*s.filter), *frame, &input));
  return Emit(Str(v));
}

Status Interpreter::ExecCallBlock(const CallBlockStmt& s, const FramePtr& frame) {
  const auto& call = static_cast<const CallExpr&>(*s.call);
  SM_ASSIGN_OR_RETURN(Value callee, Eval(*call.callee, *frame));
  SM_ASSIGN_OR_RETURN(CallArgs args, EvalArgs(call.args, *frame));
  args.keywords.emplace_back(
      "caller", Value::FromCallable(std::make_shared<MacroCallable>(&s.caller, frame)));
  SM_ASSIGN_OR_RETURN(Value v, Call(callee, std::move(args)));
  return Emit(Str(v));
}

Status Interpreter::ExecWith(const WithStmt& s, const FramePtr& frame) {
  auto scope = std::make_shared<Frame>(frame);
  for (const auto& [target, expr] : s.assignments) {
    SM_ASSIGN_OR_RETURN(Value v, Eval(*expr, *frame));
    SM_RETURN_IF_ERROR(Assign(target, std::move(v), *scope));
  }
  SM_ASSIGN_OR_RETURN(Flow flow, Exec(s.body, scope));
  (void)flow;
  return Status::Ok();
}

Result<Value> Interpreter::InvokeMacro(const MacroDef& def, const FramePtr& closure,
                                       CallArgs args) {
  if (call_depth_ >= limits_.max_call_depth) {
    return InvalidArgument("macro calls nest deeper than " +
                           std::to_string(limits_.max_call_depth) + " levels");
  }
  SM_RETURN_IF_ERROR(Charge(1));
  const size_t argc = def.params.size();
  auto scope = std::make_shared<Frame>(closure);
  ValueList& pos = args.positional;
  const size_t first_default = argc - def.defaults.size();
  // jinja2's Macro.__call__: a `caller` parameter counts as given when the positionals cover
  // every parameter, or when it is among those left to keywords.
  bool found_caller = false;
  for (size_t i = 0; i < argc; ++i) {
    const std::string& name = def.params[i];
    if (name == "caller" && (pos.size() >= argc || i >= pos.size())) found_caller = true;
    Value v;
    bool given = i < pos.size();
    if (given) {
      v = pos[i];
    } else {
      for (const auto& kw : args.keywords) given |= kw.first == name;
      if (given) v = args.TakeKeyword(name);
    }
    if (!given) {
      if (i >= first_default) {
        SM_ASSIGN_OR_RETURN(v, Eval(*def.defaults[i - first_default], *scope));
      } else {
        v = Value::Undefined("parameter '" + name + "' was not provided");
      }
    }
    SM_RETURN_IF_ERROR(CheckDepth(v));
    scope->Set(name, std::move(v));
  }
  SM_RETURN_IF_ERROR(BindMacroExtras(def, args, found_caller, *scope));
  ++call_depth_;
  Result<std::string> out = Capture(def.body, scope);
  --call_depth_;
  if (!out.ok()) return out.status();
  return Value::String(std::move(out).value());
}

}  // namespace smallmind::jinja
