# Build facts every program prints with --version (shared/build_info.h): the project version, the
# commit, the build type and the kernel ISAs compiled in. Written at configure time into
# ${PROJECT_BINARY_DIR}/generated/smallmind_build_info.h; the commit is the checkout's HEAD when
# cmake last ran ("+dirty" with uncommitted changes; "unknown" outside a git checkout), so
# re-run cmake (or `make`, which does) after committing for --version to name the new commit.
find_package(Git QUIET)
set(SMALLMIND_GIT_COMMIT "unknown")
if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE commit
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE commit_rc)
  if(commit_rc EQUAL 0 AND commit)
    set(SMALLMIND_GIT_COMMIT ${commit})
    execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no
                    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE dirty ERROR_QUIET)
    if(dirty)
      string(APPEND SMALLMIND_GIT_COMMIT "+dirty")
    endif()
  endif()
endif()
# The ISA folders of kernels/ that hold sources (each is compiled in; dispatch picks one at run
# time from CPUID), scalar ref always.
set(SMALLMIND_KERNEL_ISAS "ref")
foreach(isa avx2 avx_vnni avx512 amx)
  file(GLOB isa_srcs ${PROJECT_SOURCE_DIR}/kernels/${isa}/*.cc)
  if(isa_srcs)
    string(APPEND SMALLMIND_KERNEL_ISAS " ${isa}")
  endif()
endforeach()
set(SMALLMIND_BUILD_TYPE "${CMAKE_BUILD_TYPE}")
if(NOT SMALLMIND_BUILD_TYPE)
  set(SMALLMIND_BUILD_TYPE "none")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/build_info.h.in
               ${PROJECT_BINARY_DIR}/generated/smallmind_build_info.h @ONLY)
