#include "gateway/jinja/json.h"

#include <algorithm>
#include <cstdio>

#include "gateway/jinja/ops.h"
#include "gateway/jinja/repr.h"
#include "gateway/jinja/unicode.h"

namespace smallmind::jinja {
namespace {

using shared::InvalidArgument;

// Python's json module raises RecursionError far below this on real data; a namespace holding
// itself would otherwise loop forever.
constexpr int kMaxJsonDepth = 500;

void AppendJsonString(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    const char32_t cp = unicode::Next(s, i);
    char buf[16];
    switch (cp) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (cp < 0x20 || (ensure_ascii && cp >= 0x7F)) {
      if (cp >= 0x10000) {
        const char32_t v = cp - 0x10000;
        std::snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
      } else {
        std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(cp));
      }
      out += buf;
    } else {
      out.append(s, start, i - start);
    }
  }
  out += '"';
}

class JsonWriter {
 public:
  JsonWriter(const JsonDumpOptions& o, size_t max_bytes) : o_(o), max_bytes_(max_bytes) {
    item_sep_ = o.item_separator.value_or(o.indent ? "," : ", ");
    key_sep_ = o.key_separator.value_or(": ");
  }

  Status Write(const Value& v, int depth) {
    if (out_.size() > max_bytes_) {
      return InvalidArgument("tojson output exceeds the render limit of " +
                             std::to_string(max_bytes_) + " bytes");
    }
    if (depth > kMaxJsonDepth) return InvalidArgument("maximum recursion depth exceeded in tojson");
    switch (v.kind()) {
      case Kind::kNone: out_ += "null"; return Status::Ok();
      case Kind::kBool: out_ += v.boolean() ? "true" : "false"; return Status::Ok();
      case Kind::kInt: out_ += std::to_string(v.integer()); return Status::Ok();
      case Kind::kFloat: out_ += Float(v.number()); return Status::Ok();
      case Kind::kString: AppendJsonString(out_, v.str(), o_.ensure_ascii); return Status::Ok();
      case Kind::kList:
      case Kind::kTuple: return WriteList(v.list(), depth);
      case Kind::kDict: return WriteDict(v.dict(), depth);
      default:
        return InvalidArgument("Object of type " + v.TypeName() + " is not JSON serializable");
    }
  }

  std::string& out() { return out_; }

 private:
  static std::string Float(double d) {
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
    return ReprFloat(d);
  }

  void Newline(int depth) {
    if (!o_.indent) return;
    out_ += '\n';
    for (int i = 0; i < depth; ++i) out_ += *o_.indent;
  }

  Status WriteList(const ValueList& items, int depth) {
    if (items.empty()) {
      out_ += "[]";
      return Status::Ok();
    }
    out_ += '[';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out_ += item_sep_;
      Newline(depth + 1);
      SM_RETURN_IF_ERROR(Write(items[i], depth + 1));
    }
    Newline(depth);
    out_ += ']';
    return Status::Ok();
  }

  Result<std::string> Key(const Value& k) {
    switch (k.kind()) {
      case Kind::kString: return k.str();
      case Kind::kInt: return std::to_string(k.integer());
      case Kind::kFloat: return Float(k.number());
      case Kind::kBool: return std::string(k.boolean() ? "true" : "false");
      case Kind::kNone: return std::string("null");
      default:
        return InvalidArgument("keys must be str, int, float, bool or None, not " + k.TypeName());
    }
  }

  Status WriteDict(const Dict& d, int depth) {
    if (d.size() == 0) {
      out_ += "{}";
      return Status::Ok();
    }
    std::vector<const Dict::Entry*> entries;
    for (const Dict::Entry& e : d.entries()) entries.push_back(&e);
    if (o_.sort_keys) {
      Status error;
      std::stable_sort(entries.begin(), entries.end(), [&](const auto* a, const auto* b) {
        Result<bool> lt = LessThan(a->first, b->first);
        if (!lt.ok()) error = lt.status();
        return lt.ok() && *lt;
      });
      SM_RETURN_IF_ERROR(error);
    }
    out_ += '{';
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) out_ += item_sep_;
      Newline(depth + 1);
      SM_ASSIGN_OR_RETURN(std::string key, Key(entries[i]->first));
      AppendJsonString(out_, key, o_.ensure_ascii);
      out_ += key_sep_;
      SM_RETURN_IF_ERROR(Write(entries[i]->second, depth + 1));
    }
    Newline(depth);
    out_ += '}';
    return Status::Ok();
  }

  const JsonDumpOptions& o_;
  size_t max_bytes_;
  std::string item_sep_;
  std::string key_sep_;
  std::string out_;
};

Value ValueFromJson(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::None();
    case nlohmann::ordered_json::value_t::boolean: return Value::Bool(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value::Int(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value::Float(static_cast<double>(u));
      return Value::Int(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value::Float(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::String(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      ValueList items;
      items.reserve(j.size());
      for (const auto& item : j) items.push_back(ValueFromJson(item));
      return Value::List(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict d;
      for (const auto& [key, value] : j.items())
        d.AppendUnique(Value::String(key), ValueFromJson(value));
      return Value::FromDict(std::move(d));
    }
    default: return Value::None();
  }
}

// Whether `j` nests at most `limit` containers deep, without recursing deeper than that.
bool NestsAtMost(const nlohmann::ordered_json& j, int limit) {
  if (!j.is_structured()) return true;
  if (limit <= 0) return false;
  for (const auto& item : j) {
    if (!NestsAtMost(item, limit - 1)) return false;
  }
  return true;
}

}  // namespace

Result<Value> FromJson(const nlohmann::ordered_json& j) {
  if (!NestsAtMost(j, kMaxValueDepth)) {
    return InvalidArgument("JSON input nests deeper than " + std::to_string(kMaxValueDepth) +
                           " levels");
  }
  return ValueFromJson(j);
}

Result<std::string> ToJson(const Value& v, const JsonDumpOptions& options, size_t max_bytes) {
  JsonWriter w(options, max_bytes);
  SM_RETURN_IF_ERROR(w.Write(v, 0));
  if (w.out().size() > max_bytes) {
    return InvalidArgument("tojson output exceeds the render limit of " +
                           std::to_string(max_bytes) + " bytes");
  }
  return std::move(w.out());
}

}  // namespace smallmind::jinja
