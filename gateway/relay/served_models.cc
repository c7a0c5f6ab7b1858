#include "gateway/relay/served_models.h"

#include <algorithm>
#include <utility>

#include <spdlog/fmt/fmt.h>

namespace smallmind::gateway {

ServedModels::ServedModels(std::vector<std::string> aliases, std::string_view model_source) {
  if (aliases.empty()) {
    const size_t slash = model_source.rfind('/');
    aliases.emplace_back(slash == std::string_view::npos ? model_source
                                                         : model_source.substr(slash + 1));
  }
  names_ = std::move(aliases);
}

bool ServedModels::Accepts(std::string_view requested) const {
  return requested.empty() || std::find(names_.begin(), names_.end(), requested) != names_.end();
}

shared::Status ServedModels::Check(std::string_view requested) const {
  if (Accepts(requested)) return shared::Status::Ok();
  std::string served;
  for (const std::string& name : names_) {
    served += fmt::format("{}`{}`", served.empty() ? "" : ", ", name);
  }
  return shared::NotFound(
      fmt::format("the model `{}` is not served here; this server serves {}", requested, served));
}

shared::Status ValidateServedModelNames(const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) return shared::InvalidArgument("--served-model-name: empty name");
    if (std::find(names.begin(), names.begin() + i, names[i]) != names.begin() + i) {
      return shared::InvalidArgument(
          fmt::format("--served-model-name: `{}` is given twice", names[i]));
    }
  }
  return shared::Status::Ok();
}

}  // namespace smallmind::gateway
