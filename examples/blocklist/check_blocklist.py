#!/usr/bin/env python3
"""Runs bloomery-blocklist on a small workload and checks what it claims, from its --json:
no blocked entry is ever let through (during the swaps too), every "possibly" and only those
cost a remote call, and the measured false-positive rate is within 5 standard deviations of the
target. Then a bad argument: status 2, one line on standard error.

usage: check_blocklist.py PATH/TO/bloomery-blocklist"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "common"))
from check_support import check, check_bad_arguments, check_binomial, finish, run_json


def main():
    binary = sys.argv[1]
    out = run_json(binary, ["--urls", "5000", "--senders", "5000", "--queries", "20000",
                            "--latency-us", "0", "--baseline", "100", "--updates", "2",
                            "--churn", "0.1"])
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
        check_binomial(f"{name}: false positives in clean lookups", r["false_positives"],
                       r["clean_queries"], p)

    check_bad_arguments(binary, ["--fpr", "1.5"], "--fpr")

    finish(", ".join(f"{name}: {r['false_positives']} false positives, "
                     f"{r['swap_queries']} lookups during the swaps"
                     for name, r in out["results"].items()))


if __name__ == "__main__":
    main()
