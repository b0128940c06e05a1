# Installs the already built bloomery tree (BUILD_DIR) into a fresh prefix, then builds and runs a
# consumer project that knows nothing but find_package(bloomery CONFIG REQUIRED). When bloomery
# installed its LevelDB integration, the consumer must also build and run a program using
# bloomery::leveldb. (Installing the tree the suite just built, rather than configuring and
# building the project a second time, keeps a minute of compiling out of the suite.)
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
# Everything installed stays inside the prefix, and the headers and the package are there.
file(GLOB_RECURSE config ${prefix}/*/bloomeryConfig.cmake)
if(NOT EXISTS ${prefix}/include/bloomery/bloomery.hpp OR NOT config)
  message(FATAL_ERROR "the install in ${prefix} lacks the headers or bloomeryConfig.cmake")
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/consumer
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
execute_process(COMMAND ${WORK_DIR}/consumer/consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "consumer ok")
  message(FATAL_ERROR "consumer failed (${rc}): ${out}")
endif()
message(STATUS "${out}")

# The installed package decides whether the LevelDB part is expected: bloomery installs it exactly
# when it found LevelDB, and this consumer runs on the same machine.
file(GLOB_RECURSE leveldb_targets ${prefix}/*/bloomeryLeveldbTargets.cmake)
if(leveldb_targets)
  if(NOT EXISTS ${WORK_DIR}/consumer/leveldb_consumer)
    message(FATAL_ERROR "bloomery installed bloomery::leveldb, but the consumer did not get it")
  endif()
  execute_process(COMMAND ${WORK_DIR}/consumer/leveldb_consumer ${WORK_DIR}/leveldb_db
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "leveldb consumer ok")
    message(FATAL_ERROR "leveldb consumer failed (${rc}): ${out}${err}")
  endif()
  message(STATUS "${out}")
else()
  message(STATUS "bloomery was installed without LevelDB; the leveldb consumer is skipped")
endif()

# A consumer without LevelDB (simulated by disabling the package) must still get bloomery::bloomery,
# and no bloomery::leveldb.
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/consumer_no_leveldb
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_DISABLE_FIND_PACKAGE_leveldb=ON)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer_no_leveldb)
if(EXISTS ${WORK_DIR}/consumer_no_leveldb/leveldb_consumer)
  message(FATAL_ERROR "bloomery::leveldb was defined for a consumer without LevelDB")
endif()
execute_process(COMMAND ${WORK_DIR}/consumer_no_leveldb/consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "consumer ok")
  message(FATAL_ERROR "consumer without LevelDB failed (${rc}): ${out}")
endif()
message(STATUS "without LevelDB: ${out}")
