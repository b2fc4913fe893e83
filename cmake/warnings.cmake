# Warnings for ScalWS's own targets (not for llhttp's generated C).
add_library(scalws_warnings INTERFACE)
target_compile_options(scalws_warnings INTERFACE
  -Wall -Wextra -Wshadow -Wcast-align -Wunused -Wpointer-arith
  $<$<COMPILE_LANGUAGE:CXX>:-Woverloaded-virtual>)
if(SCALWS_WERROR)
  target_compile_options(scalws_warnings INTERFACE -Werror)
endif()
