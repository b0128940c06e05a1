"""The load argument LAYOUT, BF.DEBUG, CF.DEBUG and CF.COMPACT, against the real RedisBloom 2.4
(the golden data of tests/data/redisbloom-golden, written by RedisBloom v2.4.23 on Redis 7.0.15)
and the Python model of it (redisbloom_model.py, proved against that data by
test_redisbloom_model.py).

- Replay: on a server loaded with `LAYOUT redisbloom` each of the 28 golden keys (13 Bloom, 15
  cuckoo) is built by its recorded commands, pipelined: 21,658 replies, each equal to the recorded
  one (errors by their whole text). Then TYPE, BF.INFO / CF.INFO (every field, Size included),
  BF.DEBUG / CF.DEBUG and BF.CARD of every key; BF.EXISTS / CF.EXISTS and MEXISTS (batches of
  500) of the 56,000 probe items and CF.COUNT of the 30,000 cuckoo ones; the SCANDUMP sequence
  (every iterator, every chunk's bytes, the end reply); DUMP, the golden payload byte for byte.
- DEBUG after load: on a default server, the golden keys loaded by dump.rdb, by RESTORE and by
  LOADCHUNK (all but the empty cuckoo filter, which has no chunks) reply TYPE and BF.DEBUG /
  CF.DEBUG as recorded.
- CF.COMPACT on RedisBloom keys: every golden cuckoo key, RESTOREd, gets CF.DEL of stored items
  lying in older sub-filters, CF.COMPACT, CF.DEL of items in its newest sub-filter, CF.COMPACT
  again (the deletions chosen on the model, few enough that CF.DEL's own compaction stays off);
  every reply, and after each CF.COMPACT TYPE, CF.INFO, CF.DEBUG, EXISTS (by MEXISTS) and
  CF.COUNT of the probe and deleted items, and the header and slots of every sub-filter that
  DUMP holds, must be the model's.
- bloomery's own keys (the default layout): BF.DEBUG and CF.DEBUG answer in RedisBloom's format
  with the values BF.INFO / BF.CARD / CF.INFO report (a scaling chain of several sub-filters, a
  NONSCALING one, an empty one, a cuckoo filter of several sub-filters with deletes); CF.COMPACT
  replies OK and changes nothing; the error replies (missing key, wrong type, arity).
- The load argument: an unknown or missing value and a second LAYOUT keep the server from
  starting, with the log line; `LAYOUT bloomery` and `LAYOUT redisbloom` in any case work.
- RedisBloom's quirks under `LAYOUT redisbloom` (reads of a key of another type answer as for a
  missing key, CF.DEL there replies `Not found`; BF.RESERVE takes EXPANSION 0, negative and large
  ones, BF.INSERT expansions above 16, CF.RESERVE EXPANSION 0: the keys they make answer as the
  model), against the default layout's replies (WRONGTYPE, the range errors).

A failing comparison lists its differences as (key, what, expected, got): how many per key and
command (all of them), then each difference (the first 1,000)."""

import collections
import hashlib
import itertools
import math
import re
import shutil

import pytest
import redis

import redisbloom_model as model
from conftest import failed_load_output
from redis_helpers import WRONGTYPE, arity, error_of, items
from redisbloom_payloads import (
    BF_TYPE, CF_TYPE, ENCODING, bf_chain, cf_filter, golden_chunks, golden_dump, golden_keys,
    golden_rdb_path, parse_dump, plain, probe_replies, utf8)

KEYS = golden_keys()
CF_KEYS = [k for k in KEYS if k["type"] == "cf"]
REDISBLOOM = ["LAYOUT", "redisbloom"]
NOT_FOUND = "ERR not found"
NO_CUCKOO = "Cuckoo filter was not found"
BAD_LAYOUT = "bloomery-redis: LAYOUT must be bloomery or redisbloom"
TWICE = "bloomery-redis: LAYOUT is given twice"
CF_EXPANSION_0 = "EXPANSION: value must be an integer between 0 and 32768, inclusive."
CF_EXPANSION_1 = "EXPANSION: value must be an integer between 1 and 32768, inclusive."
BF_LINK = re.compile(r"bytes:(\d+) bits:(\d+) hashes:(\d+) hashwidth:64 capacity:(\d+) "
                     r"size:(\d+) ratio:(\S+)")
CF_DEBUG = ("bktsize:{Bucket size} buckets:{Number of buckets} items:{Number of items inserted} "
            "deletes:{Number of items deleted} filters:{Number of filters} "
            "max_iterations:{Max iterations} expansion:{Expansion rate}")


def kind_of(k):
    return k["type"].upper()


KIND_OF_TYPE = {"bloomr-BF": "BF", BF_TYPE: "BF", "bloomr-CF": "CF", CF_TYPE: "CF"}


def info(c, key):
    """BF.INFO or CF.INFO of `key` (either layout, whichever its type answers) as a dict."""
    reply = c.execute_command(KIND_OF_TYPE[c.type(key).decode()] + ".INFO", key)
    return {reply[i].decode(): reply[i + 1] for i in range(0, len(reply), 2)}


def send(c, commands):
    """The replies to `commands` (argv lists), pipelined, as plain() writes them."""
    p = c.pipeline(transaction=False)
    for argv in commands:
        p.execute_command(*argv)
    return [plain(x) for x in p.execute(raise_on_error=False)]


def shown(value):
    if isinstance(value, (bytes, bytearray)) and len(value) > 48:
        return "<%d bytes, sha256 %s>" % (len(value), hashlib.sha256(value).hexdigest()[:16])
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


class Differences:
    """Comparisons of the module's replies with the recorded (or modelled) ones; every difference
    is kept as (key, what, expected, got)."""

    SHOWN = 1000

    def __init__(self):
        self.compared = 0
        self.found = []

    def check(self, key, what, expected, got, detail=""):
        self.compared += 1
        if expected != got:
            self.found.append((key, what, detail, expected, got))

    def report(self):
        lines = ["%d of %d comparisons differ; by key and command:" % (len(self.found),
                                                                      self.compared)]
        counts = collections.Counter((key, what) for key, what, _, _, _ in self.found)
        lines += ["  %s %s: %d" % (key, what, n) for (key, what), n in counts.items()]
        lines.append("each (key, what, expected, got):")
        for key, what, detail, expected, got in self.found[:self.SHOWN]:
            if isinstance(expected, list) and isinstance(got, list) and \
                    len(expected) == len(got):
                # Only the elements that differ (INFO fields, DEBUG lines, array replies).
                at = [i for i, (a, b) in enumerate(zip(expected, got)) if a != b]
                expected = {i: expected[i] for i in at}
                got = {i: got[i] for i in at}
            line = "  %s, %s%s, expected %s, got %s" % (
                key, what, " " + detail if detail else "", shown(expected), shown(got))
            if isinstance(expected, bytes) and isinstance(got, bytes):
                at = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b),
                          min(len(expected), len(got)))
                line += " (first difference at byte %d)" % at
            lines.append(line)
        if len(self.found) > self.SHOWN:
            lines.append("  ... and %d more" % (len(self.found) - self.SHOWN))
        return "\n".join(lines)

    def assert_none(self):
        if self.found:
            pytest.fail(self.report())


def compare_probes(c, d, key, kind, probe_items, exists, counts=None, each=True, stage=""):
    """EXISTS of every item (each=True), MEXISTS of all in batches, CF.COUNT of every item when
    `counts` is given, against the expected lists."""
    got_exists, got_mexists, got_counts = probe_replies(c, key, kind, probe_items,
                                                        counts is not None, each)
    for item, want, got in zip(probe_items, exists, got_exists or []):
        d.check(key, kind + ".EXISTS" + stage, want, got, shown(item))
    for item, want, got in zip(probe_items, exists, got_mexists):
        d.check(key, kind + ".MEXISTS" + stage, want, got, shown(item))
    for item, want, got in zip(probe_items, counts or [], got_counts or []):
        d.check(key, "CF.COUNT" + stage, want, got, shown(item))


def compare_scandump(c, d, k):
    """SCANDUMP at 0 and at each golden iterator replies the golden (iterator, chunk) pairs, then
    the recorded end."""
    key, kind = k["key"], kind_of(k)
    chunks = golden_chunks(key)
    end = k["scandump_end"]
    expected = [[it, data] for it, data in chunks]
    expected.append([end[0], None if end[1] is None else end[1].encode()])
    p = c.pipeline(transaction=False)
    for it in [0] + [it for it, _ in chunks]:
        p.execute_command(kind + ".SCANDUMP", key, it)
    for n, (want, got) in enumerate(zip(expected, p.execute(raise_on_error=False))):
        if isinstance(got, list) and len(got) == 2 and len(want) == 2:
            d.check(key, kind + ".SCANDUMP", want[0], got[0], "reply %d iterator" % n)
            d.check(key, kind + ".SCANDUMP", want[1], got[1], "reply %d chunk" % n)
        else:
            d.check(key, kind + ".SCANDUMP", want, plain(got), "reply %d" % n)


def compare_recorded(c, d, k):
    """Everything answers.json recorded for key record `k` after its commands."""
    key, kind = k["key"], kind_of(k)
    commands = [["TYPE", key], [kind + ".INFO", key], [kind + ".DEBUG", key]]
    expected = [k["redis_type"], k["info"], k["debug"]]
    if kind == "BF":
        commands.append(["BF.CARD", key])
        expected.append(k["card"])
    for argv, want, got in zip(commands, expected, send(c, commands)):
        d.check(key, argv[0], want, got)
    probes = k["probes"]
    compare_probes(c, d, key, kind, utf8(probes["items"]), probes["exists"],
                   probes.get("count"))
    compare_scandump(c, d, k)
    d.check(key, "DUMP", golden_dump(key), c.execute_command("DUMP", key))


# --- comparisons with the model -----------------------------------------------------------------

def model_dump_fields(value):
    """What the DUMP of a key holding the model's `value` holds, as bf_chain / cf_filter read
    it."""
    if isinstance(value, model.BloomChain):
        links = [{"entries": x.entries, "error": x.error, "hashes": x.hashes, "bpe": x.bpe,
                  "bits": x.bits, "n2": 0, "array": bytes(x.array), "size": x.size}
                 for x in value.links]
        # RedisBloom's options: 64-bit hashing and no rounding (5), NONSCALING adds 8.
        return {"size": value.size, "nfilters": len(value.links),
                "options": 13 if value.nonscaling else 5, "growth": value.growth,
                "links": links}
    bs = value.bucket_size
    return {"numFilters": len(value.filters), "numBuckets": value.num_buckets,
            "numItems": value.num_items, "numDeletes": value.num_deletes, "bucketSize": bs,
            "maxIterations": value.max_iterations, "expansion": value.expansion,
            "filters": [(len(a) // bs, bytes(a)) for a in value.filters]}


def compare_dump_with_model(c, d, key, value, stage=""):
    what = "DUMP" + stage
    type_name = BF_TYPE if isinstance(value, model.BloomChain) else CF_TYPE
    try:
        name, encver, fields = parse_dump(c.execute_command("DUMP", key))
        got = (bf_chain if type_name == BF_TYPE else cf_filter)(fields)
    except (ValueError, AssertionError, IndexError, redis.ResponseError) as e:
        d.check(key, what, "a %s value" % type_name, "%s: %s" % (type(e).__name__, e))
        return
    d.check(key, what, (type_name, ENCODING), (name, encver), "type and encoding")
    want = model_dump_fields(value)
    parts = "links" if type_name == BF_TYPE else "filters"
    for field in want:
        if field != parts:
            d.check(key, what, want[field], got[field], field)
    d.check(key, what, len(want[parts]), len(got[parts]), "number of " + parts)
    for i, (w, g) in enumerate(zip(want[parts], got[parts])):
        if parts == "links":
            for field in w:
                d.check(key, what, w[field], g[field], "link %d %s" % (i, field))
        else:
            d.check(key, what, w[0], g[0], "sub-filter %d buckets" % i)
            d.check(key, what, w[1], bytes(g[1]), "sub-filter %d slots" % i)


def compare_model(c, d, key, mkey, probe_items, stage=""):
    """TYPE, INFO, DEBUG, BF.CARD, MEXISTS (and CF.COUNT) of `probe_items` and the DUMP's fields
    of `key` against the model's key `mkey`."""
    value = mkey.value
    kind = "BF" if isinstance(value, model.BloomChain) else "CF"
    commands = [[kind + ".INFO", key], [kind + ".DEBUG", key]]
    if kind == "BF":
        commands.append(["BF.CARD", key])
    expected = [BF_TYPE if kind == "BF" else CF_TYPE]
    expected += [model.apply(mkey, argv) for argv in commands]
    commands.insert(0, ["TYPE", key])
    for argv, want, got in zip(commands, expected, send(c, commands)):
        d.check(key, argv[0] + stage, want, got)
    exists = [value.check(x) for x in probe_items]
    counts = [value.count(x) for x in probe_items] if kind == "CF" else None
    compare_probes(c, d, key, kind, probe_items, exists, counts, each=False, stage=stage)
    compare_dump_with_model(c, d, key, value, stage)


def run_both(c, d, mkey, commands, stage=""):
    """Sends `commands` to the server and applies them to the model; compares every reply."""
    expected = [model.apply(mkey, argv) for argv in commands]
    for i, (argv, want, got) in enumerate(zip(commands, expected, send(c, commands))):
        d.check(argv[1], argv[0] + stage, want, got, "#%d %s" % (i, shown(argv[2:4])))


# === LAYOUT redisbloom: the golden keys rebuilt by their commands ================================

def test_redisbloom_layout_replays_the_golden_data(make_server):
    c = make_server(module_args=REDISBLOOM).client()
    d = Differences()
    replies = probes = 0
    for k in KEYS:
        key = k["key"]
        commands = [command["argv"] for command in k["commands"]]
        for i, (command, got) in enumerate(zip(k["commands"], send(c, commands))):
            d.check(key, command["argv"][0], command["reply"], got,
                    "#%d %s" % (i, shown(command["argv"][2:4])))
        replies += len(commands)
        probes += len(k["probes"]["items"])
        compare_recorded(c, d, k)
    assert (len(KEYS), replies, probes) == (28, 21658, 56000)
    assert c.dbsize() == len(KEYS)
    d.assert_none()


# === DEBUG of RedisBloom keys loaded on a default server ========================================

@pytest.mark.parametrize("how", ["rdb", "restore", "loadchunk"])
def test_debug_of_loaded_redisbloom_keys(make_server, tmp_path, how):
    keys = KEYS
    if how == "rdb":
        shutil.copy(golden_rdb_path(), tmp_path / "dump.rdb")
        c = make_server(directory=str(tmp_path)).client()
    else:
        c = make_server().client()
    if how == "restore":
        replies = send(c, [["RESTORE", k["key"], 0, golden_dump(k["key"])] for k in KEYS])
        assert replies == ["OK"] * len(KEYS)
    elif how == "loadchunk":
        # The empty cuckoo filter has no chunks: RedisBloom's CF.SCANDUMP replies [0, nil].
        keys = [k for k in KEYS if golden_chunks(k["key"])]
        assert [k["key"] for k in KEYS if k not in keys] == ["a33-cf-c1000-b4-x2-empty"]
        commands = [[kind_of(k) + ".LOADCHUNK", k["key"], it, data]
                    for k in keys for it, data in golden_chunks(k["key"])]
        assert send(c, commands) == ["OK"] * len(commands)
    assert c.dbsize() == len(keys)
    d = Differences()
    commands = [argv for k in keys
                for argv in (["TYPE", k["key"]], [kind_of(k) + ".DEBUG", k["key"]])]
    got = send(c, commands)
    for n, k in enumerate(keys):
        d.check(k["key"], "TYPE", k["redis_type"], got[2 * n])
        d.check(k["key"], kind_of(k) + ".DEBUG", k["debug"], got[2 * n + 1])
    d.assert_none()


# === CF.COMPACT on RedisBloom keys, against the model ============================================

def added_items(k):
    """The items a cuckoo key's recorded commands gave to its add commands, each once, in order."""
    out = []
    for command in k["commands"]:
        argv = command["argv"]
        name = argv[0].upper()
        if name in ("CF.ADD", "CF.ADDNX"):
            out.append(argv[2])
        elif name in ("CF.INSERT", "CF.INSERTNX"):
            out += argv[[a.upper() for a in argv].index("ITEMS") + 1:]
    return list(dict.fromkeys(out))


def holder(cf, item):
    """The newest sub-filter of the model's cuckoo filter `cf` holding `item`'s fingerprint in one
    of its buckets, or None."""
    fp, i1, i2 = model.cf_hash(item)
    bs = cf.bucket_size
    for s in range(len(cf.filters) - 1, -1, -1):
        array = cf.filters[s]
        mask = len(array) // bs - 1
        if any(array.find(fp, b * bs, b * bs + bs) >= 0 for b in {i1 & mask, i2 & mask}):
            return s
    return None


def deletions(cf, candidates, newest):
    """Stored items to delete before a CF.COMPACT, chosen on the model's filter `cf`: items whose
    fingerprint lies in its newest sub-filter (newest) or in an older one, at most 300 and 1/12 of
    the items, and with several sub-filters few enough that CF.DEL's own compaction (deletes above
    10% of the items) does not start."""
    last = len(cf.filters) - 1
    if last == 0 and not newest:
        return []
    n = min(300, cf.num_items // 12)
    if last > 0:
        n = min(n, int((cf.num_items * 0.10 - cf.num_deletes) / 1.1) - 1)
    chosen = (x for x in candidates
              if holder(cf, x) in ((last,) if newest else range(last)))
    return list(itertools.islice(chosen, max(n, 0)))


def test_cf_compact_on_redisbloom_keys_compacts_as_redisbloom(make_server):
    c = make_server().client()
    assert send(c, [["RESTORE", k["key"], 0, golden_dump(k["key"])] for k in CF_KEYS]) == \
        ["OK"] * len(CF_KEYS)
    d = Differences()
    moved = dropped = deleted_in_all = 0
    for k in CF_KEYS:
        key = k["key"]
        mkey = model.replay(k)
        cf = mkey.value
        candidates = added_items(k)
        deleted = []
        for n, newest in enumerate((False, True), 1):
            stage = " (round %d)" % n
            dels = deletions(cf, candidates, newest)
            run_both(c, d, mkey, [["CF.DEL", key, x] for x in dels], stage)
            deleted += dels
            before, filters = cf.arrays(), len(cf.filters)
            run_both(c, d, mkey, [["CF.COMPACT", key]], stage)
            # What the compaction did (the model's): fingerprints moved, sub-filters dropped.
            moved += any(a != b for a, b in zip(before, cf.arrays()))
            dropped += len(cf.filters) < filters
            compare_model(c, d, key, mkey, utf8(k["probes"]["items"] + deleted),
                          " after CF.COMPACT" + stage)
        deleted_in_all += len(deleted)
    # The deletions make CF.COMPACT move fingerprints and drop sub-filters on several keys.
    assert moved >= 12 and dropped >= 5 and deleted_in_all > 2000, (moved, dropped, deleted_in_all)
    d.assert_none()


# === bloomery's own keys (the default layout) ===================================================

def bf_debug(c, key):
    reply = c.execute_command("BF.DEBUG", key)
    assert isinstance(reply, list) and all(isinstance(x, bytes) for x in reply), reply
    return [x.decode() for x in reply]


def check_bloomery_bf_debug(c, key, capacity, rate, expansion=2, nonscaling=False):
    """BF.DEBUG of a bloomr-BF key: `size:<BF.CARD>`, then one line per sub-filter whose capacity
    and size add up to BF.INFO's Capacity and BF.CARD; sub-filter i has capacity c·s^i and the
    rate e/2^(i+1) (e for NONSCALING), its bit array `bytes`, every older sub-filter is full."""
    assert c.type(key) == b"bloomr-BF"
    i = info(c, key)
    card = c.execute_command("BF.CARD", key)
    lines = bf_debug(c, key)
    assert lines[0] == "size:%d" % card, lines
    assert len(lines) == 1 + i["Number of filters"], (lines, i)
    links = []
    for line in lines[1:]:
        m = BF_LINK.fullmatch(line)
        assert m, line
        links.append(dict(zip(["bytes", "bits", "hashes", "capacity", "size"],
                              map(int, m.groups()[:5])), ratio=m.group(6)))
    assert sum(x["capacity"] for x in links) == i["Capacity"], (lines, i)
    assert sum(x["size"] for x in links) == card == i["Number of items inserted"], (lines, i)
    assert [x["capacity"] for x in links] == [capacity * expansion ** n
                                              for n in range(len(links))], lines
    rates = [rate] if nonscaling else [rate / 2 ** (n + 1) for n in range(len(links))]
    assert [x["ratio"] for x in links] == ["%g" % r for r in rates], lines
    assert all(x["size"] == x["capacity"] for x in links[:-1]), lines
    assert links[-1]["size"] <= links[-1]["capacity"], lines
    for x in links:
        # Whole bytes at least; at most whole 64-byte lines.
        assert math.ceil(x["bits"] / 8) <= x["bytes"] <= math.ceil(x["bits"] / 512) * 64, x
        assert x["hashes"] >= 1, x
    return lines


def test_bf_debug_of_bloomery_keys(r):
    r.execute_command("BF.RESERVE", "scaling", 0.01, 100)
    r.execute_command("BF.MADD", "scaling", *items("s", 1000))
    lines = check_bloomery_bf_debug(r, "scaling", 100, 0.01)
    assert len(lines) - 1 >= 4

    r.execute_command("BF.RESERVE", "x3", 0.001, 50, "EXPANSION", 3)
    r.execute_command("BF.MADD", "x3", *items("t", 700))
    assert len(check_bloomery_bf_debug(r, "x3", 50, 0.001, expansion=3)) - 1 >= 3

    r.execute_command("BF.ADD", "added", "x")  # the defaults: 0.01, 100, EXPANSION 2
    assert len(check_bloomery_bf_debug(r, "added", 100, 0.01)) == 2

    r.execute_command("BF.RESERVE", "nonscaling", 0.001, 500, "NONSCALING")
    r.execute_command("BF.MADD", "nonscaling", *items("n", 300))
    lines = check_bloomery_bf_debug(r, "nonscaling", 500, 0.001, nonscaling=True)
    card = r.execute_command("BF.CARD", "nonscaling")
    assert len(lines) == 2 and card >= 290, lines
    assert lines[1].endswith("capacity:500 size:%d ratio:0.001" % card), lines

    r.execute_command("BF.RESERVE", "empty", 0.01, 1000)
    lines = check_bloomery_bf_debug(r, "empty", 1000, 0.01)
    assert lines[0] == "size:0" and lines[1].endswith("capacity:1000 size:0 ratio:0.005"), lines


def cuckoo_with_deletes(c, key):
    """A bloomr-CF key of several sub-filters with deletes; returns the items it was given."""
    c.execute_command("CF.RESERVE", key, 100, "EXPANSION", 2)
    given = items(key + ":", 1200)
    c.execute_command("CF.INSERT", key, "ITEMS", *given)
    for item in given[::20]:
        assert c.execute_command("CF.DEL", key, item) == 1
    i = info(c, key)
    assert c.type(key) == b"bloomr-CF"
    assert i["Number of filters"] >= 3 and i["Number of items deleted"] == 60, i
    return given


def test_cf_debug_of_bloomery_keys(r):
    cuckoo_with_deletes(r, "cf")
    r.execute_command("CF.RESERVE", "plain", 1000, "BUCKETSIZE", 4, "MAXITERATIONS", 50)
    r.execute_command("CF.ADD", "added", "x")
    for key in ("cf", "plain", "added"):
        reply = r.execute_command("CF.DEBUG", key)
        assert isinstance(reply, bytes), reply
        assert reply.decode() == CF_DEBUG.format_map(info(r, key)), key


def test_cf_compact_of_a_bloomery_key_changes_nothing(r):
    given = cuckoo_with_deletes(r, "cf")
    probe = given + items("absent", 2000)

    def state():
        return (r.execute_command("CF.INFO", "cf"), r.execute_command("CF.DEBUG", "cf"),
                r.execute_command("CF.MEXISTS", "cf", *probe),
                [r.execute_command("CF.COUNT", "cf", x) for x in given[:200]],
                r.execute_command("DUMP", "cf"))

    before = state()
    assert sum(before[2]) >= len(given) - 60
    assert r.execute_command("CF.COMPACT", "cf") == b"OK"
    assert state() == before
    assert r.execute_command("CF.COMPACT", "cf") == b"OK"
    assert state() == before
    r.execute_command("CF.RESERVE", "empty", 100)
    assert r.execute_command("CF.COMPACT", "empty") == b"OK"
    assert info(r, "empty")["Number of items inserted"] == 0


def test_debug_and_compact_errors(r):
    r.set("s", "v")
    r.rpush("l", "v")
    r.execute_command("BF.ADD", "bf", "a")
    r.execute_command("CF.ADD", "cf", "a")
    rb_bf, rb_cf = "a12-bf-edge-items", "a21-cf-c1000-b2"
    for key in (rb_bf, rb_cf):
        assert r.execute_command("RESTORE", key, 0, golden_dump(key)) == b"OK"
    assert error_of(r, "BF.DEBUG", "missing") == NOT_FOUND
    assert error_of(r, "CF.DEBUG", "missing") == NOT_FOUND
    assert error_of(r, "CF.COMPACT", "missing") == NO_CUCKOO
    assert not r.exists("missing")
    for key in ("s", "l", "cf", rb_cf):
        assert error_of(r, "BF.DEBUG", key) == WRONGTYPE, key
    for key in ("s", "l", "bf", rb_bf):
        assert error_of(r, "CF.DEBUG", key) == WRONGTYPE, key
        assert error_of(r, "CF.COMPACT", key) == NO_CUCKOO, key
    assert r.get("s") == b"v" and r.lrange("l", 0, -1) == [b"v"]
    assert r.execute_command("BF.EXISTS", "bf", "a") == 1
    for command in ("BF.DEBUG", "CF.DEBUG", "CF.COMPACT"):
        key = "cf" if command.startswith("CF") else "bf"
        assert error_of(r, command) == arity(command.lower()), command
        assert error_of(r, command, key, "x") == arity(command.lower()), command
    # The RedisBloom keys answer as recorded meanwhile.
    assert plain(r.execute_command("BF.DEBUG", rb_bf)) == \
        next(k for k in KEYS if k["key"] == rb_bf)["debug"]
    assert r.execute_command("CF.COMPACT", rb_cf) == b"OK"


# === the load argument ===========================================================================

@pytest.mark.parametrize("args, logged", [
    (["LAYOUT", "foo"], BAD_LAYOUT),
    (["LAYOUT", "redisbloom2"], BAD_LAYOUT),
    (["LAYOUT", ""], BAD_LAYOUT),
    (["LAYOUT"], BAD_LAYOUT),
    (["ERROR_RATE", "0.01", "LAYOUT"], BAD_LAYOUT),
    (["LAYOUT", "bloomery", "LAYOUT", "redisbloom"], TWICE),
    (["LAYOUT", "redisbloom", "layout", "redisbloom"], TWICE),
])
def test_a_bad_layout_fails_the_load(tmp_path, args, logged):
    out = failed_load_output(tmp_path, *args)
    assert logged in out, out[-3000:]


@pytest.mark.parametrize("args, types", [
    (["LAYOUT", "bloomery"], ("bloomr-BF", "bloomr-CF")),
    (["layout", "BloomEry"], ("bloomr-BF", "bloomr-CF")),
    (["LAYOUT", "redisbloom"], (BF_TYPE, CF_TYPE)),
    (["layout", "REDISBLOOM"], (BF_TYPE, CF_TYPE)),
    (["INITIAL_SIZE", "400", "Layout", "RedisBloom"], (BF_TYPE, CF_TYPE)),
])
def test_layout_sets_the_type_of_new_keys(make_server, args, types):
    c = make_server(module_args=args).client()
    c.execute_command("BF.ADD", "bf", "x")
    c.execute_command("BF.RESERVE", "reserved", 0.01, 100)
    c.execute_command("CF.ADD", "cf", "x")
    c.execute_command("CF.RESERVE", "cf-reserved", 100)
    assert [c.type(k).decode() for k in ("bf", "reserved", "cf", "cf-reserved")] == \
        [types[0], types[0], types[1], types[1]]
    if "INITIAL_SIZE" in args:
        assert info(c, "bf")["Capacity"] == 400  # RedisBloom's default capacity, changed
    # A key keeps the layout it was created in; the other layout's keys load as ever.
    assert c.execute_command("RESTORE", "rb", 0, golden_dump("a12-bf-edge-items")) == b"OK"
    assert c.type("rb") == BF_TYPE.encode()


# === RedisBloom's quirks under LAYOUT redisbloom, and the default layout's replies ==============

def reads_of_another_type(c):
    """Reads on a string, a list and a filter of the other kind: (command, reply) pairs."""
    c.set("s", "v")
    c.rpush("l", "v")
    c.execute_command("BF.ADD", "bf", "a")
    c.execute_command("CF.ADD", "cf", "a")
    out = []
    for key in ("s", "l", "cf"):
        for argv in (["BF.EXISTS", key, "a"], ["BF.MEXISTS", key, "a", "b"]):
            out.append((argv, plain(reply_of(c, argv))))
    for key in ("s", "l", "bf"):
        for argv in (["CF.EXISTS", key, "a"], ["CF.MEXISTS", key, "a", "b"],
                     ["CF.COUNT", key, "a"], ["CF.DEL", key, "a"]):
            out.append((argv, plain(reply_of(c, argv))))
    return out


def reply_of(c, argv):
    try:
        return c.execute_command(*argv)
    except redis.ResponseError as e:
        return e


# Commands that reply WRONGTYPE on a key of another type in both layouts (as RedisBloom does).
STILL_WRONGTYPE = [["BF.ADD", "s", "a"], ["BF.MADD", "s", "a"], ["BF.INSERT", "s", "ITEMS", "a"],
                   ["BF.INFO", "s"], ["BF.CARD", "s"], ["BF.DEBUG", "s"], ["BF.SCANDUMP", "s", 0],
                   ["BF.RESERVE", "s", 0.1, 10], ["CF.ADD", "s", "a"], ["CF.ADDNX", "s", "a"],
                   ["CF.INSERT", "s", "ITEMS", "a"], ["CF.INFO", "s"], ["CF.DEBUG", "s"],
                   ["CF.SCANDUMP", "s", 0], ["CF.RESERVE", "s", 100], ["BF.INFO", "cf"],
                   ["CF.INFO", "bf"]]


def test_redisbloom_layout_reads_of_another_type_answer_as_a_missing_key(make_server):
    c = make_server(module_args=REDISBLOOM).client()
    for argv, reply in reads_of_another_type(c):
        if argv[0] == "CF.DEL":
            assert reply == {"error": "Not found"}, argv
        else:
            assert reply == ([0, 0] if "MEXISTS" in argv[0] else 0), (argv, reply)
    assert (c.type("bf"), c.type("cf")) == (BF_TYPE.encode(), CF_TYPE.encode())
    for argv in STILL_WRONGTYPE:
        assert plain(reply_of(c, argv)) == {"error": WRONGTYPE}, argv
    assert plain(reply_of(c, ["CF.COMPACT", "s"])) == {"error": NO_CUCKOO}
    assert c.get("s") == b"v" and c.lrange("l", 0, -1) == [b"v"]
    assert c.execute_command("BF.MEXISTS", "bf", "a", "b") == [1, 0]
    assert c.execute_command("CF.COUNT", "cf", "a") == 1


def test_default_layout_reads_of_another_type_are_wrongtype(r):
    for argv, reply in reads_of_another_type(r):
        assert reply == {"error": WRONGTYPE}, argv
    for argv in STILL_WRONGTYPE:
        assert plain(reply_of(r, argv)) == {"error": WRONGTYPE}, argv
    assert r.get("s") == b"v" and r.lrange("l", 0, -1) == [b"v"]


def expansion_scripts():
    """{key: commands} that RedisBloom takes and bloomery's own layout refuses: BF.RESERVE with
    EXPANSION 0 (filled past its capacity: adds reply 1 and store nothing), -1 (growth 2^32 - 1),
    100 (grown once); BF.INSERT with EXPANSION 17 and 100 (grown); CF.RESERVE with EXPANSION 0
    (filled: -1 and `Filter is full`)."""
    return {
        "bf-x0": [["BF.RESERVE", "bf-x0", "0.01", "10", "EXPANSION", "0"],
                  ["BF.MADD", "bf-x0", *items("x0:", 25)], ["BF.ADD", "bf-x0", "late"],
                  ["BF.INSERT", "bf-x0", "ITEMS", "later", "x0:3"]],
        "bf-x-1": [["BF.RESERVE", "bf-x-1", "0.01", "10", "EXPANSION", "-1"],
                   ["BF.MADD", "bf-x-1", *items("xm:", 8)]],
        "bf-x100": [["BF.RESERVE", "bf-x100", "0.001", "10", "EXPANSION", "100"],
                    ["BF.MADD", "bf-x100", *items("xc:", 40)]],
        "bf-insert-x17": [["BF.INSERT", "bf-insert-x17", "CAPACITY", "10", "EXPANSION", "17",
                           "ITEMS", *items("i17:", 30)]],
        "bf-insert-x100": [["BF.INSERT", "bf-insert-x100", "EXPANSION", "100", "ITEMS",
                            *items("i100:", 150)]],
        "cf-x0": [["CF.RESERVE", "cf-x0", "8", "BUCKETSIZE", "2", "EXPANSION", "0"],
                  ["CF.INSERT", "cf-x0", "ITEMS", *items("c0:", 16)],
                  *[["CF.ADD", "cf-x0", x] for x in items("c0+", 6)],
                  ["CF.ADDNX", "cf-x0", "c0:1"], ["CF.DEL", "cf-x0", "c0:1"],
                  ["CF.ADD", "cf-x0", "c0:1"]],
    }


def test_redisbloom_layout_takes_redisbloom_expansions(make_server):
    c = make_server(module_args=REDISBLOOM).client()
    d = Differences()
    for key, commands in expansion_scripts().items():
        mkey = model.ModelKey()
        run_both(c, d, mkey, commands)
        written = [x for argv in commands for x in argv[2:]]
        compare_model(c, d, key, mkey, utf8(written + items(key + ":absent:", 200)))
    d.assert_none()
    assert info(c, "bf-x0")["Expansion rate"] == 0
    assert info(c, "bf-x-1")["Expansion rate"] == (1 << 32) - 1
    assert info(c, "bf-x100")["Number of filters"] == 2
    assert info(c, "cf-x0")["Expansion rate"] == 0
    # What RedisBloom refuses there too.
    assert error_of(c, "BF.INSERT", "k", "EXPANSION", 0, "ITEMS", "a") == "Bad argument received"
    assert error_of(c, "BF.RESERVE", "k", 0.01, 100, "EXPANSION", "x") == "ERR bad expansion"
    for expansion in (-1, 32769):
        assert error_of(c, "CF.RESERVE", "k", 1000, "EXPANSION", expansion) == CF_EXPANSION_0
    assert not c.exists("k")


def test_default_layout_refuses_those_expansions(r):
    for expansion in (0, 100, -1):
        assert error_of(r, "BF.RESERVE", "k", 0.01, 100, "EXPANSION", expansion) == \
            "ERR bad expansion"
    for expansion in (0, 17, 100):
        assert error_of(r, "BF.INSERT", "k", "EXPANSION", expansion, "ITEMS", "a") == \
            "Bad argument received"
    for expansion in (0, -1, 32769):
        assert error_of(r, "CF.RESERVE", "k", 1000, "EXPANSION", expansion) == CF_EXPANSION_1
    assert not r.exists("k")
    assert r.execute_command("BF.RESERVE", "k", 0.01, 100, "EXPANSION", 16) == b"OK"
    assert r.type("k") == b"bloomr-BF"
