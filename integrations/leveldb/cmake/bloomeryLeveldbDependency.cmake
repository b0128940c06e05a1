# Finds LevelDB for bloomery::leveldb, quietly: a project without LevelDB still gets
# bloomery::bloomery. Used by integrations/leveldb/CMakeLists.txt when building bloomery and by the
# installed bloomeryConfig.cmake when a consumer finds it; afterwards leveldb_FOUND says whether
# leveldb::leveldb exists.

# LevelDB's exported target lists Threads::Threads among its link libraries but its package file
# does not find Threads, so the name would dangle in a project that has not found it itself.
find_package(Threads QUIET)
find_package(leveldb CONFIG QUIET)

# Debian 12's libleveldb-dev exports leveldb::leveldb (the shared library) with the bare name
# `snappy` in its link libraries, but does not depend on libsnappy-dev, so without that package
# every link fails on "-lsnappy". libleveldb.so already records libsnappy.so.1 as a needed library,
# so nothing has to be linked for it: an empty target named `snappy` keeps CMake from emitting the
# flag. Only in exactly that situation, so a system with libsnappy-dev links it as LevelDB asks.
if(leveldb_FOUND AND TARGET leveldb::leveldb AND NOT TARGET snappy)
  get_target_property(_bloomery_leveldb_type leveldb::leveldb TYPE)
  get_target_property(_bloomery_leveldb_links leveldb::leveldb INTERFACE_LINK_LIBRARIES)
  if(_bloomery_leveldb_type STREQUAL "SHARED_LIBRARY" AND "snappy" IN_LIST _bloomery_leveldb_links)
    find_library(BLOOMERY_SNAPPY_LIBRARY snappy)
    if(NOT BLOOMERY_SNAPPY_LIBRARY)
      # GLOBAL: the name is resolved wherever leveldb::leveldb is linked, in any directory.
      add_library(snappy INTERFACE IMPORTED GLOBAL)
    endif()
  endif()
  unset(_bloomery_leveldb_type)
  unset(_bloomery_leveldb_links)
endif()
