"""The command-line tool's speed against `wc -l` over the same key file (BENCHMARKS.md,
"Command-line tool"): writes N URL-shaped keys to a temporary file (kept in the page cache by the
first round), then times in every round `wc -l`, `bloomery build` of each kind given and
`bloomery query -c` of what each built, in a rotating order, and prints per command the median
wall time and the median over the rounds of its time / `wc -l`'s time in the same round.

  python3 bench/cli_speed.py build-bench/tools/bloomery/bloomery [--keys N] [--rounds R]
      [--kinds bloom,blocked]
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time


def write_keys(path, n):
    # The shape of a crawler's URLs: a path and a query string, about 55 bytes a line.
    with open(path, "w") as f:
        for start in range(0, n, 100_000):
            f.writelines(f"https://example.com/path{i % 997}/{i // 997}/{i * 2654435761 % 2**40:010x}"
                         f"?q={i % 10007}\n" for i in range(start, min(n, start + 100_000)))


def timed(argv):
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("bloomery")
    p.add_argument("--keys", type=int, default=10_000_000)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--kinds", default="bloom,blocked")
    o = p.parse_args()
    kinds = o.kinds.split(",")
    with tempfile.TemporaryDirectory() as work:
        keys = os.path.join(work, "keys.txt")
        write_keys(keys, o.keys)
        commands = {"wc -l": ["wc", "-l", keys]}
        for kind in kinds:
            out = os.path.join(work, f"{kind}.f")
            commands[f"build --kind {kind}"] = [o.bloomery, "build", "-q", "--kind", kind, "-n",
                                                str(o.keys), "-p", "0.01", "-o", out, keys]
            commands[f"query -c ({kind})"] = [o.bloomery, "query", "-q", "-c", out, keys]
        names = list(commands)
        for name in names:  # warm-up: the page cache, and every filter file exists for the queries
            timed(commands[name])
        times = {name: [] for name in names}
        for r in range(o.rounds):
            # Rotate the order; every filter file exists since the warm-up, so any order works.
            for name in names[r % len(names):] + names[:r % len(names)]:
                times[name].append(timed(commands[name]))
        size_mb = os.path.getsize(keys) / 1e6
    print(f"{o.keys} keys, {size_mb:.0f} MB, {o.rounds} rounds, medians\n")
    print("| command | wall time | time / `wc -l` |\n|---|---:|---:|")
    for name in names:
        ratios = [t / w for t, w in zip(times[name], times["wc -l"])]
        print(f"| `{name}` | {statistics.median(times[name]) * 1000:.0f} ms | "
              f"**{statistics.median(ratios):.2f}** |")


if __name__ == "__main__":
    main()
