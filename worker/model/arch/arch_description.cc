#include "worker/model/arch/arch_description.h"

#include <array>
#include <string>

namespace smallmind::worker {
namespace {

// One line per family (its description lives in <family>_arch.cc).
const std::array<const ArchDescription*, 12> kArchs = {
    &kLlamaArch,  &kQwen2Arch,  &kQwen3Arch, &kQwen3MoeArch, &kPhi3Arch,     &kSmolLm3Arch,
    &kGemma2Arch, &kGemma3Arch, &kBertArch,  &kGptOssArch,   &kQwen2MoeArch, &kOlmoeArch};

}  // namespace

std::span<const ArchDescription* const> SupportedArchs() { return kArchs; }

const ArchDescription* FindArch(std::string_view name) {
  for (const ArchDescription* a : kArchs) {
    if (a->name == name) return a;
  }
  return nullptr;
}

std::string_view SupportedArchNames() {
  static const std::string names = [] {
    std::string s;
    for (const ArchDescription* a : kArchs) s += (s.empty() ? "" : ", ") + std::string(a->name);
    return s;
  }();
  return names;
}

}  // namespace smallmind::worker
