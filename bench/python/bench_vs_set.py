#!/usr/bin/env python3
"""bloomery's Python bindings against Python's built-in set of the same keys.

For each size (default 10^6 and 10^7) and key type (str keys shaped like URLs, and random 64-bit
int keys), one filter at the target FPR (default BloomFilter at 1%) beside a set:

- memory: the set's hash table (sys.getsizeof, and what tracemalloc saw allocated while it was
  built) and, for scale, the keys it points to, which a set needs and a filter does not; the
  filter's size_in_bytes (its C++ allocation is invisible to tracemalloc); and for both, the
  growth of resident memory while each is built from the keys in a fresh process;
- time per key: f.update(keys) against s.update(keys) into empty ones; f.contains_many(keys)
  against [k in s for k in keys]; [k in f for k in keys] against [k in s for k in keys]. Each
  round runs the filter and the set back to back (alternating which goes first); the median of
  the rounds is reported with the ratio filter / set (below 1: the filter is faster).

Targets: the filter at 1% at least 20x smaller than the set's table; at 10^7 str keys,
contains_many no slower than the set's list comprehension (ratio <= 1).

usage: PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_vs_set.py
           [--sizes 1000000 10000000] [--types str int] [--rounds 5] [--kind BloomFilter]
           [--fpr 0.01] [--json]
"""

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import time
import tracemalloc

import bloomery


def rss_bytes():
    """The process's resident memory now."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def url_keys(n, seed):
    """n distinct URL-shaped str keys (about 60 bytes each)."""
    rng = random.Random(seed)
    hosts = [f"www.{rng.getrandbits(40):x}.example.com" for _ in range(997)]
    words = ["news", "article", "product", "item", "user", "tag", "search", "page", "images"]
    return [
        f"https://{hosts[i % 997]}/{words[(i >> 3) % 9]}/{i:x}/{rng.getrandbits(24):06x}.html"
        for i in range(n)
    ]


def int_keys(n, seed):
    """n random 64-bit int keys (distinct but for a chance of n^2 / 2^65), in the order they were
    allocated: a list built from a set would lay them out in hash order, and every key read would
    miss the cache for both contestants, measuring the memory instead of the structures."""
    rng = random.Random(seed)
    return [rng.getrandbits(64) for _ in range(n)]


def build_and_report_rss(kind, fpr, n, key_type, what):
    """In a child process: builds the keys, then the structure, and prints the RSS growth."""
    keys = url_keys(n, 1) if key_type == "str" else int_keys(n, 1)
    gc.collect()
    before = rss_bytes()
    if what == "filter":
        built = getattr(bloomery, kind)(n, fpr)
        built.update(keys)
    else:
        built = set(keys)
    print(rss_bytes() - before)


def rss_growth_in_child(kind, fpr, n, key_type, what):
    out = subprocess.run(
        [sys.executable, __file__, "--rss-child", kind, str(fpr), str(n), key_type, what],
        check=True, capture_output=True, text=True)
    return int(out.stdout)


def timed(fn):
    gc.collect()
    start = time.perf_counter_ns()
    fn()
    return time.perf_counter_ns() - start


def paired_rounds(rounds, filter_fn, set_fn):
    """Median ns of filter_fn and set_fn over interleaved rounds."""
    f_times, s_times = [], []
    for r in range(rounds):
        if r % 2 == 0:
            f_times.append(timed(filter_fn))
            s_times.append(timed(set_fn))
        else:
            s_times.append(timed(set_fn))
            f_times.append(timed(filter_fn))
    return statistics.median(f_times), statistics.median(s_times)


def measure(kind, fpr, n, key_type, rounds):
    keys = url_keys(n, 1) if key_type == "str" else int_keys(n, 1)
    cls = getattr(bloomery, kind)
    result = {"n": n, "keys": key_type, "kind": kind, "fpr": fpr}
    if key_type == "str":
        result["mean_key_bytes"] = sum(map(len, keys)) / n

    # Memory: each structure's size, and the RSS growth while it is built in a fresh process (in
    # this one, memory freed by earlier measurements would be reused and hide the growth).
    f = cls(n, fpr)
    f.update(keys)
    result["filter_bytes"] = f.size_in_bytes
    result["filter_rss_growth"] = rss_growth_in_child(kind, fpr, n, key_type, "filter")
    tracemalloc.start()
    s = set(keys)
    result["set_traced_bytes"] = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    result["set_rss_growth"] = rss_growth_in_child(kind, fpr, n, key_type, "set")
    result["set_bytes"] = sys.getsizeof(s)
    result["keys_bytes"] = sum(map(sys.getsizeof, keys)) + sys.getsizeof(keys)
    result["smaller"] = result["set_bytes"] / result["filter_bytes"]
    result["filter_fpr_now"] = f.fpr()

    def per_key(ns):
        return ns / n

    def update_filter():
        g = cls(n, fpr)
        g.update(keys)

    def update_set():
        t = set()
        t.update(keys)

    fu, su = paired_rounds(rounds, update_filter, update_set)
    result["update_ns"] = (per_key(fu), per_key(su))
    fc, sc = paired_rounds(rounds, lambda: f.contains_many(keys), lambda: [k in s for k in keys])
    result["contains_many_ns"] = (per_key(fc), per_key(sc))
    fi, si = paired_rounds(rounds, lambda: [k in f for k in keys], lambda: [k in s for k in keys])
    result["in_ns"] = (per_key(fi), per_key(si))
    if key_type == "int":
        try:
            import numpy as np

            array = np.array(keys, dtype=np.uint64)
            fa, _ = paired_rounds(rounds, lambda: f.contains_many(array), lambda: None)
            result["contains_many_numpy_ns"] = per_key(fa)
        except ImportError:
            pass
    assert all(f.contains_many(keys[:100_000])), "a false negative: the benchmark is broken"
    return result


def mb(b):
    return f"{b / 1e6:.1f} MB"


def print_result(r):
    what = "str keys (URL-shaped, mean %.0f bytes)" % r["mean_key_bytes"] if r["keys"] == "str" \
        else "int keys (random 64-bit)"
    print(f"\nn = {r['n']:,} {what}; {r['kind']} at fpr {r['fpr']} "
          f"(measured model rate now {r['filter_fpr_now']:.3%})")
    print(f"  {'':34}{'filter':>12}{'set':>12}{'ratio':>14}")
    print(f"  {'memory: structure':34}{mb(r['filter_bytes']):>12}{mb(r['set_bytes']):>12}"
          f"{r['smaller']:>10.1f}x smaller")
    print(f"  {'memory: tracemalloc while built':34}{'(not seen)':>12}"
          f"{mb(r['set_traced_bytes']):>12}")
    print(f"  {'memory: RSS growth while built':34}{mb(r['filter_rss_growth']):>12}"
          f"{mb(r['set_rss_growth']):>12}")
    print(f"  {'memory: the keys a set points to':34}{'-':>12}{mb(r['keys_bytes']):>12}")
    for label, name in (("update (ns/key)", "update_ns"),
                        ("contains_many vs [k in s] (ns/key)", "contains_many_ns"),
                        ("[k in f] vs [k in s] (ns/key)", "in_ns")):
        f_ns, s_ns = r[name]
        print(f"  {label:34}{f_ns:>12.1f}{s_ns:>12.1f}{f_ns / s_ns:>14.2f}")
    if "contains_many_numpy_ns" in r:
        print(f"  {'contains_many(uint64 array)':34}{r['contains_many_numpy_ns']:>12.1f}")


def main():
    if len(sys.argv) == 7 and sys.argv[1] == "--rss-child":
        kind, fpr, n, key_type, what = sys.argv[2:]
        build_and_report_rss(kind, float(fpr), int(n), key_type, what)
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    p.add_argument("--types", nargs="+", choices=["str", "int"], default=["str", "int"])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--kind", default="BloomFilter",
                   choices=["BloomFilter", "BlockedBloomFilter", "CountingBloomFilter",
                            "CuckooFilter", "ScalableBloomFilter", "ScalableCuckooFilter"])
    p.add_argument("--fpr", type=float, default=0.01)
    p.add_argument("--json", action="store_true", help="one JSON object per measurement")
    args = p.parse_args()
    print(f"bloomery {bloomery.__version__}, Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs, {args.rounds} interleaved rounds, medians", file=sys.stderr)
    for n in args.sizes:
        for key_type in args.types:
            r = measure(args.kind, args.fpr, n, key_type, args.rounds)
            if args.json:
                print(json.dumps(r), flush=True)
            else:
                print_result(r)
                sys.stdout.flush()


if __name__ == "__main__":
    main()
