"""What the examples' checkers (check_*.py) share: running a program for its --json, collecting
failed checks, binomial bounds on counts of false positives, the bad-argument contract (status 2,
nothing on standard output, one line on standard error) and the final report.

A checker finds this module through its own location, so ctest may run it from any directory:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                    "common"))
    from check_support import check, run_json, ...
"""

import json
import math
import os
import subprocess
import sys

_failures = []


def check(ok, what):
    """Records `what` as a failure unless `ok`; the checker goes on, so one run reports them all."""
    if not ok:
        _failures.append(what)


def program_name(binary):
    """The name a program gives itself in its messages: its file name without a suffix."""
    return os.path.splitext(os.path.basename(binary))[0]


def run_json(binary, args, stdin=None):
    """The parsed output of `binary --json ARGS` (`stdin` its input); a failed run ends the
    checker."""
    run = subprocess.run([binary, "--json"] + args, input=stdin, capture_output=True, text=True,
                         timeout=120)
    if run.returncode != 0:
        sys.exit(f"{' '.join([program_name(binary)] + args)} exited {run.returncode}: "
                 f"{run.stderr.strip()}")
    return json.loads(run.stdout)


def check_bad_arguments(binary, args, message_start, stdin=None):
    """Runs `binary ARGS` (`stdin` its input) and checks it refuses them: status 2, nothing on
    standard output, one line on standard error that starts `PROGRAM: error: MESSAGE_START`."""
    run = subprocess.run([binary] + args, input=stdin, capture_output=True, text=True, timeout=60)
    shown = " ".join(args)
    check(run.returncode == 2, f"{shown} exited {run.returncode}, not 2")
    check(run.stdout == "" and len(run.stderr.splitlines()) == 1
          and run.stderr.startswith(f"{program_name(binary)}: error: {message_start}"),
          f"{shown} printed {run.stdout!r} and {run.stderr!r}")


def check_binomial(what, count, trials, p, at_most=False, sigmas=5):
    """Checks `count` as a draw of Binomial(trials, p): within `sigmas` standard deviations of the
    mean, or with `at_most` no more than that above it (where p only bounds the true rate)."""
    mean = trials * p
    spread = sigmas * math.sqrt(trials * p * (1 - p))
    if at_most:
        check(count <= mean + spread, f"{what}: {count} in {trials}; at most {mean + spread:.0f}")
    else:
        check(abs(count - mean) <= spread,
              f"{what}: {count} in {trials}; expected {mean:.0f} +- {spread:.0f}")


def finish(summary=None):
    """Prints every failed check and exits 1, or prints `ok` (with `summary`) when none failed."""
    for what in _failures:
        print("FAILED:", what)
    if _failures:
        sys.exit(1)
    print(f"ok: {summary}" if summary else "ok")
