"""Keys of RedisBloom's own layout (`MBbloom--`, `MBbloomCF`) under the server's persistence,
replication and cluster, as test_persistence.py, test_replication.py and test_cluster.py check
bloomery's own keys.

Every key of tests/data/redisbloom-golden (13 Bloom, 15 cuckoo, written by RedisBloom 2.4.23) is
RESTOREd from its DUMP payload; then writes go to some of them (WRITES: BF.MADD of new items that
grow a sub-filter on a01 and a13, BF.INSERT of edge-case items — the empty string, NUL, CR LF and
RESP-looking bytes — on a12, CF.INSERT that grows a21 and a24, CF.DEL of stored items on a27 (one
deletion compacts the chain) and a34 (its edge items), and writes that only reply an error on the
full a06 and a35). Their replies must be those of the Python model of RedisBloom 2.4
(redisbloom_model.py). A snapshot of a key is: TYPE, BF.INFO / CF.INFO, MEXISTS (batches of 500)
of its ~2,000 golden probe items and the new items the writes used, CF.COUNT of a sample (every
20th probe and up to ~40 written items), its SCANDUMP chunk sequence and its DUMP bytes. Before
anything is persisted the snapshot is checked against references: for an unchanged key the
golden answers (answers.json), golden chunks and golden payload; for a written key the model's
INFO and answers.

- Persistence: SAVE and a restart; an AOF (`--appendonly yes`) holding exactly the RESTORE and
  the write commands that changed a key (the error-only writes and a CF.DEL of an absent item
  are not there), and a restart replaying it; an AOF rewrite, whose base file holds only
  BF.LOADCHUNK / CF.LOADCHUNK commands — for every key its SCANDUMP sequence (for the empty
  cuckoo key, which has none, its header and empty slots, as RedisBloom's rewrite sends them) —
  and a restart from it. Each restart gives back the same snapshot; after the rewrite and its
  restart every unchanged key DUMPs the golden payload byte for byte.
- Replication: half the golden keys are restored on the master before a replica attaches (they
  reach it by the full sync's RDB), the others after (by the command stream), and two golden
  SCANDUMP sequences are LOADCHUNKed on the master into new keys (RedisBloom did not replicate
  LOADCHUNK; the module does); the replica DUMPs every key as the golden payload. After the
  writes (on golden keys of both halves and on the LOADCHUNKed copies) the replica's snapshot
  equals the master's, TYPE included, and each copy's equals its source's.
- Cluster: a 3-master cluster takes every golden key by RESTORE through redis-py's RedisCluster
  (the keys land on all three masters) and answers everything golden through that client,
  probes included; then the writes through the cluster client reply as on a single server given
  the same RESTOREs and writes, and both snapshots are equal (and match the references).

All 28 keys are restored and snapshotted everywhere; the writes touch 9 of them (chosen to reach
growth, deletion with compaction, edge-case bytes and error replies while keeping the file's
runtime low: the other keys would only repeat these cases)."""

import functools

import redis
from redis.cluster import ClusterNode, RedisCluster

import redisbloom_model as model
from redis_helpers import (aof_files, in_sync, make_master, scandump, start_replica,
                           wait_for_rewrite)
from redisbloom_payloads import (BF_TYPE, MEXISTS_BATCH, cf_filter, cf_header, golden_chunks,
                                 golden_dump, golden_keys, parse_dump, plain, utf8)

KEYS = golden_keys()
RECORDS = {k["key"]: k for k in KEYS}
NAMES = [k["key"] for k in KEYS]


def fresh(tag, n):
    return ["%s:new:%d" % (tag, i) for i in range(n)]


def stored(name, n):
    """The first n golden probe items of `name` that were added and that CF.COUNT finds."""
    p = RECORDS[name]["probes"]
    return [x for x, kind, count in zip(p["items"], p["kind"], p["count"])
            if kind == "added" and count >= 1][:n]


EDGE_NEW = ["", "\x00", "\r\n*1\r\n$4\r\nPING\r\n", "a12:new:\u00e9\u20ac\U0001F600",
            "a12:new:" + "z" * 1000, "a12:new:\x00\xff"]

# Per golden key, its writes: (command, arguments after the key name).
WRITES = {
    # 4 -> 5 sub-filters (the model says so; test_rdb_save_and_restart checks it).
    "a01-bf-e0.1-c100-x2": [("BF.MADD", *fresh("a01", 600))],
    # Full and NONSCALING: the array stops at its first item with an error; nothing is written.
    "a06-bf-e0.001-c1000-nonscaling": [("BF.MADD", *fresh("a06", 3))],
    "a12-bf-edge-items": [("BF.INSERT", "ITEMS", *EDGE_NEW)],
    "a13-bf-e0.0001-c100-x1-6filters": [("BF.MADD", *fresh("a13", 100))],  # 6 -> 7
    "a21-cf-c1000-b2": [("CF.INSERT", "ITEMS", *fresh("a21", 1200))],  # 2 -> 3
    "a24-cf-c100-b2-mi5-x1": [("CF.INSERT", "ITEMS", *fresh("a24", 300))],  # 7 -> 10
    # Deletions of stored items; the deleted count drops from 19: a deletion compacted the chain.
    "a27-cf-del-compact-c200-x2": [("CF.DEL", x)
                                   for x in stored("a27-cf-del-compact-c200-x2", 60)],
    # The edge items ("" first), an absent item (0, nothing written), a RESP-looking new item.
    "a34-cf-edge-items": [("CF.DEL", x) for x in stored("a34-cf-edge-items", 8)] +
                         [("CF.DEL", "a34:absent"), ("CF.ADD", "\r\n$0\r\n")],
    # 32 sub-filters: "Maximum expansions reached", nothing written.
    "a35-cf-c4-b2-mi1-x1-max-expansions": [("CF.ADD", "a35:new:0")],
}
GROWN = ["a01-bf-e0.1-c100-x2", "a13-bf-e0.0001-c100-x1-6filters", "a21-cf-c1000-b2",
         "a24-cf-c100-b2-mi5-x1"]
UNCHANGED = [name for name in NAMES if name not in WRITES]


def field(info, name):
    """A field of an INFO reply (a flat name, value list)."""
    return info[info.index(name) + 1]


def encoded(arg):
    return arg if isinstance(arg, bytes) else str(arg).encode()


class Plan:
    """A golden key, its writes, and the model of RedisBloom after them."""

    def __init__(self, name):
        self.name = name
        self.record = RECORDS[name]
        self.kind = self.record["type"].upper()
        self.writes = WRITES.get(name, [])
        self.model = model.replay(self.record)
        self.replies = [model.apply(self.model, [command, name, *args])
                        for command, *args in self.writes]
        probes = set(self.record["probes"]["items"])
        written = [x for command, *args in self.writes
                   for x in (args[args.index("ITEMS") + 1:] if "ITEMS" in args else args)]
        self.new = list(dict.fromkeys(x for x in written if x not in probes))
        self.touched = list(dict.fromkeys(written))

    def commands(self, key):
        """The writes' argv for key `key` (the golden key or a copy of it)."""
        return [[command, key, *args] for command, *args in self.writes]

    def changed(self):
        """The writes that changed the key (and so reach replicas and the AOF)."""
        return [w for w, reply in zip(self.writes, self.replies)
                if 1 in (reply if isinstance(reply, list) else [reply])]

    def items(self, written):
        """What a snapshot probes: the golden probe items (and, after the writes, the new ones),
        and the CF.COUNT sample."""
        probes = self.record["probes"]["items"]
        items = probes + (self.new if written else [])
        sample = probes[::20] if self.kind == "CF" else []
        if written and self.kind == "CF" and self.touched:
            sample = sample + self.touched[::max(1, len(self.touched) // 40)]
        return items, sample


@functools.lru_cache(maxsize=None)
def plan(name):
    return Plan(name)


def send(c, commands):
    p = c.pipeline(transaction=False)
    for argv in commands:
        p.execute_command(*argv)
    return [plain(x) for x in p.execute(raise_on_error=False)]


def restore(c, names, prefix=""):
    replies = send(c, [("RESTORE", prefix + name, 0, golden_dump(name)) for name in names])
    assert replies == ["OK"] * len(names), dict(zip(names, replies))


def write(c, names=WRITES, prefix=""):
    """Sends every key's writes; checks the replies against the model's (unless `prefix` names a
    copy); returns them."""
    commands, expected = [], []
    for name in names:
        commands += plan(name).commands(prefix + name)
        expected += plan(name).replies
    replies = send(c, commands)
    diffs = [(argv[:2], got, want)
             for argv, got, want in zip(commands, replies, expected) if got != want]
    assert not diffs, "%d write replies differ (command, got, model): %.2000r" % (
        len(diffs), diffs)
    return replies


# --- snapshots ----------------------------------------------------------------------------------

FIELDS = ("type", "info", "exists", "count", "chunks", "dump")


def snapshot(c, keys, written=True):
    """{key: {field: value}} for `keys` ({key: golden name of its plan}): TYPE, INFO, MEXISTS of
    the probes, CF.COUNT of the sample, the SCANDUMP sequence and DUMP."""
    p = c.pipeline(transaction=False)
    layout = []
    for key, name in keys.items():
        pl = plan(name)
        items, sample = pl.items(written)
        items, sample = utf8(items), utf8(sample)
        p.execute_command("TYPE", key)
        p.execute_command(pl.kind + ".INFO", key)
        batches = range(0, len(items), MEXISTS_BATCH)
        for at in batches:
            p.execute_command(pl.kind + ".MEXISTS", key, *items[at:at + MEXISTS_BATCH])
        for x in sample:
            p.execute_command("CF.COUNT", key, x)
        p.execute_command("DUMP", key)
        layout.append((key, pl.kind, len(batches), len(sample)))
    replies = p.execute(raise_on_error=False)
    out, at = {}, 0
    for key, kind, n_batches, n_sample in layout:
        type_, info = plain(replies[at:at + 2])
        at += 2
        exists = []
        for reply in replies[at:at + n_batches]:
            exists += plain(reply) if isinstance(reply, list) else [plain(reply)]
        at += n_batches
        counts = plain(replies[at:at + n_sample])
        at += n_sample
        dump = replies[at]
        at += 1
        out[key] = {"type": type_, "info": info, "exists": exists, "count": counts,
                    "chunks": scandump(c, key, kind), "dump": dump}
    return out


def describe(key, field, got, want):
    if isinstance(got, list) and isinstance(want, list) and field != "info":
        wrong = [i for i in range(max(len(got), len(want)))
                 if i >= len(got) or i >= len(want) or got[i] != want[i]]
        i = wrong[0]
        return "%s %s: %d of %d differ, first at %d: got %.100r, expected %.100r" % (
            key, field, len(wrong), len(want), i, got[i] if i < len(got) else "(none)",
            want[i] if i < len(want) else "(none)")
    return "%s %s: got %.300r, expected %.300r" % (key, field, got, want)


def assert_same(got, want, what):
    """Two snapshots (or a snapshot and references) agree, field by field."""
    assert sorted(got) == sorted(want), what
    diffs = [describe(key, field, got[key].get(field), want[key][field])
             for key in want for field in want[key] if got[key].get(field) != want[key][field]]
    assert not diffs, "%s: %d differences:\n%s" % (what, len(diffs), "\n".join(diffs[:30]))


def references(keys, written=True):
    """What each key must show: the golden record for an unchanged key (or before the writes),
    the model for a written key (without chunks and DUMP, which the model does not build)."""
    out = {}
    for key, name in keys.items():
        pl = plan(name)
        items, sample = pl.items(written)
        if written and pl.writes:
            value = pl.model.value
            out[key] = {"type": pl.record["redis_type"], "info": value.info(),
                        "exists": [value.check(x) for x in items],
                        "count": [value.count(x) for x in sample]}
            continue
        probes = pl.record["probes"]
        count = probes["count"][::20] if pl.kind == "CF" else []
        out[key] = {"type": pl.record["redis_type"], "info": pl.record["info"],
                    "exists": probes["exists"], "count": count,
                    "chunks": list(golden_chunks(name)), "dump": golden_dump(name)}
    return out


ALL = {name: name for name in NAMES}


def load_and_write(c):
    """RESTOREs every golden key, writes, checks the result; returns the snapshot."""
    restore(c, NAMES)
    write(c)
    s = snapshot(c, ALL)
    assert_same(s, references(ALL), "after the RESTOREs and writes")
    return s


# --- the AOF ------------------------------------------------------------------------------------

def aof_commands(path):
    """The commands of an AOF file without an RDB preamble (SELECT, MULTI and EXEC left out), as
    lists of bytes."""
    with open(path, "rb") as f:
        data = f.read()
    out, pos = [], 0
    while pos < len(data):
        assert data[pos:pos + 1] == b"*", (path, pos, data[pos:pos + 40])
        end = data.index(b"\r\n", pos)
        n, pos = int(data[pos + 1:end]), end + 2
        argv = []
        for _ in range(n):
            assert data[pos:pos + 1] == b"$", (path, pos)
            end = data.index(b"\r\n", pos)
            length, pos = int(data[pos + 1:end]), end + 2
            argv.append(data[pos:pos + length])
            assert data[pos + length:pos + length + 2] == b"\r\n"
            pos += length + 2
        out.append(argv)
    return [argv for argv in out if argv[0].upper() not in (b"SELECT", b"MULTI", b"EXEC")]


def aof_server(make_server):
    return make_server("--appendonly", "yes", "--aof-use-rdb-preamble", "no",
                       "--appendfsync", "always")


# --- persistence --------------------------------------------------------------------------------

def test_rdb_save_and_restart(make_server):
    # The writes reach what they are meant to: growth, compaction, error replies.
    for name in GROWN:
        assert field(plan(name).model.value.info(), "Number of filters") > \
            field(RECORDS[name]["info"], "Number of filters"), name
    for name in ("a06-bf-e0.001-c1000-nonscaling", "a35-cf-c4-b2-mi1-x1-max-expansions"):
        assert not plan(name).changed(), name
    name = "a27-cf-del-compact-c200-x2"
    assert field(plan(name).model.value.info(), "Number of items deleted") < \
        field(RECORDS[name]["info"], "Number of items deleted")

    server = make_server()
    c = server.client()
    before = load_and_write(c)
    assert c.save()
    server.restart()
    assert_same(snapshot(server.client(), ALL), before, "after SAVE and a restart")


def test_aof_holds_the_restores_and_writes_and_replays_them(make_server):
    server = aof_server(make_server)
    before = load_and_write(server.client())
    (incr,) = aof_files(server, ".incr.aof")
    expected = [[b"RESTORE", name.encode(), b"0", golden_dump(name)] for name in NAMES]
    for name in WRITES:
        expected += [[encoded(a) for a in (command, name, *args)]
                     for command, *args in plan(name).changed()]
    got = aof_commands(incr)
    assert [argv[:2] for argv in got] == [argv[:2] for argv in expected]
    assert got == expected  # the arguments too, byte for byte
    server.restart()
    assert_same(snapshot(server.client(), ALL), before, "after a restart from the AOF")


def test_aof_rewrite_emits_loadchunk_sequences(make_server):
    server = aof_server(make_server)
    c = server.client()
    before = load_and_write(c)
    c.bgrewriteaof()
    wait_for_rewrite(c)
    (base,) = aof_files(server, ".base.aof")
    sequences = {}
    for argv in aof_commands(base):
        name = argv[1].decode()
        kind = "BF" if RECORDS[name]["redis_type"] == BF_TYPE else "CF"
        # Only LOADCHUNK, of the key's own type: no RESTORE, no write command.
        assert argv[0] == kind.encode() + b".LOADCHUNK" and len(argv) == 4, argv[:3]
        sequences.setdefault(name, []).append((int(argv[2]), argv[3]))
    assert sorted(sequences) == sorted(NAMES)
    for name in NAMES:
        chunks = before[name]["chunks"]
        if chunks:
            # RedisBloom's format: the SCANDUMP sequence, header (iter 1) first.
            assert sequences[name] == chunks, name
        else:
            # An empty cuckoo filter has no SCANDUMP sequence (RedisBloom replies [0, nil]), yet
            # RedisBloom's rewrite sends it too: the header, then the (empty) slots in chunks,
            # each chunk's iterator 1 + the bytes sent so far.
            (it, header), *data = sequences[name]
            f = cf_filter(parse_dump(golden_dump(name))[2])
            h = cf_header(header)
            assert it == 1 and h == {n: f[n] for n in h}, (name, h)
            assert b"".join(d for _, d in data) == b"".join(slots for _, slots in f["filters"])
            assert [i for i, _ in data] == \
                [1 + sum(len(d) for _, d in data[:n + 1]) for n in range(len(data))], name
    (incr,) = aof_files(server, ".incr.aof")
    assert aof_commands(incr) == []
    server.restart()
    after = snapshot(server.client(), ALL)
    assert_same(after, before, "after the AOF rewrite and a restart")
    for name in UNCHANGED:
        assert after[name]["dump"] == golden_dump(name), name


# --- replication --------------------------------------------------------------------------------

# Golden SCANDUMP sequences LOADCHUNKed on the master into keys "copy:<name>" (a BF and a CF key
# that the writes then grow, so the copies take writes too).
COPIED = ["a01-bf-e0.1-c100-x2", "a21-cf-c1000-b2"]


def test_replica_follows_restores_loadchunks_and_writes(make_server):
    master = make_master(make_server)
    m = master.client()
    before_attach, after_attach = NAMES[::2], NAMES[1::2]
    restore(m, before_attach)
    replica = start_replica(make_server, master)  # a full sync: these keys come by RDB
    assert m.info("stats")["sync_full"] == 1
    restore(m, after_attach)  # the command stream
    for name in COPIED:
        kind = plan(name).kind
        chunks = golden_chunks(name)
        assert send(m, [(kind + ".LOADCHUNK", "copy:" + name, it, data)
                        for it, data in chunks]) == ["OK"] * len(chunks), name
    in_sync(master, replica)
    r = replica.client()
    keys = dict(ALL, **{"copy:" + name: name for name in COPIED})
    p = r.pipeline(transaction=False)
    for key in keys:
        p.execute_command("TYPE", key)
        p.execute_command("DUMP", key)
    replies = p.execute()
    for i, (key, name) in enumerate(keys.items()):
        assert replies[2 * i].decode() == RECORDS[name]["redis_type"], key
        assert replies[2 * i + 1] == golden_dump(name), key

    write(m)
    write(m, COPIED, prefix="copy:")
    in_sync(master, replica)
    mine, theirs = snapshot(m, keys), snapshot(r, keys)
    assert_same(mine, references(keys), "the master after the writes")
    assert_same(theirs, mine, "the replica against the master")
    for name in COPIED:
        assert theirs["copy:" + name] == theirs[name], name
    assert {theirs[key]["type"] for key in keys} == {"MBbloom--", "MBbloomCF"}


# --- cluster ------------------------------------------------------------------------------------


def test_cluster_takes_golden_keys_and_writes_as_a_single_server(cluster, make_server):
    rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", n.port) for n in cluster])
    # Both clients strip "ERR " from error texts (RedisCluster takes no parser of its own).
    single = redis.Redis(host="127.0.0.1", port=make_server().port, socket_timeout=60)
    try:
        restore(rc, NAMES)
        restore(single, NAMES)
        sizes = [n.client().dbsize() for n in cluster]
        assert sum(sizes) == len(NAMES)
        assert all(sizes), f"keys per master {sizes}: all three should hold some"
        # Every key answers as RedisBloom did, through the cluster client.
        assert_same(snapshot(rc, ALL, written=False), references(ALL, written=False),
                    "the cluster after the RESTOREs")

        commands = [argv for name in WRITES for argv in plan(name).commands(name)]
        replies = send(rc, commands)
        assert replies == send(single, commands)
        flat = [x for reply in replies for x in (reply if isinstance(reply, list) else [reply])]
        assert {"error": "Maximum expansions reached"} in flat  # error replies agree too
        theirs = snapshot(rc, ALL)
        assert_same(theirs, snapshot(single, ALL), "the cluster against a single server")
        assert_same(theirs, references(ALL), "the cluster after the writes")
    finally:
        rc.close()
        single.close()
