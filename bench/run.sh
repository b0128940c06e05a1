#!/usr/bin/env bash
# Builds bloomery-bench (or, with --family, bloomery-bench-family) in build-bench/ (Release: plain
# -O3, no -march) and runs the suite.
#
#   bench/run.sh            10^4, 10^6, 10^7 keys, u64 and str16, bloomery + libbloom + LevelDB
#   bench/run.sh --huge     the same, then bloomery alone at 10^8 uint64 keys (~1.2 GB of RAM)
#   bench/run.sh --quick    one short repetition of everything (smoke test, numbers not usable)
#   bench/run.sh --targets  only the key comparisons (absent-key lookups at 10^7 uint64 keys for
#                           all three implementations; bloomery single vs batched at 10^8), with 15
#                           repetitions for tighter medians
#
#   bench/run.sh --family            bloomery-bench-family instead: every filter of the family and
#                                    LevelDB at 10^6 and 10^7 uint64 keys (summary by
#                                    bench/summarize_family.py)
#   bench/run.sh --family --huge     the same, then the family at 10^8 keys (~3 GB of RAM, slow)
#   bench/run.sh --family --targets  only the blocked filter's key comparisons (absent keys,
#                                    10 bits/key, 10^7 keys: blocked-10b, bloom-10b, LevelDB),
#                                    15 repetitions
#
#   bench/run.sh --peers [ARGS]     bloomery-peers instead: bloomery beside Boost.Bloom and the
#                                    binary fuse filter at 10^5 and 10^7 keys, a markdown table of
#                                    time ratios, then every filter's FPR on structured integer
#                                    keys at 10^5, 10^6 and 10^7 (bench/peers/README.md); ARGS go
#                                    to bloomery-peers (--fpr-only: that FPR table alone, no
#                                    timings)
#   bench/run.sh --curve [ARGS]     bloomery-curve instead: ns per absent-key query against n for
#                                    every filter and peer, 10^4..10^8 (--huge: on to 10^9 for
#                                    four of them), drawn by bench/curve/plot.gp into
#                                    <build>/query-cost.svg; ARGS go to bloomery-curve
#   bench/run.sh --redis [ARGS]     the Redis module against a redis-server it starts itself:
#                                    BF.ADD/BF.EXISTS beside SET/EXISTS, pipelines 1 and 16, and
#                                    MEMORY USAGE beside RedisBloom's sizing (bench/redis/bench.py);
#                                    ARGS go to bench.py
#
# Environment: MIN_TIME (seconds per benchmark run, default 0.1), REPS (repetitions, default 5),
# FILTER (overrides the benchmark regex of the main phase), BLOOMERY_BENCH_BUILD_DIR.
# Further arguments go to Google Benchmark unchanged.
#
# Output: console to stdout and <build>/results/<stamp>-*.txt, JSON to <build>/results/<stamp>-*.json,
# and, when python3 exists, the markdown summary (bench/summarize.py) to <build>/results/<stamp>.md.
# With REPS > 1 the repetitions run randomly interleaved and the summary uses their medians, so
# slow drift or a noisy neighbour hits every implementation alike.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
build=${BLOOMERY_BENCH_BUILD_DIR:-$root/build-bench}
min_time=${MIN_TIME:-0.1}
reps=${REPS:-5}
huge=0
targets=0
family=0
extra=()

# --peers and --curve run their own programs (no Google Benchmark); the rest of this script is
# the Google Benchmark suites'.
peers_or_curve() {  # program, arguments...
  local name=$1
  shift
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j2 --target "$name"
  local bin=$build/bench/${name#bloomery-}/$name
  [[ -x $bin ]] || { echo "run.sh: $bin was not built (are the peers missing?)" >&2; exit 1; }
  mkdir -p "$build/results"
  local load
  load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
  if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
    echo "run.sh: warning: 1-minute load average is $load; other work on this machine skews timings" >&2
  fi
  local stamp
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  if [[ $name == bloomery-peers ]]; then
    "$bin" "$@" | tee "$build/results/peers-$stamp.md"
    echo "run.sh: table in $build/results/peers-$stamp.md"
  else
    local data=$build/results/curve-$stamp.dat
    "$bin" "$@" >"$data"
    command -v gnuplot >/dev/null || { echo "run.sh: gnuplot not found; data in $data" >&2; exit 1; }
    # A filter without a batched call leaves the right panel's series empty; gnuplot says so.
    gnuplot -e "data='$data'; out='$build/query-cost.svg'" "$here/curve/plot.gp" 2>&1 |
      { grep -v 'Skipping data file with no valid points' >&2 || true; }
    echo "run.sh: $build/query-cost.svg from $data"
  fi
}
for arg in "$@"; do
  case "$arg" in
    --redis)
      [[ $1 == "$arg" ]] || { echo "run.sh: $arg must be the first argument" >&2; exit 2; }
      shift
      cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
      cmake --build "$build" -j2 --target bloomery_redis
      mkdir -p "$build/results"
      stamp=$(date -u +%Y%m%dT%H%M%SZ)
      py=python3  # a python3 earlier on PATH (pyenv, a venv) may lack Debian's python3-redis
      "$py" -c 'import redis' 2>/dev/null || py=/usr/bin/python3
      "$py" "$here/redis/bench.py" "$build/integrations/redis/bloomery-redis.so" "$@" |
        tee "$build/results/redis-$stamp.md"
      echo "run.sh: table in $build/results/redis-$stamp.md"
      exit 0 ;;
    --peers|--curve)
      [[ $1 == "$arg" ]] || { echo "run.sh: $arg must be the first argument" >&2; exit 2; }
      shift
      peers_or_curve "bloomery-${arg#--}" "$@"
      exit 0 ;;
  esac
done
for arg in "$@"; do
  case "$arg" in
    --huge) huge=1 ;;
    --quick) min_time=0.02; reps=1 ;;
    --targets) targets=1; reps=${REPS:-15} ;;
    --family) family=1 ;;
    *) extra+=("$arg") ;;
  esac
done

# --targets of the classic suite includes its 10^8 phase; the family's targets are all at 10^7.
if (( targets )); then huge=$(( !family )); fi
if (( family )); then
  target_name=bloomery-bench-family
  summarizer=$here/summarize_family.py
  prefix=family-
else
  target_name=bloomery-bench
  summarizer=$here/summarize.py
  prefix=
fi

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target "$target_name"
bin=$build/bench/$target_name
[[ -x $bin ]] || { echo "run.sh: $bin was not built (is Google Benchmark installed?)" >&2; exit 1; }

out=$build/results
mkdir -p "$out"
stamp=$prefix$(date -u +%Y%m%dT%H%M%SZ)

load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
  echo "run.sh: warning: 1-minute load average is $load; other work on this machine skews timings" >&2
fi

common=(--benchmark_min_time="$min_time" --benchmark_repetitions="$reps"
        --benchmark_out_format=json --benchmark_counters_tabular=false)
if (( reps > 1 )); then
  common+=(--benchmark_enable_random_interleaving=true --benchmark_display_aggregates_only=true)
fi

run_phase() {  # name, filter, extra flags...
  local name=$1 filter=$2
  shift 2
  echo "== $name: filter '$filter', min_time ${min_time}s, $reps repetition(s)"
  "$bin" --benchmark_filter="$filter" --benchmark_out="$out/$stamp-$name.json" "${common[@]}" \
    "$@" "${extra[@]}" | tee "$out/$stamp-$name.txt"
}

start=$SECONDS
# Every phase also times memory_latency (bench_report.hpp) over an array of its filters' size, so
# each summary records the memory phase the run was in.
lat_main='|^memory_latency/12000000$'
lat_huge='|^memory_latency/120000000$'
if (( family && targets )); then
  main_filter='^absent(_many)?/(leveldb|bloom-10b|blocked-10b)/10000000$'$lat_main
  huge_filter='^$'
elif (( family )); then
  main_filter='/(1000000|10000000)$'$lat_main
  huge_filter='/100000000$'$lat_huge
elif (( targets )); then
  main_filter='^absent(_many)?/[a-z]+/u64/10000000$'$lat_main
  huge_filter='^(absent|present)(_many)?/bloomery/u64/100000000$'$lat_huge
else
  main_filter='/(10000|1000000|10000000)$'$lat_main
  huge_filter='/100000000$'$lat_huge
fi
run_phase main "${FILTER:-$main_filter}"
jsons=("$out/$stamp-main.json")
if (( huge )); then
  # A separate process, so the 10^8 phase does not share memory or caches with the first.
  run_phase huge "$huge_filter" --huge
  jsons+=("$out/$stamp-huge.json")
fi
echo "== done in $((SECONDS - start)) s; results in $out/$stamp-*"

if command -v python3 >/dev/null; then
  python3 "$summarizer" "${jsons[@]}" | tee "$out/$stamp.md"
fi
