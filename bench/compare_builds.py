"""Two builds of bloomery side by side, for a change that must not slow anything down: runs the
same program of each build in alternation (before, after, before, after, ...), so drift slower
than one run hits both alike, and reports per measurement the median over the pairs of
after / before, with the range.

  python3 bench/compare_builds.py peers BEFORE/bloomery-peers AFTER/bloomery-peers [--pairs P] [-- ARGS]
      every bloomery cell of bloomery-peers' tables (ns per key: the first of "(a / b)")
  python3 bench/compare_builds.py cli BEFORE/bloomery AFTER/bloomery [--pairs P] [--keys N]
      wall time of `bloomery build` (each kind) and `bloomery query` over N generated keys
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

CELL = re.compile(r"\*\*[0-9.]+\*\* \(([0-9.]+) / [0-9.]+\)")


def peers_cells(binary, args):
    """{(table, row, column): bloomery's ns per key} from one bloomery-peers run."""
    out = subprocess.run([binary, *args], capture_output=True, text=True, check=True).stdout
    cells, table, columns = {}, None, []
    for line in out.splitlines():
        if not line.startswith("|") or line.startswith("|---"):
            continue
        parts = [p.strip() for p in line.strip("|").split("|")]
        if not CELL.search(line):
            table, columns = parts[0], parts[1:]
            continue
        for col, cell in zip(columns, parts[1:]):
            m = CELL.search(cell)
            if m:
                cells[(table, parts[0], col)] = float(m.group(1))
    return cells


def cli_times(binary, workdir, keys_file, kinds, n):
    """{measurement: seconds} for one round of CLI runs."""
    t = {}
    for kind in kinds:
        out = os.path.join(workdir, f"{kind}.f")
        start = time.perf_counter()
        subprocess.run([binary, "build", "-q", "--kind", kind, "-n", str(n), "-p", "0.01", "-o", out,
                        keys_file], check=True, capture_output=True)
        t[f"build --kind {kind}"] = time.perf_counter() - start
    start = time.perf_counter()
    subprocess.run([binary, "query", os.path.join(workdir, "bloom.f"), keys_file], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t["query (bloom)"] = time.perf_counter() - start
    return t


def report(pairs):
    """Prints, per measurement, the median of after / before over the pairs, and the range."""
    names = sorted(set().union(*(b.keys() & a.keys() for b, a in pairs)))
    print(f"| measurement | after / before: median | range | pairs |\n|---|---|---|---|")
    ratios_all = []
    for name in names:
        r = [a[name] / b[name] for b, a in pairs if name in a and name in b and b[name] > 0]
        if not r:
            continue
        ratios_all.append(statistics.median(r))
        label = " / ".join(name) if isinstance(name, tuple) else name
        print(f"| {label} | {statistics.median(r):.3f} | {min(r):.3f}-{max(r):.3f} | {len(r)} |")
    if ratios_all:
        print(f"\nmedian over the {len(ratios_all)} measurements: "
              f"{statistics.median(ratios_all):.3f}; geometric mean: "
              f"{statistics.geometric_mean(ratios_all):.3f}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("mode", choices=["peers", "cli"])
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--keys", type=int, default=2_000_000)
    # Everything after `--` goes to bloomery-peers unchanged (argparse would read it as options).
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    o = p.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    o.args = extra
    pairs = []
    with tempfile.TemporaryDirectory() as work:
        if o.mode == "cli":
            keys_file = os.path.join(work, "keys.txt")
            with open(keys_file, "w") as f:
                f.writelines(f"https://example.com/item/{i}\n" for i in range(o.keys))
            kinds = ["bloom", "blocked", "counting", "cuckoo", "scalable", "static",
                     "scalable-cuckoo"]
        for i in range(o.pairs):
            # Alternate which build goes first, so neither always runs on a warmer machine.
            got = {}
            for side in ([0, 1] if i % 2 == 0 else [1, 0]):
                binary = [o.before, o.after][side]
                got[side] = (peers_cells(binary, o.args) if o.mode == "peers" else
                             cli_times(binary, work, keys_file, kinds, o.keys))
            pairs.append((got[0], got[1]))
    report(pairs)


if __name__ == "__main__":
    main()
