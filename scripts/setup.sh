#!/usr/bin/env bash
# Installs the Debian packages bloomery needs, only those that are missing. Needs root or sudo.
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang-format   # toolchain and formatter
  libxxhash-dev                      # hashing (the library's only dependency)
  libcli11-dev                       # the command-line tool
  googletest libgtest-dev librapidcheck-dev   # tests
  nlohmann-json3-dev                 # tests: reading RedisBloom's golden replies (answers.json)
  libbenchmark-dev libbloom-dev libleveldb-dev  # benchmarks and their peers, LevelDB integration
  libsnappy-dev                      # Debian's LevelDB CMake package links -lsnappy
  clang libclang-rt-14-dev           # the libFuzzer targets (fuzz/): clang and its fuzzer runtime
  valgrind                           # scripts/valgrind.sh, the opt-in memcheck run
  libboost1.81-dev gnuplot-nox       # bench/peers (Boost.Bloom needs Boost's headers), the plots
  redis-server redis-tools           # integrations/redis: the server its tests start, redis-cli
  libhiredis-dev python3-redis python3-pytest  # the module's C++ differential test and pytest suite
  libssl-dev                         # examples/spv_wallet: SHA-256 for Bitcoin txids (libcrypto)
  pybind11-dev python3-pybind11 python3-dev python3-numpy  # python/: the bindings
  python3-hypothesis python3-venv python3-pip python3-setuptools  # their tests, pip install ./python
  default-jdk-headless libguava-java  # tests/guava and bench/guava: the real Guava 31.1 on the JDK
)

# tests/parquet installs DuckDB from the npm registry with the machine's npm (Node.js 20 ships its
# own); Debian's nodejs and npm only where there is none (Debian's npm conflicts with that one).
command -v npm >/dev/null || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "bloomery: installing Debian packages: ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "bloomery: need root or sudo to install ${missing[*]}" >&2; exit 2; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
