#!/usr/bin/env bash
# Opt-in: the CLI's integration tests (tools/bloomery/tests/cli_test.sh) with every bloomery
# invocation under valgrind memcheck. Slow (minutes), so not part of scripts/test.sh;
# docs/reliability.md reports its last run. Exits non-zero on any test failure or memcheck error.
#   scripts/valgrind.sh            builds build-valgrind (-O1 -g) and runs the checks
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
command -v valgrind >/dev/null || { echo "valgrind.sh: needs Debian's valgrind" >&2; exit 2; }
scripts/setup.sh
cmake -S . -B build-valgrind -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" \
  -DBLOOMERY_BUILD_TESTS=OFF -DBLOOMERY_BUILD_BENCHMARKS=OFF -DBLOOMERY_BUILD_EXAMPLES=OFF \
  -DBLOOMERY_BUILD_LSM=OFF -DBLOOMERY_BUILD_LEVELDB=OFF -DBLOOMERY_BUILD_TOOLS=ON >/dev/null
cmake --build build-valgrind -j"$(nproc)" --target bloomery_cli

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# The tests run this wrapper as the tool: memcheck's own report goes to a log per process, so the
# tool's stdout, stderr and exit status are what the tests check, unchanged.
cat >"$logs/bloomery" <<WRAP
#!/usr/bin/env bash
exec valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \\
  --log-file="$logs/memcheck.%p" "$root/build-valgrind/tools/bloomery/bloomery" "\$@"
WRAP
chmod +x "$logs/bloomery"
status=0
bash tools/bloomery/tests/cli_test.sh "$logs/bloomery" || status=$?
runs=$(find "$logs" -name 'memcheck.*' | wc -l)
errors=$(cat /dev/null "$logs"/memcheck.* | awk '/ERROR SUMMARY:/ { n += $4 } END { print n + 0 }')
echo "valgrind.sh: $runs bloomery runs under memcheck, $errors errors"
if [ "$errors" -ne 0 ]; then
  grep -l "ERROR SUMMARY: [1-9]" "$logs"/memcheck.* | head -3 | xargs cat >&2
  status=1
fi
exit "$status"
