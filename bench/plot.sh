#!/usr/bin/env bash
# Draws docs/fpr-vs-bits.svg: measured FPR against bits per key for every filter of the family.
#
#   bench/plot.sh              build bloomery-fpr-sweep in build-bench/, run it (10^6 keys, 2^24
#                              absent probes per point; about a minute), then gnuplot
#   bench/plot.sh --quick      10^5 keys, 2^20 probes (smoke test)
#   bench/plot.sh FILE.dat     re-plot an existing sweep output without running the sweep
#
# The sweep's data goes to build-bench/results/fpr_sweep-<stamp>.dat; arguments other than a .dat
# file go to bloomery-fpr-sweep. Needs gnuplot (Debian: gnuplot-nox).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
build=${BLOOMERY_BENCH_BUILD_DIR:-$root/build-bench}
svg=${SVG:-$root/docs/fpr-vs-bits.svg}
command -v gnuplot >/dev/null || { echo "plot.sh: gnuplot not found" >&2; exit 1; }

data=
args=()
for arg in "$@"; do
  case "$arg" in
    *.dat) data=$arg ;;
    *) args+=("$arg") ;;
  esac
done

if [[ -z $data ]]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j2 --target bloomery-fpr-sweep
  mkdir -p "$build/results"
  data=$build/results/fpr_sweep-$(date -u +%Y%m%dT%H%M%SZ).dat
  "$build/bench/bloomery-fpr-sweep" "${args[@]}" >"$data"
fi

subtitle=$(head -1 "$data" | sed -e 's/^# bloomery-fpr-sweep: //' -e 's/ (uint64 keys)//')
gnuplot -e "data='$data'; out='$svg'; subtitle='$subtitle'" "$here/plot_fpr.gp"
echo "plot.sh: $svg from $data"
