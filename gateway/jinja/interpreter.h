// Interpreter: renders a parsed template (jinja_ast) with jinja2's semantics: scopes (a for-loop
// iteration, macro, with, filter or set block is a scope; if is not), lenient Undefined, loop
// variables, macros with caller(), and the sandbox's refusals. It counts its work, nesting and
// output against RenderLimits so a hostile template ends with an error, not an outage.
// Statements are in interpreter.cc, expressions in eval.cc. One Interpreter per render,
// on one thread; the tree it reads is shared and never written.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gateway/jinja/ast.h"
#include "gateway/jinja/value.h"

namespace smallmind::jinja {

struct RenderLimits {
  // The rendered text, and any one string or captured block built on the way.
  size_t max_output_bytes = 8u << 20;
  // Elements of any one list built while rendering.
  size_t max_items = 1u << 20;
  // Units of work: one per expression evaluated, plus one per 16 bytes that string and sequence
  // operations touch. 50M is well under a second of CPU; real chat templates use thousands.
  int64_t max_work = 50'000'000;
  // Nested macro calls (recursion included) and recursive loop levels.
  int max_call_depth = 64;
  // Stack the render may use below where it started: nesting within the parser's limit times
  // max_call_depth can still reach megabytes, more than a thread may have. Real templates use
  // well under a tenth of this. Sanitizer builds have frames several times larger.
#if defined(__SANITIZE_ADDRESS__)
  size_t max_stack_bytes = 4u << 20;
#else
  size_t max_stack_bytes = 1u << 20;
#endif
};

// One scope: a name -> value map with a parent. Shared so a macro keeps the scope it was
// defined in alive.
class Frame {
 public:
  explicit Frame(std::shared_ptr<Frame> parent = nullptr) : parent_(std::move(parent)) {}
  const Value* Lookup(std::string_view name) const;  // this scope, then the parents
  void Set(std::string_view name, Value value);      // in this scope
  void Clear() { vars_.clear(); }

 private:
  std::shared_ptr<Frame> parent_;
  std::vector<std::pair<std::string, Value>> vars_;
};
using FramePtr = std::shared_ptr<Frame>;

enum class Flow : uint8_t { kNormal, kBreak, kContinue };

class Interpreter {
 public:
  // `globals` (may be null) are looked up after every scope, before jinja2's builtin globals.
  // Runtime errors read `error_prefix` + "line N: " + what went wrong.
  Interpreter(const RenderLimits& limits, const Frame* globals, std::string_view error_prefix = {})
      : limits_(limits), globals_(globals), error_prefix_(error_prefix) {}

  // Renders `body` with `root` as the template's top scope.
  Result<std::string> Render(const Body& body, const FramePtr& root);

  // Services for callables, filters, tests and methods.
  Result<Value> Call(const Value& callee, CallArgs args);
  Result<Value> CallFilter(std::string_view name, Value input, CallArgs args);
  Result<bool> CallTest(std::string_view name, const Value& input, CallArgs args);
  Result<Value> InvokeMacro(const MacroDef& def, const FramePtr& closure, CallArgs args);
  Result<std::string> RunLoop(const ForStmt& stmt, const FramePtr& outer, const Value& iterable,
                              int depth0);
  Status Charge(int64_t units);
  Status ChargeBytes(size_t bytes) { return Charge(1 + static_cast<int64_t>(bytes / 16)); }
  Status CheckString(size_t bytes) const;
  Status CheckItems(size_t items) const;
  // raise_exception(): ends the render with exactly `message`.
  Status Raise(std::string message);
  // Scopes holding macros and objects holding values can end up in reference cycles (a macro's
  // scope holds the macro; a namespace can hold itself): they are emptied when the render ends.
  void ReleaseAtEnd(const FramePtr& frame);
  void ReleaseAtEnd(const std::shared_ptr<Object>& object);
  const RenderLimits& limits() const { return limits_; }

 private:
  friend class LoopObject;

  // Statements (interpreter.cc).
  Result<Flow> Exec(const Body& body, const FramePtr& frame);
  Result<Flow> ExecStmt(const Stmt& stmt, const FramePtr& frame);
  Status ExecOutput(const OutputStmt& s, const FramePtr& frame);
  Result<Flow> ExecIf(const IfStmt& s, const FramePtr& frame);
  Status ExecFor(const ForStmt& s, const FramePtr& frame);
  Result<Flow> RunLoopBody(const ForStmt& s, const FramePtr& outer, ValueList items, int depth0);
  Status ExecSetBlock(const SetBlockStmt& s, const FramePtr& frame);
  Status ExecCallBlock(const CallBlockStmt& s, const FramePtr& frame);
  Status ExecFilterBlock(const FilterBlockStmt& s, const FramePtr& frame);
  Status ExecWith(const WithStmt& s, const FramePtr& frame);
  Status Assign(const Target& target, Value value, Frame& frame);
  // Renders `body` in a new scope into a string of its own.
  Result<std::string> Capture(const Body& body, const FramePtr& scope);
  Status Emit(std::string_view text);
  Status Annotate(Status status);
  // Fails once the render has used more than limits_.max_stack_bytes of stack.
  Status CheckStack() const;

  // Expressions (eval.cc).
  Result<Value> Eval(const Expr& e, Frame& frame);
  Result<Value> EvalName(const NameExpr& e, Frame& frame);
  Result<Value> EvalCall(const CallExpr& e, Frame& frame);
  Result<CallArgs> EvalArgs(const CallArgsExpr& a, Frame& frame);
  Result<Value> EvalFilter(const FilterExpr& e, Frame& frame, Value* block_input);
  Result<Value> EvalTest(const FilterExpr& e, Frame& frame);
  Result<Value> EvalBinary(const BinaryExpr& e, Frame& frame);
  Result<Value> EvalCompare(const CompareExpr& e, Frame& frame);
  Result<Value> EvalSequence(const SequenceExpr& e, Frame& frame);
  Result<Value> EvalDict(const DictExpr& e, Frame& frame);
  Result<Value> EvalGetItem(const GetItemExpr& e, Frame& frame);

  const RenderLimits& limits_;
  const Frame* globals_;
  std::string error_prefix_;
  std::string* out_ = nullptr;  // where output goes now (blocks capture into their own)
  int64_t work_ = 0;
  int call_depth_ = 0;
  uintptr_t stack_base_ = 0;  // the stack address Render started at
  int line_ = 0;              // of the node being evaluated, for error messages
  bool error_annotated_ = false;
  std::vector<std::weak_ptr<Frame>> frames_to_release_;
  std::vector<std::weak_ptr<Object>> objects_to_release_;
};

}  // namespace smallmind::jinja
