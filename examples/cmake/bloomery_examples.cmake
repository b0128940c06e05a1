# Functions the examples' CMakeLists.txt share: an application built on the harness, and its tests.

# bloomery_example_app(<target> <source> [WITH_REDIS])
# The program <target> from <source> on the harness; WITH_REDIS links the harness with its Redis
# client instead when hiredis was found (examples/common), which turns on the program's --redis.
function(bloomery_example_app target source)
  cmake_parse_arguments(PARSE_ARGV 2 arg "WITH_REDIS" "" "")
  add_executable(${target} ${source})
  if(arg_WITH_REDIS AND TARGET bloomery_example_redis)
    target_link_libraries(${target} PRIVATE bloomery_example_redis bloomery_warnings)
  else()
    target_link_libraries(${target} PRIVATE bloomery_example_harness bloomery_warnings)
  endif()
endfunction()

# bloomery_example_tests_wanted(<out-var> <label>)
# Sets <out-var> TRUE when tests are built and BLOOMERY_TEST_LABELS (empty: all) selects <label>.
function(bloomery_example_tests_wanted out_var label)
  if(BLOOMERY_BUILD_TESTS AND (NOT BLOOMERY_TEST_LABELS OR label IN_LIST BLOOMERY_TEST_LABELS))
    set(${out_var} TRUE PARENT_SCOPE)
  else()
    set(${out_var} FALSE PARENT_SCOPE)
  endif()
endfunction()

# bloomery_example_test(<name> LABEL <label> TIMEOUT <seconds> COMMAND <command> [<arg>...])
# The test <name> running <command>, when bloomery_example_tests_wanted selects <label>.
function(bloomery_example_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "LABEL;TIMEOUT" "COMMAND")
  if(NOT arg_LABEL OR NOT arg_TIMEOUT OR NOT arg_COMMAND)
    message(FATAL_ERROR "bloomery_example_test(${name}): LABEL, TIMEOUT and COMMAND are required")
  endif()
  bloomery_example_tests_wanted(wanted ${arg_LABEL})
  if(wanted)
    add_test(NAME ${name} COMMAND ${arg_COMMAND})
    set_tests_properties(${name} PROPERTIES LABELS ${arg_LABEL} TIMEOUT ${arg_TIMEOUT})
  endif()
endfunction()

# bloomery_example_check(<name> <script> <target> LABEL <label> TIMEOUT <seconds> [ARGS <arg>...])
# The test <name> running the checker <script> (in the calling directory; it imports
# examples/common/check_support.py) on the program <target>, then ARGS; skipped without Python 3.
function(bloomery_example_check name script target)
  cmake_parse_arguments(PARSE_ARGV 3 arg "" "LABEL;TIMEOUT" "ARGS")
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_FOUND)
    bloomery_example_test(${name} LABEL ${arg_LABEL} TIMEOUT ${arg_TIMEOUT}
                          COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/${script}
                                  $<TARGET_FILE:${target}> ${arg_ARGS})
  endif()
endfunction()
