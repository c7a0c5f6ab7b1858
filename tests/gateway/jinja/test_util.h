// Helpers for the Jinja interpreter tests: render a template with variables given as JSON, and get
// either the text or the error. Expected strings in the tests were produced by jinja2 3.1.2 (Debian
// 12's python3-jinja2) configured as transformers configures it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "gateway/jinja/json.h"
#include "gateway/jinja/template.h"

namespace smallmind::jinja::testing {

struct Rendered {
  bool ok = false;
  std::string text;   // the output when ok
  std::string error;  // the message otherwise (parse or render)
};

inline Rendered RenderWith(const std::string& source, const nlohmann::ordered_json& vars,
                           const RenderLimits& limits = {}) {
  Rendered r;
  auto tmpl = Template::Parse(source);
  if (!tmpl.ok()) {
    r.error = tmpl.status().message();
    return r;
  }
  Variables v;
  for (const auto& [key, value] : vars.items()) v.emplace_back(key, FromJson(value).value());
  auto out = tmpl->Render(v, nullptr, limits);
  if (!out.ok()) {
    r.error = out.status().message();
    return r;
  }
  r.ok = true;
  r.text = std::move(out).value();
  return r;
}

// JSON from text, so test variables can be written inside gtest macros.
inline nlohmann::ordered_json J(const char* text) { return nlohmann::ordered_json::parse(text); }

// The rendered text, or "ERROR: <message>" so a failing expectation shows what happened.
inline std::string Render(const std::string& source,
                          const nlohmann::ordered_json& vars = nlohmann::ordered_json::object()) {
  Rendered r = RenderWith(source, vars);
  return r.ok ? r.text : "ERROR: " + r.error;
}

}  // namespace smallmind::jinja::testing
