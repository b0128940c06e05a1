"""Constructors size a filter promptly at the edges of their range, and build it with the GIL
released (issue 26, D5: BlockedBloomFilter(2**48, 0.9999999999) once sized for minutes while
holding the GIL)."""

import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import bloomery

LIMIT_S = 10  # a bound on "never stalls", not a benchmark: sizing takes milliseconds


def always_overcommits():
    """Under vm.overcommit_memory = 1 a 1.5 TB allocation succeeds and zeroing it never ends."""
    try:
        with open("/proc/sys/vm/overcommit_memory") as f:
            return f.read().strip() == "1"
    except OSError:
        return False


@pytest.mark.skipif(always_overcommits(), reason="the kernel grants any allocation")
def test_blocked_filter_for_2_48_keys_near_rate_1_answers_promptly():
    """In a child process, so that a stall (with the GIL held nothing in-process can interrupt)
    fails the test at the limit instead of hanging the run. The sizing asks for about 1.5 TB:
    the constructor either builds it or raises MemoryError, within moments either way."""
    code = textwrap.dedent("""
        import bloomery
        try:
            f = bloomery.BlockedBloomFilter(2**48, 0.9999999999)
        except MemoryError:
            print("MemoryError")
        else:
            print("built", f.size_in_bytes)
    """)
    start = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=LIMIT_S, env=os.environ.copy())
    except subprocess.TimeoutExpired:
        pytest.fail(f"BlockedBloomFilter(2**48, 0.9999999999) still ran after {LIMIT_S} s")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] in ("MemoryError", "built"), done.stdout
    assert time.monotonic() - start < LIMIT_S


@pytest.mark.parametrize("capacity, fpr", [(2**64 - 1, 1e-300), (2**48 + 1, 0.5),
                                           (2**48, 0.01), (1, 2**-1074)])
def test_out_of_range_targets_are_refused_promptly(capacity, fpr):
    """Targets beyond 2^48 bits raise ValueError (each within the limit: pytest runs them in
    this process, so a stall would show as this test's duration)."""
    start = time.monotonic()
    with pytest.raises(ValueError, match="maximum 2\\^48"):
        bloomery.BlockedBloomFilter(capacity, fpr)
    assert time.monotonic() - start < LIMIT_S


# Capacities for about 120 MB of table each: large enough that zeroing it takes tens of ms.
BIG = [
    (bloomery.BloomFilter, 100_000_000),
    (bloomery.BlockedBloomFilter, 100_000_000),
    (bloomery.CountingBloomFilter, 25_000_000),
    (bloomery.CuckooFilter, 100_000_000),
    (bloomery.ScalableBloomFilter, 70_000_000),
    (bloomery.ScalableCuckooFilter, 100_000_000),
]


@pytest.mark.parametrize("cls, capacity", BIG, ids=[cls.__name__ for cls, _ in BIG])
def test_constructor_releases_the_gil(cls, capacity):
    """The switch interval is set to 1000 s, so the building thread never gives up the GIL unless
    it releases it. It marks itself "building" just before the constructor and "done" just after;
    the main thread, sleeping in 0.5 ms steps, can see "building" only if it ran in between -- so
    only if the constructor released the GIL."""
    state = {"phase": "starting", "seen_building": 0}
    errors = []

    def build():
        try:
            state["phase"] = "building"
            f = cls(capacity, 0.01)
            state["phase"] = "done"
            del f
        except BaseException as e:  # reported by the main thread
            errors.append(e)
            state["phase"] = "done"

    old = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        t = threading.Thread(target=build)
        t.start()
        deadline = time.monotonic() + LIMIT_S
        while state["phase"] != "done" and time.monotonic() < deadline:
            if state["phase"] == "building":
                state["seen_building"] += 1
            time.sleep(0.0005)
        t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    assert state["seen_building"] > 0, f"{cls.__name__}() held the GIL while it built its table"
