# check-format fails when a C++ file differs from what clang-format would write.
find_program(CLANG_FORMAT clang-format)
if(CLANG_FORMAT)
  file(GLOB_RECURSE SCALWS_FORMAT_FILES CONFIGURE_DEPENDS
    ${CMAKE_SOURCE_DIR}/common/*.[ch]pp ${CMAKE_SOURCE_DIR}/common/*.h
    ${CMAKE_SOURCE_DIR}/ipc/*.cpp ${CMAKE_SOURCE_DIR}/ipc/*.h
    ${CMAKE_SOURCE_DIR}/sandbox/*.cpp ${CMAKE_SOURCE_DIR}/sandbox/*.h
    ${CMAKE_SOURCE_DIR}/worker/*.cpp ${CMAKE_SOURCE_DIR}/worker/*.h
    ${CMAKE_SOURCE_DIR}/controller/*.cpp ${CMAKE_SOURCE_DIR}/controller/*.h
    ${CMAKE_SOURCE_DIR}/tests/*.cpp ${CMAKE_SOURCE_DIR}/tests/*.h)
  add_custom_target(check-format
    COMMAND ${CLANG_FORMAT} --dry-run --Werror ${SCALWS_FORMAT_FILES}
    COMMENT "clang-format --dry-run --Werror")
  add_custom_target(format COMMAND ${CLANG_FORMAT} -i ${SCALWS_FORMAT_FILES})
endif()
