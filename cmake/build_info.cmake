# What `--version` says: the release, the commit and how the binary was built.
#
# The version and the build's flavour (type, compiler, PGO, LTO, sanitizers, metrics, HTTP/3,
# since a build without it refuses `http3 = true`) are known at configure time; the commit is
# read at every build by write_commit.cmake, which rewrites its one-line source only when
# the commit changed, so a binary never reports a commit it was not built from and a rebuild
# recompiles one small file at most.
# -DSCALWS_COMMIT=... replaces git (a build from a tarball, or a packager's choice).
set(SCALWS_COMMIT "" CACHE STRING "Commit reported by --version (default: git, at build time)")

if(SCALWS_SANITIZE)
  set(SCALWS_BUILD_SANITIZERS "address,undefined")
else()
  set(SCALWS_BUILD_SANITIZERS "none")
endif()
if(SCALWS_LTO)
  set(SCALWS_BUILD_LTO "on")
else()
  set(SCALWS_BUILD_LTO "off")
endif()
if(SCALWS_METRICS)
  set(SCALWS_BUILD_METRICS "on")
else()
  set(SCALWS_BUILD_METRICS "off")
endif()
if(SCALWS_HTTP3)
  set(SCALWS_BUILD_HTTP3 "on")
else()
  set(SCALWS_BUILD_HTTP3 "off")
endif()
set(SCALWS_BUILD_TYPE "${CMAKE_BUILD_TYPE}")
if(SCALWS_BUILD_TYPE STREQUAL "")
  set(SCALWS_BUILD_TYPE "None")  # Debian's dh passes None: flags come from dpkg-buildflags
endif()
set(SCALWS_BUILD_FLAVOUR
    "${SCALWS_BUILD_TYPE}, ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}; PGO ${SCALWS_PGO}; LTO ${SCALWS_BUILD_LTO}; sanitizers ${SCALWS_BUILD_SANITIZERS}; metrics ${SCALWS_BUILD_METRICS}; HTTP/3 ${SCALWS_BUILD_HTTP3}")

set(SCALWS_BUILD_INFO_DIR ${CMAKE_BINARY_DIR}/generated/build_info)
configure_file(${CMAKE_CURRENT_LIST_DIR}/build_info.cpp.in ${SCALWS_BUILD_INFO_DIR}/build_info.cpp
               @ONLY)
add_custom_target(scalws_build_commit
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DCOMMIT_OVERRIDE=${SCALWS_COMMIT}
          -DOUT=${SCALWS_BUILD_INFO_DIR}/build_commit.cpp
          -P ${CMAKE_CURRENT_LIST_DIR}/write_commit.cmake
  BYPRODUCTS ${SCALWS_BUILD_INFO_DIR}/build_commit.cpp
  COMMENT "" VERBATIM)
add_library(scalws_build_info STATIC ${SCALWS_BUILD_INFO_DIR}/build_info.cpp
                                     ${SCALWS_BUILD_INFO_DIR}/build_commit.cpp)
add_dependencies(scalws_build_info scalws_build_commit)
# No profile flags here: the text differs between the instrumented build and the one that
# uses its profile ("PGO generate" / "PGO use", the commit), which GCC refuses as a
# coverage mismatch; nothing in these three functions is worth profiling anyway.
set_property(TARGET scalws_build_info PROPERTY COMPILE_OPTIONS "")
target_include_directories(scalws_build_info PUBLIC ${CMAKE_SOURCE_DIR})
