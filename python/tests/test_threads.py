"""The GIL is released by long operations, and objects shared between threads stay sound."""

import sys
import threading

import pytest

import bloomery

KEYS_PER_THREAD = 200_000  # about 25 batches of the bindings' 8192 keys


def test_two_updates_overlap():
    """Two threads each run update() on their own filter, with keys from a generator. The GIL's
    switch interval is set to 1000 s, so no thread is ever made to give up the GIL: a thread runs
    Python code only while every other thread has released it. Each generator notes, between two
    of its keys, whether the other thread's generator advanced meanwhile. While a generator is
    suspended, its thread is inside update(); so such an advance means the other thread ran
    Python while this one was in update() -- update() had released the GIL, and both updates
    were in progress at once. If update() held the GIL, each thread would run its whole update
    before the other could start, and no generator could ever see the other advance."""
    progress = {"a": 0, "b": 0}
    saw_other_advance = {"a": 0, "b": 0}

    def keys(me, other):
        for i in range(KEYS_PER_THREAD):
            before = progress[other]
            yield f"{me}-{i}"
            progress[me] += 1
            if progress[other] != before:
                saw_other_advance[me] += 1

    filters = {name: bloomery.BloomFilter(KEYS_PER_THREAD, 0.01) for name in progress}
    errors = []

    def run(me, other):
        try:
            filters[me].update(keys(me, other))
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        threads = [threading.Thread(target=run, args=p) for p in (("a", "b"), ("b", "a"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    assert progress == {"a": KEYS_PER_THREAD, "b": KEYS_PER_THREAD}
    assert saw_other_advance["a"] + saw_other_advance["b"] > 0, (
        "no update() ever saw the other thread run: update() does not release the GIL")
    for name, f in filters.items():
        assert all(f.contains_many(f"{name}-{i}" for i in range(KEYS_PER_THREAD)))


@pytest.mark.parametrize("cls", [bloomery.BloomFilter, bloomery.ScalableBloomFilter,
                                 bloomery.CuckooFilter, bloomery.ScalableCuckooFilter])
def test_concurrent_writes_and_reads_on_one_filter(cls):
    """Writers on one filter take turns (a scalable filter's growth moves its storage); readers
    run beside them; no key is lost and nothing crashes."""
    f = cls(5_000, 0.01) if cls is not bloomery.CuckooFilter else cls(200_000, 0.01)
    n = 40_000
    errors = []
    done = threading.Event()

    def writer(t):
        try:
            keys = [f"{t}-{i}" for i in range(n)]
            f.update(keys[: n // 2])
            for k in keys[n // 2 :: 50]:
                f.add(k)
        except BaseException as e:
            errors.append(e)

    def reader():
        try:
            while not done.is_set():
                f.contains_many([f"0-{i}" for i in range(1000)])
                f.info()
                "0-1" in f
        except BaseException as e:
            errors.append(e)

    writers = [threading.Thread(target=writer, args=(t,)) for t in range(3)]
    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in writers + readers:
        t.start()
    for t in writers:
        t.join()
    done.set()
    for t in readers:
        t.join()
    assert not errors, errors
    for t in range(3):
        keys = [f"{t}-{i}" for i in range(n // 2)] + [f"{t}-{i}" for i in range(n // 2, n, 50)]
        assert all(f.contains_many(keys))


def test_union_both_ways_does_not_deadlock():
    a = bloomery.BloomFilter(100_000, 0.01)
    b = bloomery.BloomFilter(100_000, 0.01)
    a.update(range(0, 50_000))
    b.update(range(50_000, 100_000))

    def merge(x, y):
        for _ in range(200):
            x |= y

    threads = [threading.Thread(target=merge, args=p) for p in ((a, b), (b, a))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive(), "a |= b beside b |= a deadlocked"
    assert a.contains_many(range(100_000)) == [True] * 100_000


def test_a_list_mutated_during_update_is_safe():
    """update() reads a list batch by batch with the GIL released in between; another thread
    that shrinks and refills the list meanwhile changes which keys go in, and nothing else."""
    keys = [f"k{i}" for i in range(100_000)]
    f = bloomery.BloomFilter(200_000, 0.01)
    stop = threading.Event()

    def mutate():
        while not stop.is_set():
            del keys[50_000:]
            keys.extend(f"m{i}" for i in range(50_000))

    t = threading.Thread(target=mutate)
    t.start()
    try:
        for _ in range(5):
            f.update(keys)
    finally:
        stop.set()
        t.join()
    assert all(f.contains_many([f"k{i}" for i in range(50_000)]))
