// ServedModels: the names the gateway answers to for its one model (--served-model-name), as
// /v1/models lists them and as a request's `model` field may name them, on either door. Built
// once the workers reported their model, then read-only; thread-safe for reads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "shared/status.h"

namespace smallmind::gateway {

class ServedModels {
 public:
  ServedModels() = default;
  // `aliases` (--served-model-name; the first is the primary id) or, when empty, the model
  // source's file name without its folder ("/models/llama-7b.Q4_0.gguf" -> "llama-7b.Q4_0.gguf";
  // "builtin:tiny" stays as it is): never the server's path.
  ServedModels(std::vector<std::string> aliases, std::string_view model_source);

  // The id /v1/models lists first, responses echo and the metrics' model_name label carries.
  const std::string& primary() const { return names_.front(); }
  const std::vector<std::string>& names() const { return names_; }
  // True for "" (no model named: the one served) and for every name above.
  bool Accepts(std::string_view requested) const;
  // NOT_FOUND "the model `x` is not served here; this server serves `a`, `b`" for a name it does
  // not accept; OK otherwise.
  shared::Status Check(std::string_view requested) const;

 private:
  std::vector<std::string> names_ = {""};
};

// "a,b" names, each non-empty, none twice; INVALID_ARGUMENT naming --served-model-name otherwise.
shared::Status ValidateServedModelNames(const std::vector<std::string>& names);

}  // namespace smallmind::gateway
