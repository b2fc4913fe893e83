# cmake -DSOURCE_DIR=... -DOUT=... [-DCOMMIT_OVERRIDE=...] -P write_commit.cmake
# Run at every build: writes OUT, defining build_info::commit(), and touches it only when
# the text changes. "-dirty" marks a tree with changes to tracked files.
if(NOT "${COMMIT_OVERRIDE}" STREQUAL "")
  set(commit "${COMMIT_OVERRIDE}")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE commit RESULT_VARIABLE rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT rc EQUAL 0 OR commit STREQUAL "")
    set(commit "unknown")
  else()
    execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE changes ERROR_QUIET)
    if(NOT changes STREQUAL "")
      string(APPEND commit "-dirty")
    endif()
  endif()
endif()
set(text "// Generated at build time by cmake/write_commit.cmake.
#include \"common/build_info.h\"

const char* scalws::common::build_info::commit() { return \"${commit}\"; }
")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
