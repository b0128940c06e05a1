#!/usr/bin/env bash
# Builds bloomery (installing missing Debian packages) and runs the main demo, bloomery-lsm-demo:
# an LSM-tree store with 10 SSTables, read with no filter, classic Bloom, blocked Bloom and static
# filters. Arguments are passed to the demo (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBLOOMERY_BUILD_LSM=ON >/dev/null
cmake --build build -j"$jobs" --target bloomery-lsm-demo
exec build/lsm/bloomery-lsm-demo "$@"
