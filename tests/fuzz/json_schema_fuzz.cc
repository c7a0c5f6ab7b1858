// libFuzzer target for JSON Schema output (shared/json_schema + worker/sample/json_constraint).
// The input is a schema's text, a 0 byte, then the bytes a model would generate:
//  - compiling any text must end in a schema or an INVALID_ARGUMENT, never a crash or an escaped
//    exception (the gateway compiles what clients send);
//  - under a compiled schema, JsonPrefix takes the bytes until it refuses one; what it took must
//    still be completable: a closer that takes, at every step, the first byte from a short list
//    of closing bytes, else the lowest other byte JsonPrefix takes (blanks last), must reach a
//    complete object within a bound;
//  - every complete object must parse with nlohmann and be one the schema allows
//    (tests/testing/json_schema_check.h, an independent validator).
// Built by tests/fuzz/CMakeLists.txt with clang only (-fsanitize=fuzzer,address,undefined).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "shared/json_schema.h"
#include "tests/fuzz/json_walk.h"
#include "tests/testing/json_schema_check.h"
#include "worker/sample/json_constraint.h"

namespace {

using smallmind::worker::JsonPrefix;
using Json = nlohmann::ordered_json;

[[noreturn]] void Fail(const char* what, std::string_view schema, const std::string& text) {
  const auto show = [](std::string_view s) {
    return nlohmann::json(std::string(s))
        .dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  };
  std::fprintf(stderr, "%s\n  schema: %s\n  text: %s\n", what, show(schema).c_str(),
               show(text).c_str());
  std::abort();
}

void CheckAllowed(std::string_view schema, const std::string& text) {
  const Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object())
    Fail("complete but not an object", schema, text);
  if (!smallmind::testing::SchemaAllows(parsed, Json::parse(schema))) {
    Fail("complete but not what the schema allows", schema, text);
  }
}

bool MinItemsPastEight(const Json& v) {
  if (v.is_object()) {
    const auto it = v.find("minItems");
    if (it != v.end() && it->is_number_unsigned() && it->get<uint64_t>() > 8) return true;
  }
  if (v.is_object() || v.is_array()) {
    for (const Json& e : v) {
      if (MinItemsPastEight(e)) return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto* begin = reinterpret_cast<const char*>(data);
  const auto* zero = static_cast<const char*>(std::memchr(begin, 0, size));
  const std::string_view schema_text(begin, zero != nullptr ? zero - begin : size);
  const std::string_view bytes =
      zero != nullptr ? std::string_view(zero + 1, size - schema_text.size() - 1) : "";
  const auto compiled = smallmind::shared::JsonSchema::Compile(schema_text);
  if (!compiled.ok()) return 0;
  // Arrays that must hold many items (nested, a number of bytes no bound covers) are valid but
  // beyond what the closer below can write in time.
  if (MinItemsPastEight(Json::parse(schema_text))) return 0;

  JsonPrefix state(compiled->get());
  std::string text = smallmind::fuzz::TakeWhileAccepted(state, bytes);
  if (!smallmind::fuzz::CloseWith(state, "\"}]0", /*any_byte=*/true, 20000, &text)) {
    Fail("no byte taken", schema_text, text);
  }
  if (!state.complete()) Fail("could not be completed", schema_text, text);
  CheckAllowed(schema_text, text);
  return 0;
}
