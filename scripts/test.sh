#!/usr/bin/env bash
# Builds bloomery (installing missing Debian packages) and runs every test:
#   1. the whole suite in a Release build (unit, property, concurrency, install, demo smoke test);
#   2. the test binaries again under AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. the concurrency tests (library and CLI) under ThreadSanitizer;
#   4. every libFuzzer target of fuzz/ for a short fixed budget, after replaying its reproducers.
# Set BLOOMERY_SKIP_SANITIZERS=1 to run only stage 1 while iterating.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc)

stage() { printf '\n==== %s ====\n' "$*"; }

# The examples and tests/ compile at -O1 here (BLOOMERY_EXAMPLES_OPTIMIZATION: CLI11's inline code
# at -O3 is most of their compile; BLOOMERY_TESTS_OPTIMIZATION: half the stage's compile) and the
# Python extension at -O0 (BLOOMERY_PYTHON_OPTIMIZATION: pybind11's code gains nothing from -O1);
# they check behaviour, and the CLI, store and integrations stay at -O3 (docs/reliability.md,
# "CI time").
stage "Release build: all tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBLOOMERY_BUILD_TESTS=ON -DBLOOMERY_BUILD_EXAMPLES=ON \
  -DBLOOMERY_BUILD_TOOLS=ON -DBLOOMERY_EXAMPLES_OPTIMIZATION=-O1 -DBLOOMERY_PYTHON_OPTIMIZATION=-O0 \
  -DBLOOMERY_TESTS_OPTIMIZATION=-O1 \
  -DBLOOMERY_BUILD_BENCHMARKS=ON -DBLOOMERY_TEST_LABELS= >/dev/null
cmake --build build -j"$jobs"
# python_pip_install (pip install ./python into a venv, 80 s of compiling) is opt-in:
# ctest --test-dir build -L python_pip.
ctest --test-dir build -j"$jobs" --output-on-failure -E '^python_pip_install$'

if [ "${BLOOMERY_SKIP_SANITIZERS:-0}" = 1 ]; then exit 0; fi

# Sanitizer builds, asserts on (no NDEBUG), line tables only (-g1): enough for symbolized traces.
# ASan+UBSan is built by clang at -O0: on our template-heavy tests GCC's optimizer slows down about
# fourfold under the two instrumentations (-O1: 703 CPU-seconds for this stage's build), and clang
# compiles the same code at -O0 more than twice as fast as GCC does; -O0 also keeps every memory
# access ASan checks. Stage 1 and the TSan stage keep GCC, the compiler users build with here.
# TSan keeps -O1: its build is small, and racy code is best checked as the optimizer emits it.
# Precompiled headers are off for TSan: they save nothing for its two test files, and with them
# GCC 12 reports a false -Wmaybe-uninitialized inside xxhash's AVX-512 code under -march=native.
# docs/reliability.md, "CI time", has the measurements.
asan_build_flags=(-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo
                  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -g1")
tsan_build_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1"
                  -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON)

# Every test binary: unit, concurrency, CLI, LSM store, LevelDB, the kill harness (fewer kills
# than stage 1: each writer runs several times slower here) and the Redis module, loaded into a
# redis-server that preloads the sanitizer runtimes (integrations/redis/tests/CMakeLists.txt).
# Of the module's suites, the replication and cluster ones (and the RedisBloom-layout keys'
# persistence/replication/cluster suite) stay in stage 1 only: they run the module code the
# command, persistence, differential and RedisBloom-data suites run here, and spend their time
# waiting on servers to sync (about a minute of this stage). So does the pure-Python check of the
# RedisBloom model against the golden data, which runs no module code. So do the integer-pattern FPR
# measurements (IntegerKeyPatterns.*): 2^19 probes per pattern, filter and hash, whose answers are
# fixed by the hash and cannot change under a sanitizer; here they took 91 of 225 test-seconds.
# With them goes the check that their probe sets are disjoint from their keys (test data only).
# The key identity tests of test_integer_key_patterns run here.
stage "AddressSanitizer + UndefinedBehaviorSanitizer: unit, concurrency, CLI, LSM store, LevelDB, kill and Redis module tests"
cmake -S . -B build-asan "${asan_build_flags[@]}" \
  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
  -DBLOOMERY_BUILD_BENCHMARKS=OFF -DBLOOMERY_BUILD_EXAMPLES=ON -DBLOOMERY_CRASH_KILLS=8 \
  -DBLOOMERY_TEST_LABELS="unit;concurrency;cli;lsm;leveldb;crash;redis" >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan -j"$jobs" --output-on-failure \
  -L "unit|concurrency|cli|lsm|leveldb|crash|redis" \
  -E "^(redis_test_(replication|cluster|redisbloom_server|redisbloom_model)|IntegerKeyPattern(s|Sets)\..*)$"

stage "ThreadSanitizer: concurrency tests of the library and the CLI"
cmake -S . -B build-tsan "${tsan_build_flags[@]}" \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
  -DBLOOMERY_BUILD_BENCHMARKS=OFF -DBLOOMERY_BUILD_EXAMPLES=OFF -DBLOOMERY_BUILD_TOOLS=ON \
  -DBLOOMERY_BUILD_LSM=OFF -DBLOOMERY_BUILD_LEVELDB=OFF -DBLOOMERY_BUILD_REDIS=OFF \
  -DBLOOMERY_TEST_LABELS=concurrency >/dev/null
cmake --build build-tsan -j"$jobs"
# cli_writers (concurrent CLI processes taking turns on a file's lock) runs in stages 1 and 2:
# its writers are separate single-threaded processes, so TSan has no race of theirs to see, and it
# took 19 s here; FileLock.* covers the lock's threads under TSan.
TSAN_OPTIONS=halt_on_error=1 ctest --test-dir build-tsan -j"$jobs" --output-on-failure -L concurrency \
  -E '^cli_writers$'
# The library's own concurrency tests once more, compiled with -march=native: there the best
# probe this CPU has (AVX-512VL or AVX2) is chosen at compile time and inlined, a path of its own,
# and the other SIMD path runs out of line. -march=native always runs where it was compiled.
cmake -S . -B build-tsan-native "${tsan_build_flags[@]}" \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer -march=native" \
  -DBLOOMERY_BUILD_BENCHMARKS=OFF -DBLOOMERY_BUILD_EXAMPLES=OFF -DBLOOMERY_BUILD_TOOLS=OFF \
  -DBLOOMERY_BUILD_LSM=OFF -DBLOOMERY_BUILD_LEVELDB=OFF -DBLOOMERY_BUILD_REDIS=OFF \
  -DBLOOMERY_TEST_LABELS=concurrency >/dev/null
cmake --build build-tsan-native -j"$jobs" --target test_concurrency
TSAN_OPTIONS=halt_on_error=1 ctest --test-dir build-tsan-native -j"$jobs" --output-on-failure \
  -R '^Concurrency\.'

# A smoke run: every reproducer replayed, then 3 s per target (the long runs: --seconds 800,
# docs/reliability.md). Built at -O0, which halves the build (39 s -> 19 s) for 2-7x fewer
# inputs in those seconds; the long runs build at -O1.
stage "libFuzzer: every target of fuzz/ for a short budget"
scripts/fuzz.sh --opt 0 --seconds 3
