// What `--version` prints for every program (ConfigureCommandLine adds the flag): the project
// version, the commit it was built from, the build type and the kernel ISAs compiled in, fixed at
// configure time by cmake/version.cmake. Constant data; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace smallmind::shared {

struct BuildInfo {
  std::string_view version;      // the project's version, e.g. "0.1.0"
  std::string_view commit;       // short git commit, "+dirty" with local changes, or "unknown"
  std::string_view build_type;   // CMAKE_BUILD_TYPE: Release, Debug, ...
  std::string_view kernel_isas;  // space-separated: "ref avx2 avx_vnni avx512 amx"
};

const BuildInfo& GetBuildInfo();

// "smallmind-gateway 0.1.0 (commit 1a2b3c4d5e6f, Release, kernels: ref avx2 avx512)".
std::string VersionText(std::string_view program);

}  // namespace smallmind::shared
