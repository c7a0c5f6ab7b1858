#include "shared/json_reader.h"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace smallmind::shared {
namespace {

using Json = nlohmann::ordered_json;

// Objects up to this many keys look duplicates up by a scan (cheaper than hashing a few keys);
// larger ones through a hash table built when they reach it.
constexpr size_t kScanKeys = 8;

// One open array or object: where it lives and, for an object, where its next value goes.
struct Frame {
  Json* value = nullptr;
  Json* slot = nullptr;                           // objects: the value of the last key read
  std::string key;                                // objects: the last key read (for error paths)
  std::unordered_map<std::string, size_t> index;  // objects past kScanKeys: key -> position
};

// nlohmann's SAX interface, building the document as its DOM parser does but inserting keys
// without the ordered map's linear find. Owned by one ReadJson call.
class Builder {
 public:
  Builder(Json* root, const JsonLimits& limits) : root_(root), limits_(limits) {}

  bool null() { return Put(Json(nullptr)); }
  bool boolean(bool v) { return Put(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return Put(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return Put(Json(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return Put(Json(v)); }
  bool string(Json::string_t& s) {
    if (s.size() > limits_.max_string_bytes) {
      return Fail(fmt::format("the string at {} is {} bytes; at most {}", Path(stack_.size(), true),
                              s.size(), limits_.max_string_bytes));
    }
    return Put(Json(std::move(s)));
  }
  bool binary(Json::binary_t& b) { return Put(Json(std::move(b))); }
  bool start_object(std::size_t) { return Open(Json::object()); }
  bool start_array(std::size_t) { return Open(Json::array()); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(Json::string_t& k);
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    syntax_error_ = true;
    return Fail(e.what());
  }

  const std::string& error() const { return error_; }
  bool syntax_error() const { return syntax_error_; }

 private:
  // Places `v` where the innermost open container wants its next value; returns where it went.
  Json* Place(Json&& v) {
    if (stack_.empty()) {
      *root_ = std::move(v);
      return root_;
    }
    Frame& top = stack_.back();
    if (top.value->is_array()) {
      auto& array = top.value->get_ref<Json::array_t&>();
      array.push_back(std::move(v));
      return &array.back();
    }
    *top.slot = std::move(v);
    return top.slot;
  }
  bool Put(Json&& v) {
    Place(std::move(v));
    return true;
  }
  bool Open(Json&& container) {
    if (static_cast<int>(stack_.size()) >= limits_.max_depth) {
      return Fail(fmt::format("arrays and objects nest more than {} deep (at {})",
                              limits_.max_depth, Path(stack_.size(), true)));
    }
    Json* placed = Place(std::move(container));
    stack_.emplace_back().value = placed;
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }
  bool Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }
  // The JSON Pointer of the value the first `frames` open containers lead to ("/" for the root);
  // the innermost array's next element when `next` (a value not yet placed), else its last.
  std::string Path(size_t frames, bool next = false) const {
    std::string path;
    for (size_t i = 0; i < frames; ++i) {
      const Frame& f = stack_[i];
      const bool pending = next && i + 1 == frames;
      path += '/';
      path += f.value->is_array() ? std::to_string(f.value->size() - (pending ? 0 : 1)) : f.key;
    }
    return path.empty() ? "/" : path;
  }

  Json* root_;
  const JsonLimits& limits_;
  std::vector<Frame> stack_;
  std::string error_;
  bool syntax_error_ = false;
};

bool Builder::key(Json::string_t& k) {
  Frame& top = stack_.back();
  auto& object = top.value->get_ref<Json::object_t&>();
  // The ordered map is a vector of pairs underneath: append to it directly.
  auto& pairs = static_cast<Json::object_t::Container&>(object);
  if (k.size() > limits_.max_key_bytes) {
    return Fail(fmt::format("a key of the object at {} is {} bytes; at most {}",
                            Path(stack_.size() - 1), k.size(), limits_.max_key_bytes));
  }
  size_t at = pairs.size();
  if (pairs.size() < kScanKeys) {
    for (size_t i = 0; i < pairs.size(); ++i) {
      if (pairs[i].first == k) at = i;
    }
  } else {
    if (top.index.empty()) {
      for (size_t i = 0; i < pairs.size(); ++i) top.index.emplace(pairs[i].first, i);
    }
    at = top.index.try_emplace(k, pairs.size()).first->second;
  }
  if (at == pairs.size()) {
    if (pairs.size() >= limits_.max_object_keys) {
      return Fail(fmt::format("the object at {} has more than {} keys", Path(stack_.size() - 1),
                              limits_.max_object_keys));
    }
    pairs.emplace_back(k, nullptr);
  }
  top.slot = &pairs[at].second;
  *top.slot = nullptr;  // a repeated key: its last value wins, in its first place
  top.key = std::move(k);
  return true;
}

}  // namespace

Result<nlohmann::ordered_json> ReadJson(std::string_view text, const JsonLimits& limits,
                                        std::string_view what) {
  Json root;
  Builder builder(&root, limits);
  bool ok = false;
  try {
    ok = Json::sax_parse(text, &builder, nlohmann::detail::input_format_t::json,
                         /*strict=*/true, /*ignore_comments=*/false);
  } catch (const Json::exception& e) {  // not expected: parse_error above returns false
    return InvalidArgument(fmt::format("{} is not valid JSON: {}", what, e.what()));
  }
  if (!ok) {
    const std::string& e = builder.error();
    if (e.empty()) return InvalidArgument(fmt::format("{} is not valid JSON", what));
    if (builder.syntax_error()) {
      return InvalidArgument(fmt::format("{} is not valid JSON: {}", what, e));
    }
    return InvalidArgument(fmt::format("{} is refused: {}", what, e));
  }
  return root;
}

}  // namespace smallmind::shared
