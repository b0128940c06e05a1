#!/usr/bin/env bash
# Builds bloomery (installing missing Debian packages) and runs the main demo.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBLOOMERY_BUILD_EXAMPLES=ON >/dev/null
cmake --build build -j"$jobs" --target bloomery-demo
exec build/examples/sizing/bloomery-demo "$@"
