"""A set of CF keys of every shape, and a snapshot of everything a client can see of them, for the
persistence and replication tests."""

import redis

from conftest import loadchunks, scandump

RESTORING = "ERR filter is being restored by CF.LOADCHUNK"
PROBES = [f"g{i}" for i in range(0, 3000, 7)] + [f"d{i}" for i in range(400)] + \
    [f"c{i}" for i in range(300)] + [f"absent{i}" for i in range(2000)] + ["x", "y"]
COUNTED = ["x", "y", "g0", "g1", "d0", "d399", "c0", "absent0"]


def items(prefix, n):
    return [f"{prefix}{i}" for i in range(n)]


def dump(r, key):
    return scandump(r, key, "CF")


def load(r, key, chunks):
    return loadchunks(r, key, chunks, "CF")


def populate(r):
    """Writes through every CF write command; returns the dumps of the keys left half-restored,
    so a test can finish their restores later."""
    r.execute_command("CF.RESERVE", "grown", 300, "EXPANSION", 2, "BUCKETSIZE", 4,
                      "MAXITERATIONS", 30)
    r.execute_command("CF.INSERT", "grown", "ITEMS", *items("g", 3000))  # several sub-filters
    r.execute_command("CF.INSERT", "deleted", "CAPACITY", 100, "ITEMS", *items("d", 400))
    for v in items("d", 400)[::3]:
        r.execute_command("CF.DEL", "deleted", v)
    r.execute_command("CF.RESERVE", "full", 4)
    r.execute_command("CF.INSERT", "full", "ITEMS", *items("c", 300))  # 32 sub-filters, full
    r.execute_command("CF.RESERVE", "empty", 1000, "EXPANSION", 4)
    r.execute_command("CF.ADD", "auto", "x")
    r.execute_command("CF.ADD", "auto", "x")
    r.execute_command("CF.ADDNX", "nx", "x")
    r.execute_command("CF.ADDNX", "nx", "x")
    r.execute_command("CF.INSERTNX", "nx", "ITEMS", "y", "y")
    # A copy by SCANDUMP/LOADCHUNK; one restore that has only its header, one that has 16 MiB of
    # its 18 MiB payload; one damaged restore (which deletes its key).
    load(r, "restored", dump(r, "grown"))
    small = dump(r, "auto")
    load(r, "header-only", small[:1])
    r.execute_command("CF.RESERVE", "big", 20_000_000)
    r.execute_command("CF.INSERT", "big", "ITEMS", *items("g", 500))
    big = dump(r, "big")
    load(r, "half", big[:2])
    it, data = small[1]
    load(r, "damaged", small[:1])
    try:
        r.execute_command("CF.LOADCHUNK", "damaged", it, data[:-1] + bytes([data[-1] ^ 1]))
        raise AssertionError("a damaged chunk was accepted")
    except redis.ResponseError as e:
        assert str(e) == "Couldn't load chunk!"
    return {"header-only": small, "half": big}


def snapshot(r):
    """Per key: INFO, answers and counts for the probes, and the SCANDUMP chunks; or the error a
    key being restored answers."""
    out = {}
    for key in sorted(k.decode() for k in r.keys("*")):
        try:
            reply = r.execute_command("CF.INFO", key)
        except redis.ResponseError as e:
            out[key] = (str(e), r.memory_usage(key))
            continue
        counts = [r.execute_command("CF.COUNT", key, v) for v in COUNTED]
        out[key] = (reply, r.execute_command("CF.MEXISTS", key, *PROBES), counts, dump(r, key),
                    r.memory_usage(key))
    return out


def finish_restores(r, pending):
    """Sends the rest of each half-restored key's chunks; returns what the restored keys and their
    sources show (MEMORY USAGE aside: it counts the key's name)."""
    for key, chunks in pending.items():
        done = 1 if key == "header-only" else 2
        load(r, key, chunks[done:])
    s = snapshot(r)
    return ([s["header-only"][:4], s["half"][:4]], [s["auto"][:4], s["big"][:4]])
