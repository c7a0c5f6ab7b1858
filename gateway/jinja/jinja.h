// The Jinja library's public face (smallmind::jinja; README.md beside this file): what a host such
// as the gateway's chat templates uses. Template parses once and renders any number of times with
// RenderLimits; Value, FromJson and Callable carry the host's inputs and functions in (BindArgs
// binds a host function's arguments Python-style); the syntax-tree walks let a host analyse a
// template (which variables it loops over). Everything behind it is an implementation detail.
#pragma once

#include "gateway/jinja/args.h"         // BindArgs, BoundArgs: host functions' arguments
#include "gateway/jinja/ast.h"          // Stmt, Expr, WalkStmts: template analyses
#include "gateway/jinja/interpreter.h"  // Interpreter, Frame, RenderLimits
#include "gateway/jinja/json.h"         // FromJson, ToJson: request JSON in, tojson out
#include "gateway/jinja/repr.h"         // Str, Repr: what {{ x }} prints
#include "gateway/jinja/template.h"     // Template: Parse, Render
#include "gateway/jinja/unicode.h"      // FindInvalidUtf8: inputs are checked on entry
#include "gateway/jinja/value.h"        // Value, Callable, CallArgs
