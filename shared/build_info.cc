#include "shared/build_info.h"

#include "smallmind_build_info.h"

namespace smallmind::shared {

const BuildInfo& GetBuildInfo() {
  static constexpr BuildInfo kInfo{SMALLMIND_VERSION, SMALLMIND_GIT_COMMIT, SMALLMIND_BUILD_TYPE,
                                   SMALLMIND_KERNEL_ISAS};
  return kInfo;
}

std::string VersionText(std::string_view program) {
  const BuildInfo& b = GetBuildInfo();
  std::string text(program);
  text += " ";
  text += b.version;
  text += " (commit ";
  text += b.commit;
  text += ", ";
  text += b.build_type;
  text += ", kernels: ";
  text += b.kernel_isas;
  text += ")";
  return text;
}

}  // namespace smallmind::shared
