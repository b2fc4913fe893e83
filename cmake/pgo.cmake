# Profile-guided optimisation and link-time optimisation (GCC).
#
#   -DSCALWS_PGO=generate  instrumented build: every process writes its counts under
#                          SCALWS_PGO_DIR when it exits normally (bench/pgo-build.sh trains
#                          it on the benchmark's scenarios)
#   -DSCALWS_PGO=use       optimised with the counts in SCALWS_PGO_DIR
#   -DSCALWS_LTO=ON        link-time optimisation (what the PGO release build uses too)
#
# The counts are named after each object file relative to the build directory
# (-fprofile-prefix-path), so the instrumented build and the optimised one may live in
# different directories, as long as both are configured with the same flags and sources.
set(SCALWS_PGO "off" CACHE STRING "Profile-guided optimisation: off, generate or use")
set_property(CACHE SCALWS_PGO PROPERTY STRINGS off generate use)
set(SCALWS_PGO_DIR "${CMAKE_BINARY_DIR}/pgo-profile" CACHE PATH
    "Where SCALWS_PGO=generate writes the profile and SCALWS_PGO=use reads it")
option(SCALWS_LTO "Link-time optimisation" OFF)

if(NOT SCALWS_PGO MATCHES "^(off|generate|use)$")
  message(FATAL_ERROR "SCALWS_PGO must be off, generate or use, not '${SCALWS_PGO}'")
endif()
if(NOT SCALWS_PGO STREQUAL "off")
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    message(FATAL_ERROR "SCALWS_PGO needs GCC (its profiles are GCC's .gcda files)")
  endif()
  if(SCALWS_SANITIZE)
    message(FATAL_ERROR "SCALWS_PGO does not go with SCALWS_SANITIZE")
  endif()
endif()

if(SCALWS_PGO STREQUAL "generate")
  # Workers of a single-mode server are threads: atomic counter updates keep the counts
  # whole. The directory must be writable by the user the workers drop to.
  add_compile_options(-fprofile-generate=${SCALWS_PGO_DIR} -fprofile-update=prefer-atomic
                      -fprofile-prefix-path=${CMAKE_BINARY_DIR})
  add_link_options(-fprofile-generate=${SCALWS_PGO_DIR})
elseif(SCALWS_PGO STREQUAL "use")
  if(NOT IS_DIRECTORY ${SCALWS_PGO_DIR})
    message(FATAL_ERROR "SCALWS_PGO=use: no profile in ${SCALWS_PGO_DIR} "
                        "(bench/pgo-build.sh makes one)")
  endif()
  # -fprofile-partial-training: code the training never ran (the controller, error paths)
  # is optimised as usual instead of for size. -fprofile-correction: counters of threads
  # racing may be slightly inconsistent. Files the training never reached have no profile;
  # that is expected, not an error under -Werror.
  add_compile_options(-fprofile-use=${SCALWS_PGO_DIR} -fprofile-partial-training
                      -fprofile-correction -fprofile-prefix-path=${CMAKE_BINARY_DIR}
                      -Wno-missing-profile)
endif()

if(SCALWS_LTO)
  include(CheckIPOSupported)
  check_ipo_supported(RESULT lto_ok OUTPUT lto_error LANGUAGES C CXX)
  if(NOT lto_ok)
    message(FATAL_ERROR "SCALWS_LTO: the compiler cannot do LTO: ${lto_error}")
  endif()
  set(CMAKE_INTERPROCEDURAL_OPTIMIZATION ON)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # One LTRANS job per core instead of GCC's serial default (and its warning).
    add_link_options(-flto=auto)
  endif()
endif()
