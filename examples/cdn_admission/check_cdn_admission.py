#!/usr/bin/env python3
"""Runs bloomery-cdn-admission and checks what it claims, from its --json.

The Zipf trace (the default one unless arguments follow the binary): about half the objects are
one-hit wonders; both runs replay the same trace; the filter run writes at least 40% fewer objects
into the cache, and its byte hit ratio is no more than 1 point below the no-filter run's; a one-hit
wonder gets in only by a false positive, at most as often as the two windows' filters allow.
A small trace on standard input, with a cache that holds everything and one window: every object
requested twice or more is written exactly once, no one-hit wonder is, and the hits are exactly
the requests after the first (no filter) or after the second (filter). Then bad arguments and a
malformed trace line: status 2, one line on standard error.

usage: check_cdn_admission.py PATH/TO/bloomery-cdn-admission [TRACE ARGUMENTS...]"""

import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "common"))
from check_support import check, check_bad_arguments, check_binomial, finish, run_json


def replay(binary, args, stdin=None):
    out = run_json(binary, args, stdin)
    return out["params"], out["results"]["no filter"], out["results"]["admission filter"]


def main():
    binary, trace_args = sys.argv[1], sys.argv[2:]
    p, plain, f = replay(binary, trace_args)
    share = p["one-hit wonders"]
    check(0.45 <= share <= 0.55, f"zipf: {share:.3f} of the objects are one-hit wonders")
    check(plain["trace_checksum"] == f["trace_checksum"], "zipf: the runs replayed different traces")
    check(f["writes_avoided"] >= 0.40, f"zipf: only {f['writes_avoided']:.3f} of the writes avoided")
    check(f["byte_hit_ratio"] >= plain["byte_hit_ratio"] - 0.01,
          f"zipf: byte hit ratio {f['byte_hit_ratio']:.4f} against {plain['byte_hit_ratio']:.4f}")
    # A one-hit wonder's only request is a false positive of either window's filter, each sized
    # for a whole window at the target: a chance below 2p, so at most Binomial(n, 2p).
    n = round(share * p["distinct objects"])
    check_binomial("zipf: one-hit wonders let in", f["one_hit_writes"], n, 2 * p["filter fpr"],
                   at_most=True)
    check(plain["one_hit_writes"] == n, f"zipf: {plain['one_hit_writes']} of {n} one-hit wonders")

    # 300 objects requested 1 to 4 times each, shuffled; a cache larger than all of them.
    rng = random.Random(3)
    counts = {f"/obj/{i}": rng.randint(1, 4) for i in range(300)}
    ids = [o for o, c in counts.items() for _ in range(c)]
    rng.shuffle(ids)
    trace = "".join(f"{1700000000 + t} {o} {1000 + int(o[5:])}\n" for t, o in enumerate(ids))
    _, plain, f = replay(binary, ["--stdin", "--cache-bytes", "1000000000", "--window", "100000"],
                         trace)
    repeated = sum(1 for c in counts.values() if c >= 2)
    expect = {"no filter": (plain, len(counts), sum(c - 1 for c in counts.values())),
              "filter": (f, repeated, sum(c - 2 for c in counts.values() if c >= 2))}
    for name, (r, writes, hits) in expect.items():
        check(r["cache_writes"] == writes, f"stdin {name}: {r['cache_writes']} writes, not {writes}")
        got = round(r["hit_ratio"] * len(ids))
        check(got == hits, f"stdin {name}: {got} hits, not {hits}")
    check(f["one_hit_writes"] == 0, f"stdin: {f['one_hit_writes']} one-hit wonders written")

    check_bad_arguments(binary, ["--skew", "-1"], "--skew")
    check_bad_arguments(binary, ["--fpr", "0"], "--fpr")
    check_bad_arguments(binary, ["--stdin"], "line 2:", stdin="1 a 10\n2 b x\n")

    finish()


if __name__ == "__main__":
    main()
