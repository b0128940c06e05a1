#!/usr/bin/env bash
# Probing 10^5 keys against a Parquet file's Bloom filters: bloomery (bloomery-parquet-bench)
# against DuckDB's parquet_bloom_probe (duckdb_bench.mjs, @duckdb/node-api 1.5.6 from npm).
#   bench/parquet/run.sh [BUILD_DIR]   (default: build; needs bloomery-parquet-bench, and the
#                                       DuckDB package tests/parquet installs: ctest -R parquet_duckdb)
# The file (written by DuckDB) has 10 row groups of 10^5 rows, an INT64 column with a filter per
# chunk; the keys are 10^5 ids, half of them in some row group. The programs run alternately,
# RUNS times each; each run does ROUNDS rounds in one process and keeps the median of the rounds
# after the first WARMUP. Reported: the median over the runs, per key (every row group probed),
# and bloomery's time over DuckDB's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
bench=$build/bench/bloomery-parquet-bench
node_dir=${BLOOMERY_PARQUET_NODE_DIR:-$build/duckdb-node}
runs=${RUNS:-3} rounds=${ROUNDS:-3} warmup=${WARMUP:-1}
for f in "$bench" "$node_dir/node_modules/@duckdb/node-api"; do
  [ -e "$f" ] || { echo "run.sh: $f is missing" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/duckdb_bench.mjs" "$node_dir/bloomery_duckdb_bench.mjs"
duck() { node "$node_dir/bloomery_duckdb_bench.mjs" "$@"; }
duck write "$work/bench.parquet"
python3 - "$work/keys.txt" <<'PY'
import random, sys
rng = random.Random(32)
keys = [rng.randrange(10) * 1000000 + rng.randrange(2000) for _ in range(50000)]  # present
keys += [rng.randrange(10) * 1000000 + 2000 + rng.randrange(10**6 - 2000) for _ in range(50000)]
rng.shuffle(keys)
open(sys.argv[1], "w").write("\n".join(map(str, keys)) + "\n")
PY
for run in $(seq "$runs"); do
  "$bench" "$work/bench.parquet" user_id "$work/keys.txt" "$rounds" >"$work/cpp.$run"
  duck probe "$work/bench.parquet" user_id "$work/keys.txt" "$rounds" >"$work/duck.$run"
done
python3 - "$work" "$runs" "$warmup" <<'PY'
import statistics, sys
work, runs, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def med(path):
    rows = [l.split() for l in open(path)][warmup:]
    return statistics.median(float(r[0]) for r in rows), {r[1] for r in rows}
cpp = [med(f"{work}/cpp.{r}") for r in range(1, runs + 1)]
duck = [med(f"{work}/duck.{r}") for r in range(1, runs + 1)]
maybes = set().union(*(c[1] for c in cpp + duck))
if len(maybes) != 1:
    sys.exit(f"run.sh: bloomery and DuckDB disagree on the (key, row group) pairs not excluded: {maybes}")
c, d = statistics.median(x[0] for x in cpp), statistics.median(x[0] for x in duck)
ratios = sorted(a[0] / b[0] for a, b in zip(cpp, duck))
print("ns per key (10 row groups): bloomery  DuckDB  bloomery/DuckDB")
print(f"{c:36.1f} {d:7.0f} {c / d:16.5f}   (runs' ratios {ratios[0]:.5f}-{ratios[-1]:.5f}; "
      f"{maybes.pop()} of 10^6 pairs not excluded)")
PY
