#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (in build-fuzz/, or --build-dir), replays the
# reproducers kept in fuzz/regressions/, then fuzzes every target for N seconds, two at a time,
# each from a fresh copy of its seed corpus fuzz/corpus/<target>/ (the committed corpus is never
# written). Fails on any crash, leak, sanitizer report or failing reproducer. Installs nothing: it
# needs clang and libFuzzer (Debian: clang libclang-rt-14-dev), CLI11 and xxHash, as
# scripts/setup.sh provides.
#   scripts/fuzz.sh [--seconds N] [--opt 0|1] [--build-dir DIR] [TARGET...]
#                                    (default: 6 s per target, two at a time: ~30 s; built at -O1;
#                                    only the TARGETs named are built, in DIR, default build-fuzz)
#   scripts/fuzz.sh --seconds 800    (the long run: six rounds of 800 s, about 80 minutes)
#   scripts/fuzz.sh --opt 0          (CI's smoke run: builds in half the time, runs 2-7x fewer inputs)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=6
opt=1
build=build-fuzz
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --opt) opt="$2"; shift 2 ;;
    --build-dir) build="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
all=(deserialize_any lsm_readers cli_keys static_build bip37_parse redisbloom_bloom
     redisbloom_cuckoo guava_stream parquet_footer diff_bloom diff_blocked diff_counting diff_cuckoo diff_scalable
     diff_scalable_cuckoo)
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

# Inputs longer than these only slow a target down: its seeds are far shorter, and the
# operation-decoding targets reach every state within a few hundred operations.
max_len() {
  case "$1" in
    deserialize_any) echo 4096 ;;
    lsm_readers) echo 2048 ;;
    cli_keys) echo 512 ;;
    static_build) echo 2048 ;;
    bip37_parse) echo 4096 ;;  # past 253 filter bytes, where the length takes three bytes
    redisbloom_bloom | redisbloom_cuckoo) echo 8192 ;;  # a SCANDUMP header and a few chunks
    guava_stream) echo 2048 ;;  # up to 255 words
    parquet_footer) echo 16384 ;;  # the golden files whole (11 KB)
    *) echo 768 ;;
  esac
}

start=$(date +%s)
case "$opt" in 0|1) ;; *) echo "fuzz.sh: --opt must be 0 or 1, not '$opt'" >&2; exit 2 ;; esac
CC=clang CXX=clang++ cmake -S fuzz -B "$build" -DBLOOMERY_FUZZ_OPT="$opt" >/dev/null
if ! cmake --build "$build" -j2 --target "${targets[@]/#/fuzz_}" >"$build/build.log" 2>&1; then
  cat "$build/build.log" >&2
  echo "fuzz.sh: build failed" >&2
  exit 1
fi
built=$(date +%s)

export UBSAN_OPTIONS=print_stacktrace=1
failed=0

# Every reproducer must now pass, checked strictly (ops.hpp: tolerate_known_defect).
for t in "${targets[@]}"; do
  dir=fuzz/regressions/$t
  [ -d "$dir" ] || continue
  for f in "$dir"/*; do
    if ! BLOOMERY_FUZZ_STRICT=1 "$build/$t" "$f" >"$build/regression.log" 2>&1; then
      echo "REGRESSION FAILS: $t $f"
      grep -E 'fuzz check failed|what\(\)|ERROR|runtime error' "$build/regression.log" | head -3 | sed 's/^/    /' || true
      failed=1
    fi
  done
done

run_one() {
  local t=$1 dir=$build/runs/$1
  rm -rf "$dir"
  mkdir -p "$dir/corpus"
  cp fuzz/corpus/"$t"/* "$dir/corpus/"
  local rc=0
  "$build/$t" "$dir/corpus" -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=30 \
    -detect_leaks=1 -print_final_stats=1 -artifact_prefix="$dir/" >"$dir/log" 2>&1 || rc=$?
  echo "$rc" >"$dir/rc"
}

report() {
  local t=$1 dir=$build/runs/$1
  local rc execs rate covft crashes corpus
  rc=$(cat "$dir/rc")
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log")
  # A target that fails before its first status line has no cov/ft yet: no match is no error.
  covft=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$dir/log" | tail -1 || true)
  crashes=$(find "$dir" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' \
              -o -maxdepth 1 -name 'timeout-*' -o -maxdepth 1 -name 'oom-*' | wc -l)
  corpus=$(find "$dir/corpus" -type f | wc -l)
  printf '%-16s execs %-9s exec/s %-6s %-22s corpus %-5s crashes %s\n' "$t" "${execs:-?}" \
    "${rate:-?}" "${covft:-cov: ? ft: ?}" "$corpus" "$crashes"
  if [ "$rc" != 0 ] || [ "$crashes" != 0 ]; then
    echo "  FAILED (exit $rc): see $dir/log"
    grep -E 'fuzz check failed|ERROR: |runtime error|SUMMARY' "$dir/log" | head -5 | sed 's/^/    /' || true
    failed=1
  fi
}

# Two at a time: the machine has two cores.
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  run_one "${targets[i]}" &
  if [ $((i + 1)) -lt ${#targets[@]} ]; then run_one "${targets[i + 1]}" & fi
  wait
done
for t in "${targets[@]}"; do report "$t"; done
end=$(date +%s)
echo "fuzz.sh: build $((built - start)) s (-O$opt), fuzzing $((end - built)) s ($seconds s per target)"
exit "$failed"
