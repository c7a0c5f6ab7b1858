#include "worker/model/gguf/gguf_arch_keys.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>

namespace smallmind::worker {
namespace {

// `{arch}.` keys the loader reads (gguf_loader.cc checks their values), or that do not change what
// is computed: vocab_size repeats token_embd's rows, the yarn context length matters only to yarn
// (read there, refused elsewhere with the scaling type), tensor_data_layout and finetuned are
// provenance.
constexpr std::array<std::string_view, 19> kAccepted = {
    "context_length",
    "embedding_length",
    "block_count",
    "feed_forward_length",
    "attention.head_count",
    "attention.head_count_kv",
    "attention.layer_norm_rms_epsilon",
    "attention.key_length",
    "attention.value_length",
    "rope.freq_base",
    "rope.dimension_count",
    "rope.scaling.type",
    "rope.scaling.factor",
    "rope.scale_linear",
    "rope.scaling.original_context_length",
    "rope.scaling.finetuned",
    "vocab_size",
    "tensor_data_layout",
    "pooling_type",
};

// The mixture-of-experts keys gguf_loader.cc reads, for families with experts (docs/moe.md).
constexpr std::array<std::string_view, 4> kExpertKeys = {
    "expert_count",
    "expert_used_count",
    "expert_feed_forward_length",
    "expert_weights_norm",
};

// Keys that are harmless at one value only: what the value must be, as a double (true = 1).
struct NeutralValue {
  std::string_view key;
  double value;
  const char* meaning;  // what another value would switch on
};
constexpr std::array<NeutralValue, 4> kNeutral = {{
    {"expert_count", 0, "a mixture of experts"},
    {"expert_used_count", 0, "a mixture of experts"},
    {"rope.scaling.attn_factor", 1, "a rope attention factor"},
    {"attention.causal", 1, "non-causal attention"},
}};

bool Accepted(std::string_view suffix) {
  for (std::string_view k : kAccepted) {
    if (k == suffix) return true;
  }
  return false;
}

// The value of an integer, float or bool key as a double; nullopt for other types.
std::optional<double> Numeric(const GgufValue& v) {
  if (v.is_array()) return std::nullopt;
  if (auto b = v.AsBool()) return *b ? 1.0 : 0.0;
  if (auto d = v.AsDouble()) return *d;
  if (auto i = v.AsInt64()) return static_cast<double>(*i);
  if (auto u = v.AsUint64()) return static_cast<double>(*u);
  return std::nullopt;
}

}  // namespace

shared::Status CheckArchKeys(const GgufFile& f, std::string_view arch, bool experts,
                             std::span<const std::string_view> extra_keys) {
  const std::string prefix = std::string(arch) + ".";
  for (const GgufKeyValue& kv : f.metadata()) {
    if (!kv.key.starts_with(prefix)) continue;
    const std::string_view suffix = kv.key.substr(prefix.size());
    if (std::find(extra_keys.begin(), extra_keys.end(), suffix) != extra_keys.end()) continue;
    if (experts && std::find(kExpertKeys.begin(), kExpertKeys.end(), suffix) != kExpertKeys.end()) {
      continue;
    }
    const NeutralValue* neutral = nullptr;
    for (const NeutralValue& n : kNeutral) {
      if (n.key == suffix) neutral = &n;
    }
    if (neutral != nullptr) {
      const std::optional<double> v = Numeric(kv.value);
      if (v && *v == neutral->value) continue;
      return shared::InvalidArgument(f.path() + ": metadata key '" + std::string(kv.key) +
                                     "' asks for " + neutral->meaning +
                                     ", which smallmind does not support: refusing the file "
                                     "rather than computing something else");
    }
    if (Accepted(suffix)) continue;
    return shared::InvalidArgument(
        f.path() + ": metadata key '" + std::string(kv.key) + "' is not supported by smallmind's " +
        std::string(arch) +
        " and may change the computation: refusing the file rather than ignoring it");
  }
  return shared::Status::Ok();
}

}  // namespace smallmind::worker
