#!/usr/bin/env bash
# Reading a Guava BloomFilter stream and answering 10^6 keys: bloomery (bloomery-guava-bench)
# against Guava 31.1 on the JDK (GuavaBench.java), for the string and the long funnel.
#   bench/guava/run.sh [BUILD_DIR]    (default: build; needs bloomery-guava-bench and the CLI)
# The filter holds 10^6 keys at 1% (built by `bloomery build --format guava`, byte-identical to
# Guava's); the probes are 10^6 keys, half of them present. The two programs run alternately,
# RUNS times each; each run does ROUNDS rounds in one process and keeps the median of the rounds
# after the first WARMUP (the JVM's JIT compiles the query path in those). Reported: the median
# over the runs of those medians, per key, and their ratio (bloomery's time over Guava's). Needs
# default-jdk-headless and libguava-java (scripts/setup.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
bench=$build/bench/bloomery-guava-bench
cli=$build/tools/bloomery/bloomery
jar=${BLOOMERY_GUAVA_JAR:-/usr/share/java/guava.jar}
runs=${RUNS:-5} rounds=${ROUNDS:-15} warmup=${WARMUP:-5}
for f in "$bench" "$cli" "$jar"; do
  [ -e "$f" ] || { echo "run.sh: $f is missing" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
javac -d "$work" -cp "$jar" "$here/GuavaBench.java"

python3 - "$work" <<'PY'
import random, sys
work = sys.argv[1]
rng = random.Random(31)
n = 10**6
members = [f"https://example.com/item/{i}/{rng.getrandbits(40):010x}" for i in range(n)]
absent = [f"https://example.org/other/{i}/{rng.getrandbits(40):010x}" for i in range(n // 2)]
probes = members[: n // 2] + absent
rng.shuffle(probes)
open(f"{work}/string.keys", "w").write("\n".join(members) + "\n")
open(f"{work}/string.probes", "w").write("\n".join(probes) + "\n")
ids = list({rng.randrange(-2**63, 2**63) for _ in range(2 * n)})[: n + n // 2]
rng.shuffle(ids)
lmembers, labsent = ids[:n], ids[n:]
lprobes = lmembers[: n // 2] + labsent
rng.shuffle(lprobes)
open(f"{work}/long.keys", "w").write("\n".join(map(str, lmembers)) + "\n")
open(f"{work}/long.probes", "w").write("\n".join(map(str, lprobes)) + "\n")
PY

for funnel in string long; do
  "$cli" build --format guava --funnel $funnel -n 1000000 -p 0.01 -q -o "$work/$funnel.guava" \
    "$work/$funnel.keys"
  for run in $(seq "$runs"); do
    "$bench" "$work/$funnel.guava" $funnel "$work/$funnel.probes" "$rounds" >"$work/$funnel.cpp.$run"
    java -cp "$jar:$work" GuavaBench "$work/$funnel.guava" $funnel "$work/$funnel.probes" \
      "$rounds" >"$work/$funnel.java.$run"
  done
done

python3 - "$work" "$runs" "$warmup" <<'PY'
import statistics, sys
work, runs, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def medians(path):
    rows = [line.split() for line in open(path)][warmup:]
    return (statistics.median(float(r[0]) for r in rows),
            statistics.median(float(r[1]) for r in rows), {r[2] for r in rows})
print("funnel  stream read (us): bloomery  Guava   query (ns/key): bloomery  Guava  bloomery/Guava")
for funnel in ("string", "long"):
    cpp = [medians(f"{work}/{funnel}.cpp.{r}") for r in range(1, runs + 1)]
    java = [medians(f"{work}/{funnel}.java.{r}") for r in range(1, runs + 1)]
    positives = set().union(*(c[2] for c in cpp + java))
    if len(positives) != 1:
        sys.exit(f"run.sh: the positives differ between bloomery and Guava: {positives}")
    read_c, read_j = (statistics.median(x[0] for x in v) for v in (cpp, java))
    q_c, q_j = (statistics.median(x[1] for x in v) for v in (cpp, java))
    ratios = sorted(c[1] / j[1] for c, j in zip(cpp, java))
    print(f"{funnel:6}  {read_c:26.0f} {read_j:6.0f}   {q_c:24.1f} {q_j:6.1f}  {q_c / q_j:14.3f}"
          f"   (runs' ratios {ratios[0]:.3f}-{ratios[-1]:.3f}; {positives.pop()} positives of 10^6)")
PY
