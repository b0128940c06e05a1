"""A set of BF keys of every shape, and a snapshot of everything a client can see of them, for the
persistence and replication tests."""

import redis

from conftest import loadchunks, scandump

RESTORING = "ERR filter is being restored by BF.LOADCHUNK"
PROBES = [f"g{i}" for i in range(0, 3000, 7)] + [f"f{i}" for i in range(60)] + \
    [f"absent{i}" for i in range(2000)] + ["x", "y"]


def items(prefix, n):
    return [f"{prefix}{i}" for i in range(n)]


def populate(r):
    """Writes through every BF write command; returns the dumps of the keys left half-restored,
    so a test can finish their restores later."""
    r.execute_command("BF.RESERVE", "grown", 0.01, 100, "EXPANSION", 3)
    r.execute_command("BF.MADD", "grown", *items("g", 2000))  # five sub-filters
    r.execute_command("BF.INSERT", "full", "CAPACITY", 50, "NONSCALING", "ITEMS", *items("f", 60))
    r.execute_command("BF.RESERVE", "empty", 0.001, 1000)
    r.execute_command("BF.ADD", "auto", "x")
    r.execute_command("BF.INSERT", "inserted", "ERROR", 0.05, "EXPANSION", 1, "ITEMS", "x", "y")
    # A copy by SCANDUMP/LOADCHUNK; one restore that has only its header, one that has 16 MiB of
    # its 24 MiB payload; one damaged restore (which deletes its key).
    loadchunks(r, "restored", scandump(r, "grown"))
    small = scandump(r, "auto")
    loadchunks(r, "header-only", small[:1])
    r.execute_command("BF.RESERVE", "big", 0.01, 20_000_000)
    r.execute_command("BF.MADD", "big", *items("g", 500))
    big = scandump(r, "big")
    loadchunks(r, "half", big[:2])
    it, data = small[1]
    loadchunks(r, "damaged", small[:1])
    try:
        r.execute_command("BF.LOADCHUNK", "damaged", it, data[:-1] + bytes([data[-1] ^ 1]))
        raise AssertionError("a damaged chunk was accepted")
    except redis.ResponseError as e:
        assert str(e) == "ERR received bad data"
    return {"header-only": small, "half": big}


def snapshot(r):
    """Per key: INFO, answers for PROBES and the SCANDUMP chunks; or the error a key being
    restored answers."""
    out = {}
    for key in sorted(k.decode() for k in r.keys("*")):
        try:
            reply = r.execute_command("BF.INFO", key)
        except redis.ResponseError as e:
            out[key] = (str(e), r.memory_usage(key))
            continue
        out[key] = (reply, r.execute_command("BF.MEXISTS", key, *PROBES), scandump(r, key),
                    r.memory_usage(key))
    return out


def finish_restores(r, pending):
    """Sends the rest of each half-restored key's chunks; returns what the restored keys and their
    sources show (MEMORY USAGE aside: it counts the key's name)."""
    for key, chunks in pending.items():
        done = 1 if key == "header-only" else 2
        loadchunks(r, key, chunks[done:])
    s = snapshot(r)
    return ([s["header-only"][:3], s["half"][:3]], [s["auto"][:3], s["big"][:3]])
