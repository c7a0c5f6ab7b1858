// libFuzzer target for the JSON output constraint (worker/sample/json_constraint): the input is
// the bytes a model would generate. JsonPrefix takes them until it refuses one; then:
//  - what it took must still be completable: a closer that picks, at every step, the first byte
//    JsonPrefix takes from a short list (quotes, closing brackets, '0', the letters of the
//    literals, continuation bytes, '{' last) must reach a complete object within a bound;
//  - every complete object (the input's own, or the closer's) must parse with nlohmann as an
//    object, without the exceptions a number out of a double's range would raise.
// Built by tests/fuzz/CMakeLists.txt with clang only (-fsanitize=fuzzer,address,undefined).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tests/fuzz/json_walk.h"
#include "worker/sample/json_constraint.h"

namespace {

using smallmind::worker::JsonPrefix;

[[noreturn]] void Fail(const char* what, const std::string& text) {
  const std::string shown =
      nlohmann::json(text).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  std::fprintf(stderr, "%s: %s\n", what, shown.c_str());
  std::abort();
}

void CheckParses(const std::string& text) {
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) Fail("complete but not a JSON object", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  JsonPrefix state;
  std::string text = smallmind::fuzz::TakeWhileAccepted(
      state, std::string_view(reinterpret_cast<const char*>(data), size));
  if (state.complete()) {
    CheckParses(text);
    return 0;
  }
  // Depth <= 64 closes, each needing a few bytes; strings, escapes and numbers a few more.
  static const std::string_view kCloser = "\"}]0:DCu\\rueals\x80\x90\xa0{";
  if (!smallmind::fuzz::CloseWith(state, kCloser, /*any_byte=*/false, 2000, &text)) {
    Fail("no closing byte taken", text);
  }
  if (!state.complete()) Fail("could not be completed", text);
  CheckParses(text);
  return 0;
}
