# The Debian package: `cpack -G DEB` in a build tree packs what `cmake --install` installs (the
# headers, the CMake and pkg-config packages, the CLI, the Redis module, the LevelDB policy and
# the Python module, each when built) under /usr. dpkg-shlibdeps (dpkg-dev, part of
# build-essential) works out the shared-library dependencies of the binaries.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME bloomery)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "bloomery developers <bloomery@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "approximate membership filters (Bloom filter family) for C++20, with CLI, Redis module, Python")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The headers include xxhash.h; the Python module imports numpy for its array results.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libxxhash-dev")
if(TARGET bloomery_python)
  # The extension module is built for one CPython minor version (Debian 12's 3.11).
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", python3 (>= 3.11), python3 (<< 3.12), python3-numpy")
endif()
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "redis-server, libleveldb-dev")
include(CPack)
