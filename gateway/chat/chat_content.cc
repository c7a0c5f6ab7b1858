#include "gateway/chat/chat_content.h"

#include <string>

namespace smallmind::gateway {
namespace {

using jinja::ExprKind;

// Looks through filters (`message.content | selectattr(...)`) to what is being iterated.
const jinja::Expr& Unfiltered(const jinja::Expr& e) {
  const jinja::Expr* cur = &e;
  while (cur->kind == ExprKind::kFilter) {
    const auto& f = static_cast<const jinja::FilterExpr&>(*cur);
    if (!f.input) break;
    cur = f.input.get();
  }
  return *cur;
}

bool IsContentAccess(const jinja::Expr& e) {
  if (e.kind == ExprKind::kGetAttr)
    return static_cast<const jinja::GetAttrExpr&>(e).attr == "content";
  if (e.kind != ExprKind::kGetItem) return false;
  const auto& key = *static_cast<const jinja::GetItemExpr&>(e).key;
  if (key.kind != ExprKind::kLiteral) return false;
  const jinja::Value& v = static_cast<const jinja::LiteralExpr&>(key).value;
  return v.is_string() && v.str() == "content";
}

}  // namespace

ContentFormat DetectContentFormat(const jinja::Body& body) {
  bool iterates_content = false;
  jinja::WalkStmts(body, [&](const jinja::Stmt& s) {
    if (s.kind != jinja::StmtKind::kFor) return;
    const auto& f = static_cast<const jinja::ForStmt&>(s);
    iterates_content |= IsContentAccess(Unfiltered(*f.iter));
  });
  return iterates_content ? ContentFormat::kOpenAI : ContentFormat::kString;
}

shared::Result<nlohmann::ordered_json> PrepareMessages(const nlohmann::ordered_json& messages,
                                                       ContentFormat format) {
  if (!messages.is_array()) return shared::InvalidArgument("messages must be an array");
  if (format == ContentFormat::kOpenAI) return messages;
  nlohmann::ordered_json out = messages;
  for (size_t i = 0; i < out.size(); ++i) {
    nlohmann::ordered_json& m = out[i];
    if (!m.is_object()) continue;  // the template decides what to make of it
    auto it = m.find("content");
    if (it == m.end() || !it->is_array()) continue;
    std::string text;
    bool first = true;
    for (const auto& part : *it) {
      const std::string where = "messages[" + std::to_string(i) + "].content";
      if (!part.is_object() || !part.contains("type") || !part["type"].is_string()) {
        return shared::InvalidArgument(where + " parts must be objects with a string 'type'");
      }
      const std::string type = part["type"].get<std::string>();
      if (type != "text") {
        return shared::InvalidArgument(where + " has a '" + type +
                                       "' part; only text parts are supported");
      }
      if (!part.contains("text") || !part["text"].is_string()) {
        return shared::InvalidArgument(where + " text part needs a string 'text'");
      }
      if (!first) text += '\n';
      text += part["text"].get<std::string>();
      first = false;
    }
    *it = text;
  }
  return out;
}

}  // namespace smallmind::gateway
