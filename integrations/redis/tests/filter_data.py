"""Per filter type (BLOOM: BF, CUCKOO: CF), a set of keys of every shape and a snapshot of
everything a client can see of them, for the persistence, replication and dump tests."""

import redis

from redis_helpers import items, loadchunks, reply_or_error, scandump


class Bloom:
    NAME = "BF"
    RESTORING = "ERR filter is being restored by BF.LOADCHUNK"
    DAMAGED = "ERR received bad data"  # the reply to a last chunk that damages the image
    PROBES = items("g", 3000)[::7] + items("f", 60) + items("absent", 2000) + ["x", "y"]
    # The keys populate() leaves complete (and a copy can take), and the commands that wrote them
    # (an AOF rewrite leaves only LOADCHUNK chunks).
    COMPLETE = ["grown", "full", "empty", "auto", "inserted", "restored", "big"]
    WRITES = [b"BF.MADD", b"BF.RESERVE"]
    # A snapshot's fields but MEMORY USAGE: INFO, the probes' answers, the chunks.
    FIELDS = 3

    def create(self, r, key, capacity, values=()):
        """A filter of `capacity` (1% error) holding `values`."""
        assert r.execute_command("BF.RESERVE", key, 0.01, capacity) == b"OK"
        if values:
            r.execute_command("BF.MADD", key, *values)

    def write(self, r):
        """Writes through every BF write command."""
        r.execute_command("BF.RESERVE", "grown", 0.01, 100, "EXPANSION", 3)
        r.execute_command("BF.MADD", "grown", *items("g", 2000))  # five sub-filters
        r.execute_command("BF.INSERT", "full", "CAPACITY", 50, "NONSCALING", "ITEMS",
                          *items("f", 60))
        r.execute_command("BF.RESERVE", "empty", 0.001, 1000)
        r.execute_command("BF.ADD", "auto", "x")
        r.execute_command("BF.INSERT", "inserted", "ERROR", 0.05, "EXPANSION", 1, "ITEMS", "x",
                          "y")

    def more_writes(self, m):
        """Writes after a restore, and one that replies an error (nothing to replicate)."""
        m.execute_command("BF.MADD", "half", "after", "restore")
        assert reply_or_error(m, "BF.ADD", "full", "no room") == "ERR non scaling filter is full"
        m.delete("grown")

    # Writes a copy must answer as its original, on the keys named.
    COPY_WRITES = (["grown", "empty", "full"],
                   [("BF.ADD", "new"), ("BF.MADD", "g7", "z"), ("BF.INSERT", "ITEMS", "y")])

    def answers(self, r, key):
        return (r.execute_command("BF.MEXISTS", key, *self.PROBES),)


class Cuckoo:
    NAME = "CF"
    RESTORING = "ERR filter is being restored by CF.LOADCHUNK"
    DAMAGED = "Couldn't load chunk!"
    PROBES = items("g", 3000)[::7] + items("d", 400) + items("c", 300) + items("absent", 2000) + \
        ["x", "y"]
    COUNTED = ["x", "y", "g0", "g1", "d0", "d399", "c0", "absent0"]
    COMPLETE = ["grown", "deleted", "full", "empty", "auto", "nx", "restored", "big"]
    WRITES = [b"CF.INSERT", b"CF.DEL"]
    # INFO, the probes' answers, the counts, the chunks.
    FIELDS = 4

    def create(self, r, key, capacity, values=()):
        assert r.execute_command("CF.RESERVE", key, capacity) == b"OK"
        if values:
            r.execute_command("CF.INSERT", key, "ITEMS", *values)

    def write(self, r):
        """Writes through every CF write command."""
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

    def more_writes(self, m):
        """Adds, deletes, and an add that does not fit after a restore; the delete of an item
        never added and the add that does not fit change nothing to replicate."""
        m.execute_command("CF.INSERT", "half", "ITEMS", "after", "restore")
        assert m.execute_command("CF.DEL", "half", "after") == 1
        assert m.execute_command("CF.DEL", "grown", "g5") == 1
        assert m.execute_command("CF.DEL", "grown", "never-added-here") == 0
        assert reply_or_error(m, "CF.ADD", "full", "no room") == "Maximum expansions reached"
        m.delete("deleted")

    COPY_WRITES = (["grown", "empty", "full"],
                   [("CF.ADDNX", "new"), ("CF.DEL", "g7"), ("CF.INSERT", "ITEMS", "z")])

    def answers(self, r, key):
        return (r.execute_command("CF.MEXISTS", key, *self.PROBES),
                [r.execute_command("CF.COUNT", key, v) for v in self.COUNTED])


BLOOM, CUCKOO = Bloom(), Cuckoo()
KINDS = [BLOOM, CUCKOO]


def populate(r, kind):
    """Writes through every write command of `kind`, then copies and restores by SCANDUMP and
    LOADCHUNK; returns the dumps of the keys left half-restored, so a test can finish their
    restores later."""
    kind.write(r)
    # A copy by SCANDUMP/LOADCHUNK; one restore that has only its header, one that has 16 MiB of
    # its larger payload; one damaged restore (which deletes its key).
    loadchunks(r, "restored", scandump(r, "grown", kind.NAME), kind.NAME)
    small = scandump(r, "auto", kind.NAME)
    loadchunks(r, "header-only", small[:1], kind.NAME)
    kind.create(r, "big", 20_000_000, items("g", 500))
    big = scandump(r, "big", kind.NAME)
    loadchunks(r, "half", big[:2], kind.NAME)
    it, data = small[1]
    loadchunks(r, "damaged", small[:1], kind.NAME)
    damaged = data[:-1] + bytes([data[-1] ^ 1])
    assert reply_or_error(r, kind.NAME + ".LOADCHUNK", "damaged", it, damaged) == kind.DAMAGED
    return {"header-only": small, "half": big}


def snapshot(r, kind):
    """Per key: INFO, the answers for the probes, the SCANDUMP chunks and MEMORY USAGE; or the
    error a key being restored answers, and its MEMORY USAGE."""
    out = {}
    for key in sorted(k.decode() for k in r.keys("*")):
        try:
            reply = r.execute_command(kind.NAME + ".INFO", key)
        except redis.ResponseError as e:
            out[key] = (str(e), r.memory_usage(key))
            continue
        out[key] = (reply, *kind.answers(r, key), scandump(r, key, kind.NAME),
                    r.memory_usage(key))
    return out


def without_memory_usage(kind, s):
    """A snapshot less the MEMORY USAGE of complete keys (it counts how the server allocated the
    key's objects, and its name)."""
    return {k: v[:kind.FIELDS] for k, v in s.items()}


def finish_restores(r, kind, pending):
    """Sends the rest of each half-restored key's chunks; returns what the restored keys and their
    sources show, less MEMORY USAGE."""
    for key, chunks in pending.items():
        done = 1 if key == "header-only" else 2
        loadchunks(r, key, chunks[done:], kind.NAME)
    s = without_memory_usage(kind, snapshot(r, kind))
    return ([s["header-only"], s["half"]], [s["auto"], s["big"]])
