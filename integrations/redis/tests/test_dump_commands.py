"""BF.SCANDUMP/BF.LOADCHUNK and CF.SCANDUMP/CF.LOADCHUNK against a live redis-server: copies that
answer as their sources, RedisBloom 2.4's iterators, and each error with the exact text of its
type's command (docs/redis.md)."""

from types import SimpleNamespace

import pytest

from redis_helpers import (arity, error_of, info, items, loadchunks, reply_or_error, scandump)

# What the two types' commands reply where they differ (src/filter_traits.hpp, dump_replies).
REPLIES = {
    "BF": SimpleNamespace(
        scandump_end=b"",
        scandump_negative=[0, b""],  # read as past the end
        bad_scandump_iter="Second argument must be numeric",
        missing_key_bad_iter="ERR not found",  # the key is looked at first
        bad_loadchunk_iter="ERR Second argument must be numeric",
        iter_0_missing_key="ERR not found",
        iter_0_restoring="ERR received bad data",
        header_for_existing_key="ERR received bad data",
        bad_header="ERR received bad data",
        bad_chunk="ERR received bad data"),
    "CF": SimpleNamespace(
        scandump_end=None,
        scandump_negative="Invalid position",
        bad_scandump_iter="Invalid position",
        missing_key_bad_iter="Invalid position",  # the iter is looked at first
        bad_loadchunk_iter="Invalid position",
        iter_0_missing_key="Invalid position",
        iter_0_restoring="Invalid position",
        header_for_existing_key="ERR item exists",
        bad_header="Invalid header",
        bad_chunk="Couldn't load chunk!"),
}

# A source to copy, and writes the copy must answer as the source does.
ROUND_TRIP = {
    "BF": SimpleNamespace(
        source=[("BF.RESERVE", "src", 0.001, 200, "EXPANSION", 3),
                ("BF.MADD", "src", *items("s", 1500))],
        writes=[("BF.ADD", "new")]),
    "CF": SimpleNamespace(
        source=[("CF.RESERVE", "src", 200, "EXPANSION", 2, "BUCKETSIZE", 3, "MAXITERATIONS", 50),
                ("CF.INSERT", "src", "ITEMS", *items("s", 1500)),
                *[("CF.DEL", "src", v) for v in items("s", 100)]],
        writes=[("CF.ADD", "new"), ("CF.DEL", "s200"), ("CF.ADDNX", "s300")]),
}

# Every command of the type but LOADCHUNK on a key "k", and RESERVE of "k".
COMMANDS_ON_K = {
    "BF": [["BF.ADD", "k", "a"], ["BF.MADD", "k", "a"], ["BF.INSERT", "k", "ITEMS", "a"],
           ["BF.EXISTS", "k", "a"], ["BF.MEXISTS", "k", "a"], ["BF.INFO", "k"], ["BF.CARD", "k"],
           ["BF.SCANDUMP", "k", 0]],
    "CF": [["CF.ADD", "k", "a"], ["CF.ADDNX", "k", "a"], ["CF.INSERT", "k", "ITEMS", "a"],
           ["CF.INSERTNX", "k", "ITEMS", "a"], ["CF.EXISTS", "k", "a"], ["CF.MEXISTS", "k", "a"],
           ["CF.COUNT", "k", "a"], ["CF.DEL", "k", "a"], ["CF.INFO", "k"], ["CF.SCANDUMP", "k", 0]],
}
RESERVE_K = {"BF": ["BF.RESERVE", "k", 0.1, 10], "CF": ["CF.RESERVE", "k", 100]}


@pytest.fixture
def say(kind):
    return REPLIES[kind.NAME]


def magic(kind):
    return b"BLMRY-" + kind.NAME.encode()


# --- copies -------------------------------------------------------------------------------------

def test_scandump_loadchunk_round_trip(r, kind):
    case = ROUND_TRIP[kind.NAME]
    for command in case.source:
        r.execute_command(*command)
    chunks = scandump(r, "src", kind.NAME)
    assert chunks[0][0] == 1 and len(chunks) == 2
    assert all(c[1] for c in chunks)
    assert loadchunks(r, "dst", chunks, kind.NAME) == [b"OK"] * len(chunks)
    assert info(r, "dst") == info(r, "src")
    probe = items("s", 1500) + items("absent", 5000)
    assert (r.execute_command(kind.NAME + ".MEXISTS", "dst", *probe) ==
            r.execute_command(kind.NAME + ".MEXISTS", "src", *probe))
    assert scandump(r, "dst", kind.NAME) == chunks
    # The copy takes writes like the original.
    for command, item in case.writes:
        assert r.execute_command(command, "dst", item) == r.execute_command(command, "src", item)
    assert scandump(r, "dst", kind.NAME) == scandump(r, "src", kind.NAME)


@pytest.mark.parametrize("create, holds", [(["BF.RESERVE", "src", 0.01, 100], None),
                                           (["BF.RESERVE", "src", 0.01, 100, "NONSCALING"], 100),
                                           (["BF.RESERVE", "src", 0.7, 5, "NONSCALING"], None)])
def test_empty_and_nonscaling_bloom_filters_round_trip(r, create, holds):
    r.execute_command(*create)
    loadchunks(r, "dst", scandump(r, "src", "BF"), "BF")
    assert info(r, "dst") == info(r, "src")
    if holds is not None:
        r.execute_command("BF.MADD", "dst", *items("n", 200))
        assert info(r, "dst")["Number of items inserted"] == holds
        assert error_of(r, "BF.ADD", "dst", "beyond") == "ERR non scaling filter is full"


def test_an_empty_cuckoo_filter_round_trips(r):
    # RedisBloom 2.4 replies [0, nil] to SCANDUMP of an empty filter, so it cannot be copied.
    r.execute_command("CF.RESERVE", "src", 1000, "BUCKETSIZE", 4, "EXPANSION", 8)
    chunks = scandump(r, "src", "CF")
    assert len(chunks) == 2
    loadchunks(r, "dst", chunks, "CF")
    assert info(r, "dst") == info(r, "src")
    assert r.execute_command("CF.ADD", "dst", "a") == 1
    assert r.execute_command("CF.EXISTS", "dst", "a") == 1


def test_large_filter_dumps_in_16_mib_chunks(r, kind):
    kind.create(r, "big", 20_000_000, items("b", 2000))
    chunks = scandump(r, "big", kind.NAME)
    assert len(chunks) == 3  # header, 16 MiB, the rest
    assert len(chunks[1][1]) == 16 << 20
    loadchunks(r, "copy", chunks, kind.NAME)
    assert r.execute_command(kind.NAME + ".MEXISTS", "copy", *items("b", 2000)) == [1] * 2000
    assert info(r, "copy") == info(r, "big")


# --- SCANDUMP -----------------------------------------------------------------------------------

def test_scandump_iterator(r, kind, say):
    command = kind.NAME + ".SCANDUMP"
    r.execute_command(kind.NAME + ".ADD", "k", "a")
    it, header = r.execute_command(command, "k", 0)
    assert it == 1 and header.startswith(magic(kind))
    it, data = r.execute_command(command, "k", 1)
    assert it == 1 + len(data) and len(data) % 64 == 0
    assert r.execute_command(command, "k", it) == [0, say.scandump_end]
    assert r.execute_command(command, "k", it + 1000) == [0, say.scandump_end]
    assert reply_or_error(r, command, "k", -5) == say.scandump_negative
    # Any iterator inside the payload reads from there.
    it2, tail = r.execute_command(command, "k", 11)
    assert it2 == it and tail == data[10:]


def test_scandump_errors(r, kind, say):
    command = kind.NAME + ".SCANDUMP"
    assert error_of(r, command, "missing", 0) == "ERR not found"
    assert error_of(r, command, "missing", "x") == say.missing_key_bad_iter
    r.execute_command(kind.NAME + ".ADD", "k", "a")
    assert error_of(r, command, "k", "x") == say.bad_scandump_iter
    assert reply_or_error(r, command, "k", -1) == say.scandump_negative
    assert error_of(r, command, "k") == arity(command.lower())


# --- LOADCHUNK ----------------------------------------------------------------------------------

def test_loadchunk_argument_errors(r, kind, say):
    command = kind.NAME + ".LOADCHUNK"
    assert error_of(r, command, "k", 1) == arity(command.lower())
    assert error_of(r, command, "k", 1, "a", "b") == arity(command.lower())
    assert error_of(r, command, "k", "x", "data") == say.bad_loadchunk_iter
    assert error_of(r, command, "k", 0, "data") == say.iter_0_missing_key
    assert error_of(r, command, "k", 5, "data") == "ERR not found"
    assert not r.exists("k")


# MAGIC stands for the type's own magic: a dump header with nothing valid after it.
@pytest.mark.parametrize("garbage", [b"", b"x", b"\x00" * 200, b"MAGIC" + b"\x00" * 300,
                                     bytes(range(256)) * 4])
def test_loadchunk_garbage_header(r, kind, say, garbage):
    garbage = garbage.replace(b"MAGIC", magic(kind))
    assert error_of(r, kind.NAME + ".LOADCHUNK", "k", 1, garbage) == say.bad_header
    assert not r.exists("k")


def test_loadchunk_of_another_types_dump(r):
    r.execute_command("BF.ADD", "bf", "a")
    r.execute_command("CF.ADD", "cf", "a")
    assert error_of(r, "CF.LOADCHUNK", "k", *scandump(r, "bf", "BF")[0]) == "Invalid header"
    assert error_of(r, "BF.LOADCHUNK", "k", *scandump(r, "cf", "CF")[0]) == "ERR received bad data"
    assert not r.exists("k")


def test_loadchunk_damaged_header_is_refused(r, kind, say):
    command = kind.NAME + ".LOADCHUNK"
    r.execute_command(kind.NAME + ".ADD", "src", "a")
    (it, header), *data = scandump(r, "src", kind.NAME)
    for at in [0, 12, 16, 24 + 12, 24 + 72, len(header) - 1]:
        bad = bytearray(header)
        bad[at] ^= 1
        assert error_of(r, command, "k", 1, bytes(bad)) == say.bad_header
        assert not r.exists("k")
    assert error_of(r, command, "k", 1, header[:-1]) == say.bad_header


def test_loadchunk_damaged_data_is_an_error_never_a_wrong_filter(r, kind, say):
    command = kind.NAME + ".LOADCHUNK"
    kind.create(r, "src", 1000, items("d", 500))
    header, (it, data) = scandump(r, "src", kind.NAME)
    for at in [0, len(data) // 2, len(data) - 1]:
        bad = bytearray(data)
        bad[at] ^= 0x10
        assert r.execute_command(command, "k", *header) == b"OK"
        assert error_of(r, command, "k", it, bytes(bad)) == say.bad_chunk
        assert not r.exists("k")  # the restore failed as a whole


def test_loadchunk_out_of_order_and_oversized_chunks(r, kind, say):
    command = kind.NAME + ".LOADCHUNK"
    kind.create(r, "src", 20_000_000)
    header, first, second = scandump(r, "src", kind.NAME)
    assert r.execute_command(command, "k", *header) == b"OK"
    assert error_of(r, command, "k", *second) == say.bad_chunk  # skipped one
    assert error_of(r, command, "k", *header) == say.header_for_existing_key  # header again
    assert error_of(r, command, "k", 3, b"abc") == say.bad_chunk  # iter < len
    assert error_of(r, command, "k", -7, b"abc") == say.bad_chunk
    assert error_of(r, command, "k", 0, b"") == say.iter_0_restoring
    assert r.execute_command(command, "k", *first) == b"OK"
    assert error_of(r, command, "k", *first) == say.bad_chunk  # sent twice
    # Past the payload's end.
    assert error_of(r, command, "k", second[0] + 64, second[1] + b"x" * 64) == say.bad_chunk
    # The refused chunks changed nothing: the right one still completes the filter.
    assert r.execute_command(command, "k", *second) == b"OK"
    assert info(r, "k") == info(r, "src")
    assert error_of(r, command, "k", *second) == say.bad_chunk  # complete now


def test_a_key_being_restored_answers_nothing_else(r, kind):
    kind.create(r, "src", 1000, ["a", "b"])
    header, data = scandump(r, "src", kind.NAME)
    r.execute_command(kind.NAME + ".LOADCHUNK", "k", *header)
    for command in COMMANDS_ON_K[kind.NAME]:
        assert error_of(r, *command) == kind.RESTORING
    assert error_of(r, *RESERVE_K[kind.NAME]) == "ERR item exists"
    assert r.memory_usage("k") > 0
    r.execute_command(kind.NAME + ".LOADCHUNK", "k", *data)
    assert r.execute_command(kind.NAME + ".MEXISTS", "k", "a", "b") == [1, 1]


def test_loadchunk_into_an_existing_filter_is_refused(r, kind, say):
    command = kind.NAME + ".LOADCHUNK"
    r.execute_command(kind.NAME + ".ADD", "src", "a")
    header, data = scandump(r, "src", kind.NAME)
    r.execute_command(kind.NAME + ".ADD", "k", "z")
    assert error_of(r, command, "k", *header) == say.header_for_existing_key
    assert error_of(r, command, "k", *data) == say.bad_chunk
    assert r.execute_command(kind.NAME + ".MEXISTS", "k", "z", "a") == [1, 0]


def test_a_dump_taken_while_writing_fails_loudly(r, kind, say):
    kind.create(r, "src", 1000)
    header = r.execute_command(kind.NAME + ".SCANDUMP", "src", 0)
    r.execute_command(kind.NAME + ".ADD", "src", "later")
    data = r.execute_command(kind.NAME + ".SCANDUMP", "src", 1)
    r.execute_command(kind.NAME + ".LOADCHUNK", "k", *header)
    assert error_of(r, kind.NAME + ".LOADCHUNK", "k", *data) == say.bad_chunk
    assert not r.exists("k")
