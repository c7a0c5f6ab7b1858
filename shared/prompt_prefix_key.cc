#include "shared/prompt_prefix_key.h"

#include <bit>

#include "shared/hash64.h"

namespace smallmind::shared {
namespace {

static_assert(std::endian::native == std::endian::little,
              "token id prompts are hashed as their in-memory little-endian words");

// Seeds that keep text and token-id keys apart (and apart from other uses of StreamHasher).
constexpr uint64_t kTextSeed = 0x7072656669787431ULL;   // "prefixt1"
constexpr uint64_t kTokenSeed = 0x7072656669786931ULL;  // "prefixi1"

PromptPrefixKeys KeysOf(const unsigned char* bytes, uint64_t size, uint64_t seed) {
  PromptPrefixKeys out;
  out.input_bytes = size;
  StreamHasher h(seed);
  uint64_t fed = 0;
  for (uint32_t cut : kPromptPrefixCuts) {
    if (cut > size) break;
    h.Update(bytes + fed, cut - fed);
    fed = cut;
    out.keys[out.count++] = PromptPrefixKey{h.Finish(), cut};
  }
  return out;
}

}  // namespace

PromptPrefixKeys TextPromptPrefixKeys(std::string_view text) {
  return KeysOf(reinterpret_cast<const unsigned char*>(text.data()), text.size(), kTextSeed);
}

PromptPrefixKeys TokenPromptPrefixKeys(std::span<const uint32_t> ids) {
  return KeysOf(reinterpret_cast<const unsigned char*>(ids.data()), ids.size_bytes(), kTokenSeed);
}

}  // namespace smallmind::shared
