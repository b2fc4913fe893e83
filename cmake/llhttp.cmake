# llhttp's C sources as Debian's node-llhttp installs them, built as a small static library.
set(LLHTTP_SOURCE_DIR /usr/share/llhttp CACHE PATH "llhttp C sources (node-llhttp)")
set(LLHTTP_INCLUDE_DIR /usr/share/include/llhttp CACHE PATH "llhttp header (node-llhttp)")
if(NOT EXISTS ${LLHTTP_SOURCE_DIR}/llhttp.c OR NOT EXISTS ${LLHTTP_INCLUDE_DIR}/llhttp.h)
  message(FATAL_ERROR "llhttp sources not found; run deploy/install-deps.sh (node-llhttp)")
endif()
add_library(llhttp STATIC
  ${LLHTTP_SOURCE_DIR}/api.c ${LLHTTP_SOURCE_DIR}/http.c ${LLHTTP_SOURCE_DIR}/llhttp.c)
target_include_directories(llhttp SYSTEM PUBLIC ${LLHTTP_INCLUDE_DIR})
target_compile_options(llhttp PRIVATE -O2 -w)
# Its generated C files each define the same static helpers.
set_target_properties(llhttp PROPERTIES POSITION_INDEPENDENT_CODE ON UNITY_BUILD OFF)
