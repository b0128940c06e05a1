# ctest lsm_demo_scaled: runs bloomery-lsm-demo scaled down (10 tables of 20,000 keys) and checks
# the claim the demo exists to show. Without a filter an absent read must read a data block from
# (nearly) every table, at least 9 of the 10; with any of the three filters at 1% at most 0.3
# (about 0.1 is expected, 0.08 for the static filter: the bound leaves room for sampling noise
# and for small changes to the filters, not for a filter that stopped working).
#
#   cmake -DDEMO=<path to bloomery-lsm-demo> -DWORK_DIR=<scratch directory> -P check_demo.cmake
#
# 20,000 reads keep the run to a few seconds: the no-filter store, the slowest, serves about
# 50,000 reads a second from the page cache, and each kind's build takes a fraction of a second.

foreach(var DEMO WORK_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "check_demo.cmake needs -D${var}=...")
  endif()
endforeach()

# The demo replaces its own stores in WORK_DIR but refuses to delete anything else there; start
# from nothing so that a stray file left by an earlier failure cannot fail this run.
file(REMOVE_RECURSE "${WORK_DIR}")

set(command "${DEMO}" --tables 10 --keys-per-table 20000 --reads 20000 --json --dir "${WORK_DIR}")
string(TIMESTAMP started "%s")
execute_process(COMMAND ${command}
                RESULT_VARIABLE rc
                OUTPUT_VARIABLE out
                ERROR_VARIABLE err
                TIMEOUT 240)
string(TIMESTAMP finished "%s")
math(EXPR seconds "${finished} - ${started}")
list(JOIN command " " command_line)
message(STATUS "ran in about ${seconds} s: ${command_line}")

if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "the demo exited with '${rc}' (expected 0)\nstdout:\n${out}\nstderr:\n${err}")
endif()
# stderr is a pipe here, not a terminal: the demo must not draw its progress bar or say anything
# else there unless something went wrong.
if(NOT err STREQUAL "")
  message(FATAL_ERROR "the demo wrote to stderr although it succeeded:\n${err}")
endif()

# --json promises one JSON object and nothing else on stdout. string(JSON) refuses text before
# the object but ignores text after it, hence the first test.
string(STRIP "${out}" stripped)
if(NOT stripped MATCHES "^{.*}$")
  message(FATAL_ERROR "stdout is not one JSON object and nothing else:\n${out}")
endif()
string(JSON kinds ERROR_VARIABLE json_error LENGTH "${out}" results)
if(json_error)
  message(FATAL_ERROR "stdout is not the expected JSON (${json_error}):\n${out}")
endif()
if(NOT kinds EQUAL 4)
  message(FATAL_ERROR "expected results for 4 filter kinds, got ${kinds}:\n${out}")
endif()

string(JSON correct GET "${out}" correct)
string(JSON absent_reads GET "${out}" absent_reads)
message(STATUS "${absent_reads} absent reads per filter kind; every answer correct: ${correct}")

# string(JSON) hands doubles back at full precision (0.0999474 as 0.099947400000000006); four
# decimals are plenty for the log. Numbers in exponent form are left as they are.
function(short_number var value)
  if(value MATCHES "^(-?[0-9]+)\\.([0-9]?[0-9]?[0-9]?[0-9]?)[0-9]*$")
    set(value "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
    if(value MATCHES "^(.*\\.[0-9]*[1-9])0+$")  # 0.9900 -> 0.99
      set(value "${CMAKE_MATCH_1}")
    elseif(value MATCHES "^(.*)\\.0*$")  # 1.0000 -> 1
      set(value "${CMAKE_MATCH_1}")
    endif()
  endif()
  set(${var} "${value}" PARENT_SCOPE)
endfunction()

set(expected_kinds none bloom blocked static)
foreach(i RANGE 3)
  list(GET expected_kinds ${i} want)
  string(JSON got GET "${out}" results ${i} filter)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "results[${i}] is filter '${got}', expected '${want}'")
  endif()

  # A null here (no absent reads, say) must fail loudly rather than compare as a string.
  string(JSON type TYPE "${out}" results ${i} block_reads_per_absent_read)
  if(NOT type STREQUAL "NUMBER")
    message(FATAL_ERROR "results[${i}].block_reads_per_absent_read is ${type}, not a number")
  endif()
  string(JSON reads GET "${out}" results ${i} block_reads_per_absent_read)
  foreach(field measured_fpr wasted_reads_removed filter_bytes_per_table reads_per_second p50_us
                p99_us)
    string(JSON value GET "${out}" results ${i} ${field})
    short_number(${field} "${value}")
  endforeach()
  short_number(shown_reads "${reads}")
  message(STATUS "${want}: ${shown_reads} block reads per absent read, measured FPR "
                 "${measured_fpr}, wasted reads removed ${wasted_reads_removed}, filter "
                 "${filter_bytes_per_table} bytes per table, ${reads_per_second} reads/s, "
                 "absent reads p50 ${p50_us} us, p99 ${p99_us} us")

  if(want STREQUAL "none")
    if(reads LESS 9)
      message(FATAL_ERROR "without a filter an absent read read only ${shown_reads} blocks "
                          "(expected at least 9 of 10 tables)")
    endif()
  elseif(reads GREATER 0.3)
    message(FATAL_ERROR "with the ${want} filter an absent read read ${shown_reads} blocks "
                        "(expected at most 0.3)")
  endif()
endforeach()

# The stores are only evidence while something fails; a passing run leaves nothing behind.
file(REMOVE_RECURSE "${WORK_DIR}")
