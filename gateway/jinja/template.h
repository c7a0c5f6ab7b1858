// Template: a Jinja template parsed once and rendered any number of times. Parse() applies the
// checks jinja2 makes when it compiles (unknown filters and tests outside `if`, break outside a
// loop); Render() evaluates with fresh scopes each time. Immutable after Parse; Render is
// thread-safe and may run concurrently on one Template.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gateway/jinja/ast.h"
#include "gateway/jinja/interpreter.h"
#include "gateway/jinja/value.h"

namespace smallmind::jinja {

using Variables = std::vector<std::pair<std::string, Value>>;

class Template {
 public:
  // INVALID_ARGUMENT "line N: ..." for a syntax error.
  static Result<Template> Parse(std::string_view source);

  // Renders with `variables` as the template's context. `globals` (may be null) are environment
  // globals, seen after the context and before jinja2's builtins (range, namespace, ...).
  // Errors: INVALID_ARGUMENT, `error_prefix` + "line N: ..." for a runtime error, or exactly the
  // message a template passed to a global that calls Interpreter::Raise (raise_exception).
  Result<std::string> Render(const Variables& variables, const Frame* globals,
                             const RenderLimits& limits, std::string_view error_prefix = {}) const;

  const Body& body() const { return *body_; }

 private:
  explicit Template(std::shared_ptr<const Body> body) : body_(std::move(body)) {}
  std::shared_ptr<const Body> body_;
};

}  // namespace smallmind::jinja
