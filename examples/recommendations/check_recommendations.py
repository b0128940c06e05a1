#!/usr/bin/env python3
"""Runs bloomery-recommendations on a small workload and checks what it claims, from its --json:
nothing a user has seen is recommended again and no existing friend is suggested (no false
negatives either), the per-user filters stay at or under the target false-positive rate, and the
shared filter meets it (5 standard deviations). Then a bad argument: status 2, one line on
standard error.

usage: check_recommendations.py PATH/TO/bloomery-recommendations"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "common"))
from check_support import check, check_bad_arguments, check_binomial, finish, run_json


def main():
    binary = sys.argv[1]
    out = run_json(binary, ["--users", "1000", "--items", "100000", "--history", "50",
                            "--friends", "10", "--candidates", "50"])
    p = out["params"]["target fpr"]
    for name, r in out["results"].items():
        check(r["repeats"] == 0, f"{name}: {r['repeats']} suggestions already seen or made")
        check(r["false_negatives"] == 0, f"{name}: {r['false_negatives']} false negatives")
        check(r["suggestions"] > 0, f"{name}: no suggestions")
        # Candidates new to a user are distinct keys for that user's filter, and the pairs are
        # distinct keys for the shared one: false positives are binomial (sums of binomials) at
        # each filter's own rate. The per-user filters use every bit of the cache lines they
        # occupy, so their rate is under the target (a one-sided bound); the shared filter is
        # sized to the target exactly (its own rate within about 2% of it).
        n = r["absent_candidates"]
        check_binomial(f"{name}: false positives", r["false_positives"], n, p, at_most=True)
        check_binomial(f"{name}: shared filter, false positives", r["shared_false_positives"],
                       n, p)

    check_bad_arguments(binary, ["--history", "0"], "--history")

    finish(", ".join(f"{name}: {r['suggestions']} suggestions, FPR {r['fpr']:.4%} "
                     f"(shared {r['shared_fpr']:.4%})" for name, r in out["results"].items()))


if __name__ == "__main__":
    main()
