#!/usr/bin/env python3
"""Runs bloomery-blocklist on a small workload and checks what it claims, from its --json:
no blocked entry is ever let through (during the swaps too), every "possibly" and only those
cost a remote call, and the measured false-positive rate is within 5 standard deviations of the
target. Then a bad argument: status 2, one line on standard error.

usage: check_blocklist.py PATH/TO/bloomery-blocklist"""

import json
import math
import subprocess
import sys

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def main():
    binary = sys.argv[1]
    small = ["--urls", "5000", "--senders", "5000", "--queries", "20000", "--latency-us", "0",
             "--baseline", "100", "--updates", "2", "--churn", "0.1"]
    run = subprocess.run([binary, "--json"] + small, capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        sys.exit(f"bloomery-blocklist exited {run.returncode}: {run.stderr.strip()}")
    out = json.loads(run.stdout)
    p = out["params"]["target fpr"]
    for name, r in out["results"].items():
        check(r["blocked_missed"] == 0, f"{name}: {r['blocked_missed']} blocked entries missed")
        check(r["swap_missed"] == 0, f"{name}: {r['swap_missed']} missed during the swaps")
        check(r["torn_snapshots"] == 0, f"{name}: {r['torn_snapshots']} half-updated filters")
        check(r["versions_seen"] == r["versions"] + 1,
              f"{name}: a thread saw {r['versions_seen']} of {r['versions'] + 1} versions")
        check(r["remote_calls"] == r["filter_positives"],
              f"{name}: {r['remote_calls']} remote calls for {r['filter_positives']} positives")
        # Clean lookups are distinct keys, so false positives are Binomial(clean, p') with p' the
        # filter's own rate, which differs from the target by about 2% here (k, m rounded; the
        # fill's spread): far inside 5 standard deviations (about 25% of the mean here).
        n, fp = r["clean_queries"], r["false_positives"]
        mean, sd = n * p, math.sqrt(n * p * (1 - p))
        check(abs(fp - mean) <= 5 * sd,
              f"{name}: {fp} false positives in {n} clean lookups; "
              f"expected {mean:.0f} +- {5 * sd:.0f}")

    bad = subprocess.run([binary, "--fpr", "1.5"], capture_output=True, text=True, timeout=60)
    check(bad.returncode == 2, f"--fpr 1.5 exited {bad.returncode}, not 2")
    check(bad.stdout == "" and len(bad.stderr.splitlines()) == 1
          and bad.stderr.startswith("bloomery-blocklist: error: --fpr"),
          f"--fpr 1.5 printed {bad.stdout!r} and {bad.stderr!r}")

    for f in failures:
        print("FAILED:", f)
    if failures:
        sys.exit(1)
    print("ok:", ", ".join(f"{name}: {r['false_positives']} false positives, "
                           f"{r['swap_queries']} lookups during the swaps"
                           for name, r in out["results"].items()))


if __name__ == "__main__":
    main()
