// Prompt prefix keys: hashes of the first 256, 1024, 4096 and 16384 bytes of a request's prompt,
// computed the same way by a worker (for the prompts whose KV blocks it holds in its prefix cache,
// reported in WorkerStats.cached_prefix_keys) and by the gateway's router (for the request it
// routes), so the router can send a prompt to the worker that probably has its prefix cached
// without tokenizing it. Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace smallmind::shared {

// Where prompts are cut, in bytes of the prompt input (about 64, 256, 1024 and 4096 tokens of
// text; exactly that many ids / 4 for token ids). Shorter prompts have no key: they are cheap to
// recompute, and a key over a few words would match unrelated prompts.
inline constexpr std::array<uint32_t, 4> kPromptPrefixCuts = {256, 1024, 4096, 16384};

struct PromptPrefixKey {
  uint64_t key = 0;
  uint32_t bytes = 0;  // the cut it covers: one of kPromptPrefixCuts
};

// The keys of one prompt at every cut it reaches (the first `count` entries, shortest first).
struct PromptPrefixKeys {
  int count = 0;
  std::array<PromptPrefixKey, kPromptPrefixCuts.size()> keys{};
  uint64_t input_bytes = 0;  // the whole prompt input's length in bytes
};

// The keys of a text prompt (its UTF-8 bytes as the client sent them).
PromptPrefixKeys TextPromptPrefixKeys(std::string_view text);
// The keys of a prompt given as token ids (each id as 4 little-endian bytes). Text and id prompts
// have distinct keys even where their bytes agree.
PromptPrefixKeys TokenPromptPrefixKeys(std::span<const uint32_t> ids);

}  // namespace smallmind::shared
