# Helpers shared by the folder CMakeLists: one static library per source folder, sources globbed so a
# new file needs no CMake edit.

# smallmind_library(NAME DIR [DEPS ...]): every .cc directly in DIR (not main.cc) becomes library NAME.
function(smallmind_library name dir)
  file(GLOB srcs CONFIGURE_DEPENDS ${dir}/*.cc)
  list(FILTER srcs EXCLUDE REGEX ".*/main\\.cc$")
  if(srcs)
    add_library(${name} STATIC ${srcs})
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} PUBLIC ${ARGN})
  else()  # header-only so far
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} INTERFACE ${ARGN})
  endif()
  # The folder whose files belong to this library, for the layering check (cmake/link_graph.cmake).
  set_property(TARGET ${name} PROPERTY SMALLMIND_DIR ${dir})
endfunction()

# smallmind_library_folders(NAME SUBDIR...): the .cc files directly in each SUBDIR (a subfolder of
# NAME's DIR) join library NAME: one library whose files are grouped by concept in subfolders
# (worker/model/gguf, worker/model/llama2c, ...). The layering check maps their headers to NAME too.
function(smallmind_library_folders name)
  get_target_property(dir ${name} SMALLMIND_DIR)
  foreach(sub ${ARGN})
    file(GLOB srcs CONFIGURE_DEPENDS ${dir}/${sub}/*.cc)
    target_sources(${name} PRIVATE ${srcs})
  endforeach()
endfunction()

# smallmind_executable(NAME MAIN [DEPS ...]): a thin main over the libraries.
function(smallmind_executable name main)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${main})
    add_executable(${name} ${main})
    target_link_libraries(${name} PRIVATE ${ARGN})
  endif()
endfunction()
