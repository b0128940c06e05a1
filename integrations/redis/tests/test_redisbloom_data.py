"""RedisBloom 2.4's own data loads into the module and then answers exactly as RedisBloom did.

The golden data (tests/data/redisbloom-golden, written by the real RedisBloom 2.4.23 on Redis
7.0.15: 13 Bloom and 15 cuckoo keys, 2,000 probes each) arrives by its dump.rdb, by RESTORE of
its DUMP payloads and by LOADCHUNK of its SCANDUMP chunks, then again through the module's own RDB
save and AOF rewrite; each time every key must reply TYPE, BF.INFO / CF.INFO (every field), BF.CARD,
EXISTS and MEXISTS of every probe and CF.COUNT of every probe as recorded in answers.json, DUMP
the golden payload byte for byte, and SCANDUMP the golden chunk sequence. Values of encodings 0-3
(older RedisBloom), built from the golden fields, load and answer as RedisBloom 2.4 answers them
(or are refused where 2.4 refuses them), and DUMP in encoding 4. Cut, absurd and out-of-place
input is refused with an error and never takes the server down. An RDB holding RedisBloom's other
types (Top-K, Count-Min sketch, t-digest) fails to load with a log line naming the type.

The tests without a server (first) check this file's helpers (redisbloom_payloads.py) against
the golden data: the CRC-64, parsing and rebuilding every payload byte for byte, dump.rdb, the
SCANDUMP headers, and the Bloom bit-position model used for the old encodings' answers."""

import math
import os
import random
import resource
import shutil
import subprocess
import struct

import pytest
import redis

from conftest import MODULE, SERVER, free_port
from redis_helpers import aof_files, wait_for_rewrite
from redisbloom_payloads import (
    BF_TYPE, CF_TYPE, CF_OLD_DEFAULTS, D, ENCODING, FORCE64, NO_SCALING, OP_DOUBLE, OP_STRING,
    OP_UINT, RDB_VERSION, S, U, answers_of, bf_chain, bf_encoding0_compatible, bf_exists,
    bf_fields, bf_hash_pair, bf_hashes_for, bf_header, bf_header_bytes, build_dump, build_rdb,
    cf_fields, cf_filter, cf_header, cf_header_bytes, cf_old_encoding_fits, copy_chain, crc64,
    field_spans, footer_completes, golden_chunks, golden_dump, golden_keys, golden_rdb_path,
    module_type_id, murmur2, murmur64a, old_encoding_fields, old_encoding_payload,
    parse_dump, parse_rdb, plain, probe_replies, split_module_type_id, truncated_payloads, utf8)

KEYS = golden_keys()
BF_KEYS = [k for k in KEYS if k["type"] == "bf"]
CF_KEYS = [k for k in KEYS if k["type"] == "cf"]
BAD_DATA = "ERR Bad data format"  # Redis's reply to RESTORE when the module's loader refuses


def golden_fields(key):
    return parse_dump(golden_dump(key))[2]


def kind_of(k):
    return "BF" if k["type"] == "bf" else "CF"


def replaced(info, **changes):
    """An INFO reply (flat name, value list) with the named fields' values changed (names with
    spaces as underscores)."""
    changes = {name.replace("_", " "): v for name, v in changes.items()}
    out = list(info)
    for i in range(0, len(out), 2):
        if out[i] in changes:
            out[i + 1] = changes.pop(out[i])
    assert not changes, changes
    return out


class Mismatches:
    """Every comparison of a reply with its recorded value; the failures grouped by key and
    command, each group with its count and first examples."""

    def __init__(self):
        self.compared = 0
        self.groups = {}

    def check(self, key, command, expected, got, what=""):
        self.compared += 1
        if expected != got:
            group = self.groups.setdefault((key, command), [0, []])
            group[0] += 1
            if len(group[1]) < 3:
                group[1].append("%sexpected %.200r, got %.200r" %
                                (what + ": " if what else "", expected, got))

    def report(self):
        lines = ["%d of %d replies differ:" % (sum(g[0] for g in self.groups.values()),
                                               self.compared)]
        for (key, command), (n, examples) in list(self.groups.items())[:40]:
            lines.append("  %s %s: %d wrong, e.g. %s" % (key, command, n, "; ".join(examples)))
        return "\n".join(lines)

    def assert_none(self):
        assert not self.groups, self.report()


def probe_answers(c, key, kind, items, m, expected_exists, expected_count=None, each=True):
    """EXISTS of every item (each=True), MEXISTS of all in batches, CF.COUNT of every item when
    expected_count is given; compared with the expected lists."""
    exists, mexists, counts = probe_replies(c, key, kind, items, expected_count is not None, each)
    for i, got in enumerate(exists or []):
        m.check(key, kind + ".EXISTS", expected_exists[i], got, repr(items[i]))
    for i, got in enumerate(mexists):
        m.check(key, kind + ".MEXISTS", expected_exists[i], got, repr(items[i]))
    for i, got in enumerate(counts or []):
        m.check(key, "CF.COUNT", expected_count[i], got, repr(items[i]))


def compare_key(c, k, m, dump=True, scandump=True):
    """Everything answers.json recorded for key record `k` (but DEBUG), against server `c`."""
    key, kind = k["key"], kind_of(k)
    p = c.pipeline(transaction=False)
    p.execute_command("TYPE", key)
    p.execute_command(kind + ".INFO", key)
    if kind == "BF":
        p.execute_command("BF.CARD", key)
    type_, info, *card = p.execute(raise_on_error=False)
    m.check(key, "TYPE", k["redis_type"], plain(type_))
    m.check(key, kind + ".INFO", k["info"], plain(info))
    if card:
        m.check(key, "BF.CARD", k["card"], plain(card[0]))
    probes = k["probes"]
    probe_answers(c, key, kind, utf8(probes["items"]), m, probes["exists"], probes.get("count"))
    if scandump:
        compare_scandump(c, k, m)
    if dump:
        m.check(key, "DUMP", golden_dump(key), c.execute_command("DUMP", key))


def compare_scandump(c, k, m):
    """SCANDUMP at the golden iterators (0, then each chunk's) replies the golden chunks, then
    the recorded end."""
    key, kind = k["key"], kind_of(k)
    chunks = golden_chunks(key)
    expected = [[it, data] for it, data in chunks]
    end = k["scandump_end"]
    expected.append([end[0], None if end[1] is None else end[1].encode()])
    p = c.pipeline(transaction=False)
    for it in [0] + [it for it, _ in chunks]:
        p.execute_command(kind + ".SCANDUMP", key, it)
    for n, (want, got) in enumerate(zip(expected, p.execute(raise_on_error=False))):
        if isinstance(got, redis.ResponseError):
            got = plain(got)
        m.check(key, kind + ".SCANDUMP", want, got, "reply %d" % n)


def compare_all(c, keys=KEYS, **what):
    """compare_key for every key record in `keys`; fails with every difference grouped; returns
    the number of replies compared."""
    m = Mismatches()
    for k in keys:
        compare_key(c, k, m, **what)
    m.assert_none()
    return m.compared


def restore_all(c):
    """RESTORE of every golden payload under its key."""
    p = c.pipeline(transaction=False)
    for k in KEYS:
        p.execute_command("RESTORE", k["key"], 0, golden_dump(k["key"]))
    replies = [plain(x) for x in p.execute(raise_on_error=False)]
    assert replies == ["OK"] * len(KEYS), dict(zip([k["key"] for k in KEYS], replies))


def error_of(c, *args):
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command(*args)
    return str(e.value)


# === without a server: the helpers against the golden data ======================================

def test_crc64_matches_every_golden_footer():
    assert crc64(b"123456789") == 0xE9C6D914C4B8D9CA  # Redis's crc64 test vector
    assert len(KEYS) == 28 and len(BF_KEYS) == 13 and len(CF_KEYS) == 15
    for k in KEYS:
        payload = golden_dump(k["key"])
        assert len(payload) == k["dump"]["bytes"]
        version, crc = struct.unpack("<HQ", payload[-10:])
        assert version == RDB_VERSION
        assert crc == crc64(payload[:-8]), k["key"]
    with open(golden_rdb_path(), "rb") as f:
        rdb = f.read()
    assert struct.unpack("<Q", rdb[-8:])[0] == crc64(rdb[:-8])


def test_module_type_ids():
    assert module_type_id(BF_TYPE, 4) == 0x3016E5A289BEF804
    assert module_type_id(CF_TYPE, 4) == 0x3016E5A289821404
    for name in (BF_TYPE, CF_TYPE, "TopK-TYPE", "CMSk-TYPE", "TDIS-TYPE"):
        for v in (0, 3, 4, 5, 1023):
            assert split_module_type_id(module_type_id(name, v)) == (name, v)


def test_every_golden_payload_parses_and_rebuilds_byte_for_byte():
    for k in KEYS:
        key = k["key"]
        payload = golden_dump(key)
        name, encver, fields = parse_dump(payload)
        assert (name, encver) == (k["redis_type"], ENCODING), key
        assert build_dump(name, encver, fields) == payload, key
        # The structured views give back the same fields.
        if name == BF_TYPE:
            assert bf_fields(bf_chain(fields)) == fields, key
        else:
            assert cf_fields(cf_filter(fields)) == fields, key
        # Written with plain (uncompressed) strings, it reads back the same.
        unpacked = [(op, bytes(v)) if op == OP_STRING else (op, v) for op, v in fields]
        again = build_dump(name, encver, unpacked)
        assert parse_dump(again)[2] == fields and len(again) >= len(payload), key


def test_golden_rdb_holds_every_key_with_its_payloads_fields():
    with open(golden_rdb_path(), "rb") as f:
        values = parse_rdb(f.read())
    assert sorted(values) == sorted(k["key"] for k in KEYS)
    for key, value in values.items():
        assert value == parse_dump(golden_dump(key)), key


def test_scandump_chunks_hold_the_payloads_fields_and_arrays():
    for k in KEYS:
        key = k["key"]
        chunks = golden_chunks(key)
        if k["type"] == "bf":
            chain = bf_chain(golden_fields(key))
            h = bf_header(chunks[0][1])
            assert {n: h[n] for n in ("size", "nfilters", "options", "growth")} == \
                {n: chain[n] for n in ("size", "nfilters", "options", "growth")}
            for hl, link in zip(h["links"], chain["links"]):
                assert hl == dict({n: link[n] for n in hl if n != "bytes"},
                                  bytes=len(link["array"])), key
            arrays = [link["array"] for link in chain["links"]]
            assert bf_header_bytes(h) == chunks[0][1]
        else:
            f = cf_filter(golden_fields(key))
            arrays = [slots for _, slots in f["filters"]]
            if f["numItems"] == 0:  # RedisBloom replies [0, nil]: no chunks at all
                assert chunks == () and k["scandump_end"] == [0, None]
                continue
            h = cf_header(chunks[0][1])
            assert h == {n: f[n] for n in h}, key
            assert cf_header_bytes(h) == chunks[0][1]
        # Every chunk lies in one array; together they are the arrays; iter = 1 + bytes so far.
        assert chunks[0][0] == 1
        assert b"".join(data for _, data in chunks[1:]) == b"".join(arrays), key
        assert [it for it, _ in chunks[1:]] == \
            [1 + sum(len(d) for _, d in chunks[1:n + 1]) for n in range(1, len(chunks))]
        assert len(chunks) - 1 == len(arrays)  # all arrays here are under 16 MiB


def test_the_bloom_model_reproduces_every_golden_probe():
    # MurmurHash2 and MurmurHash64A against SMHasher's verification values, then §3.4's vectors.
    for hash_, width, value in ((murmur2, 4, 0x27864C1E), (murmur64a, 8, 0x1F0D3804)):
        hashes = b"".join(hash_(bytes(range(i)), 256 - i).to_bytes(width, "little")
                          for i in range(256))
        assert hash_(hashes, 0).to_bytes(width, "little")[:4] == value.to_bytes(4, "little")
    assert bf_hash_pair(b"hello", FORCE64) == (0x5BA5B8A59803E699, 0xA7D451D588A0C2A4)
    assert bf_hash_pair(b"", FORCE64) == (0x1AB11EA5A7B2C56E, 0xBBDDCB5AB56DD547)
    assert bf_hash_pair(b"a", FORCE64) == (0x4292CEE227B9150A, 0x7E9B527031F50C11)
    assert bf_hash_pair(b"\x00", FORCE64) == (0, 0x5825F5F3BD962979)
    assert murmur64a(b"hello", 0) == 0x1E68D17C457BF117
    for k in BF_KEYS:
        chain = bf_chain(golden_fields(k["key"]))
        assert [bf_exists(chain, item) for item in utf8(k["probes"]["items"])] == \
            k["probes"]["exists"], k["key"]


def test_older_encodings_field_lists():
    for k in KEYS:
        name, _, fields = parse_dump(golden_dump(k["key"]))
        for v in range(4):
            old = old_encoding_fields(name, fields, v)
            payload = build_dump(name, v, old)
            assert parse_dump(payload) == (name, v, old)
            assert struct.unpack(">Q", payload[2:10])[0] & 1023 == v
            if name == BF_TYPE:
                chain = bf_chain(fields)
                per_link = 8 if v >= 1 else 6
                assert len(old) == 2 + (v >= 2) + (v >= 4) + per_link * chain["nfilters"]
                back = bf_chain(old, v)
                assert back["options"] == (chain["options"] if v >= 2 else 0)
                assert back["growth"] == 2
                assert [l["array"] for l in back["links"]] == [l["array"] for l in chain["links"]]
            else:
                f = cf_filter(fields)
                assert len(old) == 3 + f["numFilters"]
                back = cf_filter(old, v)
                assert {n: back[n] for n in CF_OLD_DEFAULTS} == CF_OLD_DEFAULTS
                # Its slots fit the buckets it implies exactly when cf_old_encoding_fits says.
                fits = all(len(slots) == b * back["bucketSize"] for b, slots in back["filters"])
                assert fits == cf_old_encoding_fits(f), k["key"]
                if fits:
                    assert back == dict(f, **CF_OLD_DEFAULTS)
        if name == BF_TYPE:
            # What RedisBloom's encoding 0 would derive from these links: its bit count.
            adjusted = bf_encoding0_compatible(bf_chain(fields))
            for link in bf_chain(bf_fields(adjusted, 0), 0)["links"]:
                assert link["bits"] == 8 * len(link["array"])
                assert link["hashes"] == bf_hashes_for(link["bpe"])


def test_minimal_rdb_builder():
    fields = [U(7), D(0.5), S(b"abc"), U(1 << 40)]
    data = build_rdb([("k1", "TopK-TYPE", 0, fields),
                      ("k2", BF_TYPE, 4, golden_fields("a12-bf-edge-items"))])
    assert data.startswith(b"REDIS0010") and data[-9] == 0xFF
    values = parse_rdb(data)
    assert values == {"k1": ("TopK-TYPE", 0, fields),
                      "k2": (BF_TYPE, 4, golden_fields("a12-bf-edge-items"))}


# === with a server ==============================================================================

def test_golden_rdb_loads_and_answers_as_redisbloom(make_server, tmp_path):
    shutil.copy(golden_rdb_path(), tmp_path / "dump.rdb")
    server = make_server(directory=str(tmp_path))
    c = server.client()
    assert c.dbsize() == len(KEYS)
    compare_all(c)


def test_restore_of_every_golden_payload_answers_and_dumps_identically(r):
    restore_all(r)
    assert r.dbsize() == len(KEYS)
    compare_all(r)  # DUMP included: byte for byte the golden payload


def test_loadchunk_of_every_golden_sequence_answers_and_scandumps_identically(r):
    replayed = []
    for k in KEYS:
        chunks = golden_chunks(k["key"])
        if not chunks:
            # An empty cuckoo filter: RedisBloom's CF.SCANDUMP replies [0, nil] at once, so it
            # has no chunk sequence and cannot travel by SCANDUMP/LOADCHUNK.
            assert k["info"][k["info"].index("Number of items inserted") + 1] == 0
            continue
        p = r.pipeline(transaction=False)
        for it, data in chunks:
            p.execute_command(kind_of(k) + ".LOADCHUNK", k["key"], it, data)
        assert [plain(x) for x in p.execute(raise_on_error=False)] == ["OK"] * len(chunks), \
            k["key"]
        replayed.append(k)
    assert len(replayed) == len(KEYS) - 1
    compare_all(r, replayed)  # SCANDUMP included: the golden iterators, chunks and end


def test_rdb_save_and_aof_rewrite_round_trips(make_server):
    server = make_server()
    c = server.client()
    restore_all(c)
    assert c.save()
    server.restart()
    compare_all(server.client())

    # The AOF rewrite writes each key as its LOADCHUNK sequence (no RDB preamble here).
    c = server.client()
    c.config_set("aof-use-rdb-preamble", "no")
    c.config_set("appendonly", "yes")  # starts a rewrite of its own
    wait_for_rewrite(c)
    c.bgrewriteaof()
    wait_for_rewrite(c)
    (base,) = aof_files(server, ".base.aof")
    with open(base, "rb") as f:
        text = f.read()
    assert b"BF.LOADCHUNK" in text and b"CF.LOADCHUNK" in text and b"RESTORE" not in text
    os.remove(os.path.join(server.dir, "dump.rdb"))  # the restart must read the AOF
    server.extra += ["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]
    server.restart()
    c = server.client()
    assert c.dbsize() == len(KEYS)
    compare_all(c)


# --- encodings 0-3 ------------------------------------------------------------------------------

def expected_dump_fields(c, key, fields):
    """DUMP of `key` is a value of encoding version 4 (the module id's low 10 bits) holding
    `fields`."""
    payload = c.execute_command("DUMP", key)
    assert payload[1] == 0x81 and struct.unpack(">Q", payload[2:10])[0] & 1023 == ENCODING, key
    assert parse_dump(payload)[1:] == (ENCODING, fields), key


def test_bloom_values_of_encodings_2_and_3(r):
    """Encodings 2 and 3 keep options (64-bit hashing, NONSCALING) but not growth: the answers
    are the golden ones, and INFO's Expansion rate is RedisBloom's default 2 (nil still for a
    NONSCALING chain)."""
    m = Mismatches()
    for k in BF_KEYS:
        fields = golden_fields(k["key"])
        chain = bf_chain(fields)
        rate = None if chain["options"] & NO_SCALING else 2
        for v in (2, 3):
            key = "%s-v%d" % (k["key"], v)
            assert r.execute_command("RESTORE", key, 0,
                                     old_encoding_payload(BF_TYPE, fields, v)) == b"OK"
            m.check(key, "TYPE", BF_TYPE, plain(r.type(key)))
            m.check(key, "BF.INFO", replaced(k["info"], Expansion_rate=rate),
                    plain(r.execute_command("BF.INFO", key)))
            m.check(key, "BF.CARD", k["card"], r.execute_command("BF.CARD", key))
            probe_answers(r, key, "BF", utf8(k["probes"]["items"]), m, k["probes"]["exists"],
                          each=False)
            expected_dump_fields(r, key, bf_fields(copy_chain(chain, growth=2)))
    m.assert_none()


def check_32bit_chain(r, m, k, key, chain):
    """A chain restored from encoding 0 or 1, which has no options: RedisBloom hashes its items
    with 32-bit MurmurHash2 (no FORCE64), so the 64-bit golden bits answer what the model
    computes, not the golden answers; it is a scaling chain (no NO_SCALING) of growth 2."""
    m.check(key, "TYPE", BF_TYPE, plain(r.type(key)))
    m.check(key, "BF.INFO", replaced(k["info"], Expansion_rate=2),
            plain(r.execute_command("BF.INFO", key)))
    m.check(key, "BF.CARD", k["card"], r.execute_command("BF.CARD", key))
    items = utf8(k["probes"]["items"])
    probe_answers(r, key, "BF", items, m, [bf_exists(chain, item) for item in items],
                  each=False)
    expected_dump_fields(r, key, bf_fields(chain))
    # Items added now are found (no false negatives), and only adds that set a bit count.
    new = [b"%s:new:%d" % (key.encode(), i) for i in range(200)]
    added = r.execute_command("BF.MADD", key, *new)
    assert all(a in (0, 1) for a in added), (key, [plain(a) for a in added])
    m.check(key, "BF.MEXISTS after adds", [1] * len(new), r.execute_command("BF.MEXISTS", key,
                                                                            *new))
    m.check(key, "BF.CARD after adds", k["card"] + sum(added), r.execute_command("BF.CARD", key))


def test_bloom_values_of_encoding_1(r):
    m = Mismatches()
    for k in BF_KEYS:
        fields = golden_fields(k["key"])
        key = k["key"] + "-v1"
        assert r.execute_command("RESTORE", key, 0,
                                 old_encoding_payload(BF_TYPE, fields, 1)) == b"OK"
        check_32bit_chain(r, m, k, key, copy_chain(bf_chain(fields), options=0, growth=2))
    m.assert_none()


def test_bloom_values_of_encoding_0(r):
    """Encoding 0 stores no bit count: RedisBloom takes int(entries * bpe), and its integrity
    check wants that to be 8 * the array's bytes. 2.4's links round their bit count up to whole
    64-bit words, so the golden links' own bpe fails that check (the value is refused); with bpe
    moved so that it holds (and k recomputed from it), the value loads as in encoding 1."""
    m = Mismatches()
    for k in BF_KEYS:
        fields = golden_fields(k["key"])
        chain = bf_chain(fields)
        key = k["key"] + "-v0"
        fits = all(int(float(l["entries"]) * l["bpe"]) == 8 * len(l["array"])
                   for l in chain["links"])
        assert not fits  # true of every golden key; the refusal below is what 2.4 does
        assert error_of(r, "RESTORE", key, 0, old_encoding_payload(BF_TYPE, fields, 0)) == \
            BAD_DATA, key
        assert r.ping() and not r.exists(key)

        adjusted = copy_chain(bf_encoding0_compatible(chain), options=0, growth=2)
        assert r.execute_command("RESTORE", key, 0,
                                 build_dump(BF_TYPE, 0, bf_fields(adjusted, 0))) == b"OK"
        check_32bit_chain(r, m, k, key, adjusted)
    m.assert_none()


def test_cuckoo_values_of_encodings_0_to_3(r):
    """Encodings 0-3 (all alike) store no numDeletes, bucketSize, maxIterations, expansion or
    per-sub-filter bucket counts: RedisBloom takes 0, 2, 20, 1 and numBuckets buckets in every
    sub-filter. A golden filter of bucket size 2 whose sub-filters are all that size loads and
    answers the golden probes (hashing does not depend on the encoding); INFO shows the
    defaults. Any other filter's slots contradict those defaults and the value is refused
    (RedisBloom 2.4 asserts, aborting the server; the module must reply an error)."""
    m = Mismatches()
    loaded = refused = 0
    for k in CF_KEYS:
        fields = golden_fields(k["key"])
        f = cf_filter(fields)
        for v in range(4):
            key = "%s-v%d" % (k["key"], v)
            payload = old_encoding_payload(CF_TYPE, fields, v)
            if not cf_old_encoding_fits(f):
                assert error_of(r, "RESTORE", key, 0, payload) == BAD_DATA, key
                assert r.ping() and not r.exists(key)
                refused += 1
                continue
            assert r.execute_command("RESTORE", key, 0, payload) == b"OK", key
            loaded += 1
            m.check(key, "TYPE", CF_TYPE, plain(r.type(key)))
            info = replaced(k["info"], Number_of_items_deleted=0, Bucket_size=2,
                            Expansion_rate=1, Max_iterations=20)
            m.check(key, "CF.INFO", info, plain(r.execute_command("CF.INFO", key)))
            probes = k["probes"]
            probe_answers(r, key, "CF", utf8(probes["items"]), m, probes["exists"],
                          probes["count"], each=False)
            expected_dump_fields(r, key, cf_fields(dict(f, **CF_OLD_DEFAULTS)))
    assert (loaded, refused) == (8 * 4, 7 * 4)
    m.assert_none()


# --- hostile input ------------------------------------------------------------------------------

def assert_refused(c, key, payload, why):
    try:
        reply = c.execute_command("RESTORE", key, 0, payload)
    except redis.ResponseError as e:
        reply = {"error": str(e)}
    except redis.ConnectionError as e:
        pytest.fail("the server died on RESTORE of %s: %s" % (why, e))
    assert reply == {"error": BAD_DATA}, why
    assert c.ping(), why
    assert not c.exists(key), why


def test_truncated_payloads_are_refused(r):
    cases = 0
    for k in KEYS:
        key = k["key"]
        payload = golden_dump(key)
        fields = golden_fields(key)
        spans = field_spans(payload)
        value_end = len(payload) - 10
        cuts = {1, 9, 10, value_end - 1}  # in the type id, after it, without the EOF
        for start, after_op, end in spans[:3] + [spans[len(spans) // 2]] + spans[-4:-1]:
            cuts |= {start, after_op, (after_op + end) // 2}
        for cut, cut_payload in truncated_payloads(payload, cuts - {0, value_end}).items():
            if footer_completes(cut_payload, fields):
                # A cut inside the last field's value, a Bloom link's size: the footer's bytes
                # (10, 0, ...) complete it and give the EOF, a whole value RedisBloom loads too.
                last = spans[-2]
                assert k["type"] == "bf" and last[1] <= cut < last[2], (key, cut)
                continue
            assert_refused(r, key, cut_payload, "%s cut at %d of %d" % (key, cut, value_end))
            cases += 1
    assert 400 < cases < 700


def bf_mutations(fields):
    """(what, fields) of absurd Bloom values RedisBloom 2.4's loader refuses."""
    chain = bf_chain(fields)
    link = dict(chain["links"][0])

    def with_link(**changes):
        out = copy_chain(chain)
        out["links"][0].update(changes)
        return bf_fields(out)

    yield "nfilters 0", [U(chain["size"]), U(0), U(chain["options"]), U(chain["growth"])]
    yield "nfilters 0, links kept", bf_fields(copy_chain(chain, nfilters=0))
    yield "nfilters 2^60", bf_fields(copy_chain(chain, nfilters=1 << 60))
    yield "nfilters 2^64-1", bf_fields(copy_chain(chain, nfilters=(1 << 64) - 1))
    yield "nfilters + 1", bf_fields(copy_chain(chain, nfilters=chain["nfilters"] + 1))
    if chain["nfilters"] > 1:
        yield "nfilters - 1", bf_fields(copy_chain(chain, nfilters=chain["nfilters"] - 1))
    for bits in (0, link["bits"] - 8, link["bits"] + 8, 1 << 63, (1 << 64) - 1):
        yield "bits %d" % bits, with_link(bits=bits)
    for hashes in (0, link["hashes"] - 1, link["hashes"] + 1, 1 << 40):
        yield "hashes %d" % hashes, with_link(hashes=hashes)
    for error in (math.nan, 0.0, -0.0, 1.0, 2.0, -0.5, math.inf):
        yield "error %r" % error, with_link(error=error)
    for bpe in (math.nan, math.inf, -1.0, 0.0, link["bpe"] * 3):
        yield "bpe %r" % bpe, with_link(bpe=bpe)
    array = link["array"]
    yield "array 1 byte short", with_link(array=array[:-1])
    yield "array 1 byte long", with_link(array=array + b"\0")
    yield "array 8 bytes long", with_link(array=array + bytes(8))
    yield "array empty", with_link(array=b"")
    yield "n2 64", with_link(n2=64)
    yield "n2 above log2(bits)", with_link(n2=link["bits"].bit_length() + 1)
    # Link 0's fields are 4 (entries) to 11 (size).
    yield "error saved as an unsigned", [(OP_UINT, 0) if i == 5 else f
                                         for i, f in enumerate(fields)]
    yield "array saved as an unsigned", [(OP_UINT, 0) if i == 10 else f
                                         for i, f in enumerate(fields)]
    yield "size saved as a string", [(OP_STRING, b"1") if i == 0 else f
                                     for i, f in enumerate(fields)]
    yield "options saved as a double", [(OP_DOUBLE, 5.0) if i == 2 else f
                                        for i, f in enumerate(fields)]
    yield "last field missing", fields[:-1]
    yield "a field too many", fields + [U(0)]


def cf_mutations(fields):
    """(what, fields) of absurd cuckoo values RedisBloom 2.4's loader refuses (or asserts on)."""
    f = cf_filter(fields)
    buckets, slots = f["filters"][0]

    def changed(**changes):
        return cf_fields(dict(f, **changes))

    def with_filter0(b, s):
        return cf_fields(dict(f, filters=[(b, s)] + f["filters"][1:]))

    yield "numFilters 0", changed(numFilters=0)
    yield "numBuckets 0", changed(numBuckets=0)
    yield "numFilters 2^60", changed(numFilters=1 << 60)
    yield "numFilters 65536", changed(numFilters=65536)
    yield "numFilters + 1", changed(numFilters=f["numFilters"] + 1)
    if f["numFilters"] > 1:
        yield "numFilters - 1", changed(numFilters=f["numFilters"] - 1)
    for b in (0, buckets * 2, buckets // 2 or 3, 1 << 60, (1 << 64) - 1):
        yield "sub-filter 0 buckets %d" % b, with_filter0(b, slots)
    yield "slots 1 byte short", with_filter0(buckets, slots[:-1])
    yield "slots 1 byte long", with_filter0(buckets, slots + b"\0")
    yield "slots empty", with_filter0(buckets, b"")
    for bs in (0, f["bucketSize"] + 1, 256, 1 << 40):
        yield "bucketSize %d" % bs, changed(bucketSize=bs)
    yield "slots saved as an unsigned", [(OP_UINT, 0) if i == 8 else x
                                         for i, x in enumerate(fields)]
    yield "buckets saved as a string", [(OP_STRING, b"64") if i == 7 else x
                                        for i, x in enumerate(fields)]
    yield "last field missing", fields[:-1]
    yield "a field too many", fields + [U(0)]


def test_absurd_fields_are_refused(r):
    cases = 0
    for key, mutations in (("a01-bf-e0.1-c100-x2", bf_mutations),
                           ("a06-bf-e0.001-c1000-nonscaling", bf_mutations),
                           ("a11-bf-e0.01-c1000-x4-empty", bf_mutations),
                           ("a21-cf-c1000-b2", cf_mutations),
                           ("a27-cf-del-compact-c200-x2", cf_mutations),
                           ("a35-cf-c4-b2-mi1-x1-max-expansions", cf_mutations)):
        name, _, fields = parse_dump(golden_dump(key))
        for what, bad in mutations(fields):
            assert_refused(r, key, build_dump(name, ENCODING, bad), "%s: %s" % (key, what))
            cases += 1
        for encver in (5, 1023):  # newer than RedisBloom 2.4 writes
            assert_refused(r, key, build_dump(name, encver, fields),
                           "%s: encoding version %d" % (key, encver))
            cases += 1
    assert cases > 150
    # The unchanged values still load (the refusals above are the mutations').
    for key in ("a01-bf-e0.1-c100-x2", "a21-cf-c1000-b2"):
        assert r.execute_command("RESTORE", key, 0, golden_dump(key)) == b"OK"


# LOADCHUNK's error texts in RedisBloom 2.4 (src/rebloom.c, src/sb.c at the golden data's commit).
BF_BAD = "ERR received bad data"
# A data chunk outside the filter: RedisBloom's texts, by the check that refused it (an iterator
# it cannot use; an offset no link holds; a chunk running past its link). CF has one text.
BF_NO_LINK = "ERR invalid offset - no link found"
BF_TOO_BIG = "ERR invalid chunk - Too big for current filter"
CF_BAD_CHUNK = "Couldn't load chunk!"
# A CF header of the right length with values RedisBloom refuses.
CF_BAD_HEADER_VALUES = {"Couldn't create filter!"}


def bf_bad_headers():
    """(what, header bytes, accepted error texts or None for any error) for BF.LOADCHUNK."""
    header = golden_chunks("a01-bf-e0.1-c100-x2")[0][1]
    h = bf_header(header)

    def edited(**changes):
        out = dict(h, links=[dict(link) for link in h["links"]])
        out["links"][0].update(changes.pop("link", {}))
        out.update(changes)
        return bf_header_bytes(out)

    rnd = random.Random(20423)
    bad = {BF_BAD}
    yield "empty", b"", bad
    yield "1 byte", b"x", bad
    yield "19 bytes", bytes(19), bad
    yield "1 byte short", header[:-1], bad
    yield "1 byte long", header + b"\0", bad
    for n in range(3):
        yield "random %d" % n, bytes(rnd.randrange(256) for _ in range(len(header))), bad
    yield "nfilters 0", header[:8] + bytes(4) + header[12:20], bad
    yield "nfilters + 1", edited(nfilters=h["nfilters"] + 1), bad
    yield "options 16 | 5", edited(options=21), bad
    yield "size + 1", edited(size=h["size"] + 1), bad
    link = h["links"][0]
    yield "bits + 8", edited(link={"bits": link["bits"] + 8}), bad
    yield "bits 0", edited(link={"bits": 0}), bad
    yield "hashes 0", edited(link={"hashes": 0}), bad
    yield "hashes + 1", edited(link={"hashes": link["hashes"] + 1}), bad
    for error in (0.0, 2.0, math.nan):
        yield "error %r" % error, edited(link={"error": error}), bad
    yield "n2 64", edited(link={"n2": 64}), bad
    # Consistent but 1 TiB: RedisBloom would try to allocate it; the module must refuse.
    yield "1 TiB link", edited(link={"bytes": 1 << 40, "bits": 1 << 43}), None


def cf_bad_headers():
    header = golden_chunks("a21-cf-c1000-b2")[0][1]
    h = cf_header(header)

    def edited(**changes):
        return cf_header_bytes(dict(h, **changes))

    rnd = random.Random(20423)
    yield "empty", b"", {"Invalid header"}
    yield "37 bytes", header[:-1], {"Invalid header"}
    yield "39 bytes", header + b"\0", {"Invalid header"}
    yield "the BF header", golden_chunks("a01-bf-e0.1-c100-x2")[0][1], {"Invalid header"}
    for n in range(3):
        garbage = bytes(rnd.randrange(256) for _ in range(38))
        g = cf_header(garbage)
        assert not 1 <= g["bucketSize"] <= 255 or g["numBuckets"] & (g["numBuckets"] - 1)
        yield "random %d" % n, garbage, CF_BAD_HEADER_VALUES
    for what, changes in (("bucketSize 0", {"bucketSize": 0}),
                          ("bucketSize 256", {"bucketSize": 256}),
                          ("numBuckets 0", {"numBuckets": 0}),
                          ("numBuckets 3", {"numBuckets": 3}),
                          ("numBuckets 2^56", {"numBuckets": 1 << 56}),
                          ("numFilters 0", {"numFilters": 0}),
                          ("numFilters 65536", {"numFilters": 65536}),
                          ("maxIterations 0", {"maxIterations": 0}),
                          ("expansion 0 with 2 sub-filters", {"expansion": 0})):
        yield what, edited(**changes), CF_BAD_HEADER_VALUES
    yield "2^40 buckets", edited(numBuckets=1 << 40), None


@pytest.mark.parametrize("kind", ["BF", "CF"])
def test_loadchunk_refuses_bad_headers(r, kind):
    command = kind + ".LOADCHUNK"
    for what, header, texts in (bf_bad_headers() if kind == "BF" else cf_bad_headers()):
        try:
            reply = r.execute_command(command, "hk", 1, header)
        except redis.ResponseError as e:
            reply = str(e)
        except redis.ConnectionError as e:
            pytest.fail("the server died on %s header %s: %s" % (kind, what, e))
        assert isinstance(reply, str) and (texts is None or reply in texts), (what, reply)
        assert r.ping(), what
        assert not r.exists("hk"), what


@pytest.mark.parametrize("key", ["a01-bf-e0.1-c100-x2", "a04-bf-e0.0001-c100000-x2",
                                 "a21-cf-c1000-b2", "a35-cf-c4-b2-mi1-x1-max-expansions"])
def test_loadchunk_refuses_misplaced_chunks_and_still_completes(r, key):
    k = answers_of(key)
    kind = kind_of(k)
    command = kind + ".LOADCHUNK"
    (_, header), *data = golden_chunks(key)
    first_iter, first = data[0]
    last_iter, last = data[-1]
    # A data chunk for a key that does not exist.
    assert error_of(r, command, key, first_iter, first) == "ERR not found"
    assert not r.exists(key)
    assert r.execute_command(command, key, 1, header) == b"OK"

    refusals = [
        ("iter 0", (0, first), {BF_BAD} if kind == "BF" else {"Invalid position"}),
        ("not a number", ("x", first),
         {"ERR Second argument must be numeric"} if kind == "BF" else {"Invalid position"}),
        ("the header again", (1, header), {BF_BAD} if kind == "BF" else {"ERR item exists"}),
        ("iter + 1", (first_iter + 1, first), BF_TOO_BIG),
        ("iter - 1", (first_iter - 1, first), BF_NO_LINK),
        ("negative iter", (-5, first), BF_BAD),
        ("8 bytes too long", (first_iter + 8, first + bytes(8)), BF_TOO_BIG),
        ("past the end", (last_iter + len(last) + 100, last), BF_NO_LINK),
        ("2^63 - 1", ((1 << 63) - 1, first), BF_NO_LINK),
    ]
    if kind == "CF":
        refusals[3:] = [(what, args, {CF_BAD_CHUNK}) for what, args, _ in refusals[3:]]
    else:
        refusals[3:] = [(what, args, {text}) for what, args, text in refusals[3:]]
    for what, (it, chunk), texts in refusals:
        try:
            reply = r.execute_command(command, key, it, chunk)
        except redis.ResponseError as e:
            reply = str(e)
        except redis.ConnectionError as e:
            pytest.fail("the server died on %s: %s" % (what, e))
        assert reply in texts, (what, reply)
        assert r.ping(), what
        assert r.exists(key), what  # the header's key stays, being restored
    if len(data) > 1:
        # RedisBloom writes each chunk where its iterator says, in any order, and so does the
        # module on a key of RedisBloom's layout; the complete sequence below still ends with the
        # exact filter.
        assert r.execute_command(command, key, *data[1]) == b"OK"
    for it, chunk in data:
        assert r.execute_command(command, key, it, chunk) == b"OK"
    m = Mismatches()
    compare_key(r, k, m)
    m.assert_none()


# --- RedisBloom's types bloomery does not provide -----------------------------------------------

# Plausible values of each (their fields as RedisBloom 2.4 saves them, in outline; the module
# refuses them by their type name without reading them).
OTHER_TYPES = {
    "TopK-TYPE": [U(2), U(8), U(3), D(0.9), S(bytes(8 * 3 * 8)), S(bytes(2 * 16)), S(b"a\0"),
                  S(b"\0")],
    "CMSk-TYPE": [U(16), U(4), U(10), S(bytes(16 * 4 * 4))],
    "TDIS-TYPE": [D(100.0), U(6), U(2), U(0), D(1.0), D(2.0), D(3.0), D(0.0),
                  S(struct.pack("<6d", 1.0, 2.0, 0, 0, 0, 0)),
                  S(struct.pack("<6d", 1.0, 1.0, 0, 0, 0, 0))],
}


@pytest.mark.parametrize("type_name", sorted(OTHER_TYPES))
def test_an_rdb_holding_another_redisbloom_type_does_not_load(tmp_path, type_name):
    data = build_rdb([("other", type_name, 0, OTHER_TYPES[type_name]),
                      ("bf", BF_TYPE, ENCODING, golden_fields("a12-bf-edge-items"))])
    (tmp_path / "dump.rdb").write_bytes(data)
    # Started as conftest starts a server, but once, and expected to stop by itself. (Its exit
    # status tells nothing: after a failed load Redis 7.0 runs its built-in redis-check-rdb,
    # which knows no module types, finds the file sound and exits with 0.)
    proc = subprocess.run(
        [SERVER, "--port", str(free_port()), "--bind", "127.0.0.1", "--dir", str(tmp_path),
         "--loadmodule", MODULE, "--save", "", "--daemonize", "no", "--protected-mode", "no",
         "--crash-memcheck-enabled", "no"],
        capture_output=True, timeout=60,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)))
    log = (proc.stdout + proc.stderr).decode(errors="replace")
    assert "Ready to accept connections" not in log, log[-3000:]
    assert "DB loaded from disk" not in log, log[-3000:]
    lines = [line for line in log.splitlines() if "does not provide" in line]
    assert lines and all(type_name in line for line in lines), log[-3000:]


def test_restore_of_another_redisbloom_type_is_refused(r):
    for type_name, fields in OTHER_TYPES.items():
        assert_refused(r, "other", build_dump(type_name, 0, fields), type_name)
