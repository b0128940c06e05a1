#!/usr/bin/env python3
"""Runs bloomery-recommendations on a small workload and checks what it claims, from its --json:
nothing a user has seen is recommended again and no existing friend is suggested (no false
negatives either), the per-user filters stay at or under the target false-positive rate, and the
shared filter meets it (5 standard deviations). Then a bad argument: status 2, one line on
standard error.

usage: check_recommendations.py PATH/TO/bloomery-recommendations"""

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
    small = ["--users", "1000", "--items", "100000", "--history", "50", "--friends", "10",
             "--candidates", "50"]
    run = subprocess.run([binary, "--json"] + small, capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        sys.exit(f"bloomery-recommendations exited {run.returncode}: {run.stderr.strip()}")
    out = json.loads(run.stdout)
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
        mean, sd = n * p, math.sqrt(n * p * (1 - p))
        fp = r["false_positives"]
        check(fp <= mean + 5 * sd,
              f"{name}: {fp} false positives in {n}; at most {mean + 5 * sd:.0f}")
        fp = r["shared_false_positives"]
        check(abs(fp - mean) <= 5 * sd,
              f"{name}: shared filter, {fp} false positives in {n}; "
              f"expected {mean:.0f} +- {5 * sd:.0f}")

    bad = subprocess.run([binary, "--history", "0"], capture_output=True, text=True, timeout=60)
    check(bad.returncode == 2, f"--history 0 exited {bad.returncode}, not 2")
    check(bad.stdout == "" and len(bad.stderr.splitlines()) == 1
          and bad.stderr.startswith("bloomery-recommendations: error: --history"),
          f"--history 0 printed {bad.stdout!r} and {bad.stderr!r}")

    for f in failures:
        print("FAILED:", f)
    if failures:
        sys.exit(1)
    print("ok:", ", ".join(f"{name}: {r['suggestions']} suggestions, FPR {r['fpr']:.4%} "
                           f"(shared {r['shared_fpr']:.4%})" for name, r in out["results"].items()))


if __name__ == "__main__":
    main()
