"""CF.* commands against a live redis-server: RedisBloom 2.4's syntax, defaults, replies and error
texts, where bloomery does better, and the module's CF_FINGERPRINT_BITS load argument
(docs/redis.md)."""

import random

import pytest

from conftest import failed_load_output
from redis_helpers import (WRONGTYPE, arity, error_of, info, items, loadchunks,
                           reply_or_error, scandump)

SMALL = "Capacity must be at least (BucketSize * 2)"
INFO_FIELDS = ["Size", "Number of buckets", "Number of filters", "Number of items inserted",
               "Number of items deleted", "Bucket size", "Expansion rate", "Max iterations"]


# --- CF.RESERVE ---------------------------------------------------------------------------------

def test_reserve_creates_an_empty_filter(r):
    assert r.execute_command("CF.RESERVE", "k", 1000) == b"OK"
    i = info(r, "k")
    assert list(i) == INFO_FIELDS
    assert (i["Number of filters"], i["Number of items inserted"], i["Number of items deleted"],
            i["Bucket size"], i["Expansion rate"], i["Max iterations"]) == (1, 0, 0, 2, 1, 20)
    # bloomery's buckets hold 4 fingerprints, filled to 95% at the capacity.
    assert 1000 <= i["Number of buckets"] * 4 * 0.95 <= 1000 * 1.1
    assert i["Number of buckets"] % 2 == 0
    assert r.execute_command("CF.EXISTS", "k", "foo") == 0
    assert r.execute_command("CF.COUNT", "k", "foo") == 0


def test_reserve_options(r):
    assert r.execute_command("CF.RESERVE", "k", 1000, "BUCKETSIZE", 4, "MAXITERATIONS", 500,
                             "EXPANSION", 2) == b"OK"
    i = info(r, "k")
    assert (i["Bucket size"], i["Max iterations"], i["Expansion rate"]) == (4, 500, 2)
    # BUCKETSIZE is kept and reported; the table is the same for every value.
    r.execute_command("CF.RESERVE", "one", 1000, "BUCKETSIZE", 1)
    r.execute_command("CF.RESERVE", "max", 1000, "BUCKETSIZE", 255)
    assert info(r, "one")["Bucket size"] == 1 and info(r, "max")["Bucket size"] == 255
    assert (info(r, "one")["Number of buckets"] == info(r, "max")["Number of buckets"] ==
            i["Number of buckets"])
    r.execute_command("CF.RESERVE", "it", 100, "MAXITERATIONS", 1)
    r.execute_command("CF.RESERVE", "it2", 100, "MAXITERATIONS", 65535)
    assert (info(r, "it")["Max iterations"], info(r, "it2")["Max iterations"]) == (1, 65535)


@pytest.mark.parametrize("given, used", [(1, 1), (2, 2), (3, 4), (5, 8), (1000, 1024),
                                         (32768, 32768)])
def test_reserve_expansion_is_rounded_up_to_a_power_of_two(r, given, used):
    # As RedisBloom rounds it.
    r.execute_command("CF.RESERVE", "k", 100, "EXPANSION", given)
    assert info(r, "k")["Expansion rate"] == used


def test_reserve_on_an_existing_key_is_an_error(r):
    r.execute_command("CF.RESERVE", "k", 100)
    assert error_of(r, "CF.RESERVE", "k", 100) == "ERR item exists"
    r.set("s", "v")
    assert error_of(r, "CF.RESERVE", "s", 100) == WRONGTYPE
    r.execute_command("BF.ADD", "b", "x")
    assert error_of(r, "CF.RESERVE", "b", 100) == WRONGTYPE


@pytest.mark.parametrize("capacity", ["abc", "1.5", "1e3", ""])
def test_reserve_bad_capacity(r, capacity):
    assert error_of(r, "CF.RESERVE", "k", capacity) == "Bad capacity"


@pytest.mark.parametrize("capacity, bucket_size", [(0, None), (-1, None), (3, None), (-2**63, None),
                                                   (19, 10), (509, 255), (1, 1)])
def test_reserve_capacity_must_hold_two_buckets(r, capacity, bucket_size):
    args = [] if bucket_size is None else ["BUCKETSIZE", bucket_size]
    assert error_of(r, "CF.RESERVE", "k", capacity, *args) == SMALL
    assert not r.exists("k")
    assert r.execute_command("CF.RESERVE", "k", 2 * (bucket_size or 2), *args) == b"OK"


@pytest.mark.parametrize("option, value, message", [
    ("BUCKETSIZE", "x", "Couldn't parse BUCKETSIZE"),
    ("BUCKETSIZE", "1.5", "Couldn't parse BUCKETSIZE"),
    ("BUCKETSIZE", 0, "BUCKETSIZE: value must be an integer between 1 and 255, inclusive."),
    ("BUCKETSIZE", 256, "BUCKETSIZE: value must be an integer between 1 and 255, inclusive."),
    ("BUCKETSIZE", -1, "BUCKETSIZE: value must be an integer between 1 and 255, inclusive."),
    ("MAXITERATIONS", "x", "Couldn't parse MAXITERATIONS"),
    ("MAXITERATIONS", 0, "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive."),
    ("MAXITERATIONS", 65536,
     "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive."),
    ("EXPANSION", "x", "Couldn't parse EXPANSION"),
    ("EXPANSION", 32769, "EXPANSION: value must be an integer between 1 and 32768, inclusive."),
])
def test_reserve_option_errors(r, option, value, message):
    assert error_of(r, "CF.RESERVE", "k", 1000, option, value) == message
    assert not r.exists("k")


@pytest.mark.parametrize("expansion", [0, -1, -32768])
def test_reserve_expansion_zero_or_negative_is_an_error(r, expansion):
    # RedisBloom 2.4 takes 0: the filter never grows, and adds to a full one are refused.
    assert (error_of(r, "CF.RESERVE", "k", 1000, "EXPANSION", expansion) ==
            "EXPANSION: value must be an integer between 1 and 32768, inclusive.")
    assert not r.exists("k")


def test_reserve_checks_options_in_redisbloom_order(r):
    # MAXITERATIONS, then BUCKETSIZE, then EXPANSION, then the capacity against the bucket size.
    assert (error_of(r, "CF.RESERVE", "k", 1, "EXPANSION", 0, "BUCKETSIZE", 0, "MAXITERATIONS", 0)
            == "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.")
    assert (error_of(r, "CF.RESERVE", "k", 1, "EXPANSION", 0, "BUCKETSIZE", 0) ==
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.")
    assert (error_of(r, "CF.RESERVE", "k", 1, "EXPANSION", 0) ==
            "EXPANSION: value must be an integer between 1 and 32768, inclusive.")
    assert error_of(r, "CF.RESERVE", "k", 1, "EXPANSION", 2) == SMALL


def test_reserve_options_are_whole_keywords_in_any_case(r):
    assert r.execute_command("CF.RESERVE", "a", 100, "bucketsize", 3, "MaxIterations", 7,
                             "expansion", 4) == b"OK"
    i = info(r, "a")
    assert (i["Bucket size"], i["Max iterations"], i["Expansion rate"]) == (3, 7, 4)
    # RedisBloom looks for each keyword anywhere and ignores other words.
    for word in ["BUCKET", "EXP", "MAXITERATION", "BUCKETSIZES", "CAPACITY", "X"]:
        assert error_of(r, "CF.RESERVE", "c", 100, word, 2) == "Unknown argument received"
    assert not r.exists("c")


def test_reserve_key_named_like_an_option_is_just_a_key(r):
    # RedisBloom finds EXPANSION in the key's place and reads the capacity as its value.
    assert r.execute_command("CF.RESERVE", "expansion", 100) == b"OK"
    assert info(r, "expansion")["Expansion rate"] == 1
    assert r.execute_command("CF.RESERVE", "BUCKETSIZE", 100, "EXPANSION", 2) == b"OK"
    assert info(r, "BUCKETSIZE")["Bucket size"] == 2


def test_reserve_arity(r):
    assert error_of(r, "CF.RESERVE", "k") == arity("cf.reserve")
    assert error_of(r, "CF.RESERVE", "k", 100, "BUCKETSIZE") == arity("cf.reserve")
    assert (error_of(r, "CF.RESERVE", "k", 100, "BUCKETSIZE", 2, "EXPANSION") ==
            arity("cf.reserve"))
    assert not r.exists("k")


# --- huge capacities ----------------------------------------------------------------------------

@pytest.mark.parametrize("capacity", [10**12, 2**48, 2**48 + 1, 2**63 - 1])
def test_huge_capacities_are_error_replies(r, capacity):
    # RedisBloom 2.4 aborts the server on these.
    assert error_of(r, "CF.RESERVE", "k", capacity) == "ERR Insufficient memory to create filter"
    assert (error_of(r, "CF.INSERT", "k", "CAPACITY", capacity, "ITEMS", "a") ==
            "ERR Insufficient memory to create filter")
    assert not r.exists("k")
    assert r.ping()
    assert r.execute_command("CF.ADD", "k", "a") == 1


def test_a_sub_filter_whose_memory_cannot_be_had_is_an_error_reply(r):
    # The second sub-filter of this chain would take 32768 times the first one's 0.9 MB (more
    # than the machine, or the tests' 16 GiB address-space limit); MAXITERATIONS 1 fills the
    # first one early.
    r.execute_command("CF.RESERVE", "k", 1_000_000, "EXPANSION", 32768, "MAXITERATIONS", 1)
    size = info(r, "k")["Size"]
    batches = 0
    while True:
        reply = r.execute_command("CF.INSERT", "k", "ITEMS", *items(f"b{batches}-", 50000))
        batches += 1
        if -1 in reply:
            break
        assert batches < 25, "the first sub-filter never filled"
    i = info(r, "k")
    assert (i["Number of filters"], i["Size"]) == (1, size)
    new = next(v for v in items("new", 1000) if r.execute_command("CF.EXISTS", "k", v) == 0)
    assert error_of(r, "CF.ADD", "k", new) == "Memory allocation failure"
    assert r.ping()
    # Nothing changed: every item stored still answers, and deletes still work.
    stored = [v for v, x in zip(items(f"b{batches - 1}-", 50000), reply) if x == 1]
    assert r.execute_command("CF.MEXISTS", "k", *stored) == [1] * len(stored)
    assert r.execute_command("CF.DEL", "k", stored[0]) == 1


# --- CF.ADD, CF.ADDNX, CF.DEL, CF.COUNT ---------------------------------------------------------

def test_add_count_del(r):
    # RedisBloom's own sequence: an item added twice is held twice.
    assert r.execute_command("CF.ADD", "k1", "k1") == 1
    assert r.execute_command("CF.ADD", "k1", "k1") == 1
    assert r.execute_command("CF.COUNT", "k1", "k1") == 2
    assert r.execute_command("CF.DEL", "k1", "k1") == 1
    assert r.execute_command("CF.EXISTS", "k1", "k1") == 1
    assert r.execute_command("CF.DEL", "k1", "k1") == 1
    assert r.execute_command("CF.COUNT", "k1", "k1") == 0
    assert r.execute_command("CF.EXISTS", "k1", "k1") == 0
    assert r.execute_command("CF.DEL", "k1", "k1") == 0


def test_add_creates_with_the_defaults(r):
    assert r.execute_command("CF.ADD", "k", "foo") == 1
    r.execute_command("CF.RESERVE", "ref", 1024)
    i = info(r, "k")
    assert (i["Number of buckets"], i["Number of filters"], i["Number of items inserted"],
            i["Bucket size"], i["Expansion rate"], i["Max iterations"]) == (
        info(r, "ref")["Number of buckets"], 1, 1, 2, 1, 20)


def test_addnx_adds_only_what_may_be_absent(r):
    assert r.execute_command("CF.ADDNX", "k", "a") == 1
    assert r.execute_command("CF.ADDNX", "k", "a") == 0
    assert r.execute_command("CF.COUNT", "k", "a") == 1
    assert info(r, "k")["Number of items inserted"] == 1
    r.execute_command("CF.ADD", "k", "a")
    assert r.execute_command("CF.COUNT", "k", "a") == 2


def test_info_counts_follow_adds_and_deletes(r):
    r.execute_command("CF.RESERVE", "k", 1000)
    for v in items("i", 100):
        assert r.execute_command("CF.ADD", "k", v) == 1
    for v in items("i", 30):
        assert r.execute_command("CF.DEL", "k", v) == 1
    i = info(r, "k")
    # RedisBloom's "inserted" is what the filter holds now.
    assert (i["Number of items inserted"], i["Number of items deleted"]) == (70, 30)
    assert r.execute_command("CF.MEXISTS", "k", *items("i", 100))[30:] == [1] * 70


def test_add_arity(r):
    for command in ["CF.ADD", "CF.ADDNX", "CF.DEL", "CF.COUNT", "CF.EXISTS"]:
        assert error_of(r, command, "k") == arity(command.lower())
        assert error_of(r, command, "k", "a", "b") == arity(command.lower())
    assert error_of(r, "CF.MEXISTS", "k") == arity("cf.mexists")
    assert not r.exists("k")


def test_del_on_a_missing_key(r):
    assert error_of(r, "CF.DEL", "missing", "a") == "Not found"
    assert not r.exists("missing")


def test_missing_keys_answer_zero(r):
    assert r.execute_command("CF.EXISTS", "nonexist", "blah") == 0
    assert r.execute_command("CF.MEXISTS", "nonexist-key", "blah") == [0]
    assert r.execute_command("CF.MEXISTS", "nonexist", "a", "b") == [0, 0]
    assert r.execute_command("CF.COUNT", "nonexist", "blah") == 0
    assert not r.exists("nonexist")


def test_mexists_answers_in_order(r):
    r.execute_command("CF.INSERT", "k", "ITEMS", "a", "c")
    assert r.execute_command("CF.MEXISTS", "k", "a", "b", "c") == [1, 0, 1]


def test_binary_items(r):
    values = [b"", b"\x00", b"\x00\x01", b"\xff" * 100, "é".encode()]
    assert r.execute_command("CF.INSERT", "k", "ITEMS", *values) == [1] * 5
    assert r.execute_command("CF.MEXISTS", "k", *values) == [1] * 5
    assert r.execute_command("CF.DEL", "k", b"\x00") == 1
    assert r.execute_command("CF.MEXISTS", "k", *values) == [1, 0, 1, 1, 1]


# --- growth -------------------------------------------------------------------------------------

@pytest.mark.parametrize("expansion", [1, 2, 4])
def test_filters_grow_and_never_lose_an_item(r, expansion):
    r.execute_command("CF.RESERVE", "k", 200, "EXPANSION", expansion)
    values = items("g", 3000)
    assert r.execute_command("CF.INSERT", "k", "ITEMS", *values) == [1] * 3000
    i = info(r, "k")
    assert i["Number of filters"] > 1
    assert i["Number of items inserted"] == 3000
    assert r.execute_command("CF.MEXISTS", "k", *values) == [1] * 3000
    # Each sub-filter is `expansion` times the previous one: with more growth, fewer sub-filters.
    grown = {1: 15, 2: 4, 4: 3}[expansion]
    assert i["Number of filters"] <= grown


def test_a_full_chain_says_so(r):
    # 32 sub-filters of the smallest table (2 buckets of 4, and a stash): 32 * 9 items.
    r.execute_command("CF.RESERVE", "k", 4)
    reply = r.execute_command("CF.INSERT", "k", "ITEMS", *items("c", 400))
    assert reply.count(1) == 288 and reply.count(-1) == 112
    assert reply == [1] * 288 + [-1] * 112
    assert info(r, "k")["Number of filters"] == 32
    new = next(v for v in items("more", 1000) if r.execute_command("CF.EXISTS", "k", v) == 0)
    assert error_of(r, "CF.ADD", "k", new) == "Maximum expansions reached"
    assert error_of(r, "CF.ADDNX", "k", new) == "Maximum expansions reached"
    assert r.execute_command("CF.INSERTNX", "k", "ITEMS", "c0", new) == [0, -1]
    # Nothing changed, and every item added still answers.
    assert info(r, "k")["Number of items inserted"] == 288
    assert r.execute_command("CF.MEXISTS", "k", *items("c", 288)) == [1] * 288


# --- CF.INSERT, CF.INSERTNX ---------------------------------------------------------------------

def test_insert_creates_with_its_capacity(r):
    assert r.execute_command("CF.INSERT", "k", "CAPACITY", 10000, "ITEMS", "a", "b") == [1, 1]
    r.execute_command("CF.RESERVE", "ref", 10000)
    i = info(r, "k")
    assert (i["Number of buckets"], i["Number of items inserted"], i["Expansion rate"],
            i["Bucket size"]) == (info(r, "ref")["Number of buckets"], 2, 1, 2)
    # On an existing key the capacity is ignored.
    assert r.execute_command("CF.INSERT", "k", "CAPACITY", 5, "ITEMS", "c") == [1]
    assert info(r, "k")["Number of buckets"] == i["Number of buckets"]


def test_insert_defaults_and_duplicates(r):
    assert r.execute_command("CF.INSERT", "k", "ITEMS", "x", "x") == [1, 1]
    assert r.execute_command("CF.INSERTNX", "n", "ITEMS", "x", "x", "y") == [1, 0, 1]
    assert info(r, "k")["Number of buckets"] == info(r, "n")["Number of buckets"]
    assert r.execute_command("CF.COUNT", "k", "x") == 2
    assert r.execute_command("CF.COUNT", "n", "x") == 1


def test_insert_nocreate(r):
    for command in ["CF.INSERT", "CF.INSERTNX"]:
        assert error_of(r, command, "k", "NOCREATE", "ITEMS", "a") == "ERR not found"
    assert not r.exists("k")
    r.execute_command("CF.ADD", "k", "a")
    assert r.execute_command("CF.INSERTNX", "k", "NOCREATE", "ITEMS", "a", "b") == [0, 1]


def test_insert_options_are_whole_keywords_in_any_case(r):
    assert r.execute_command("CF.INSERT", "k", "Capacity", 50, "items", "a") == [1]
    assert r.execute_command("CF.INSERTNX", "k", "nocreate", "ITEMS", "a", "b") == [0, 1]
    assert error_of(r, "CF.INSERT", "k2", "NoCreate", "Items", "a") == "ERR not found"
    # RedisBloom reads "CAPPCITY" as CAPACITY, "NOPE" as NOCREATE, "I" as ITEMS.
    for word in ["CAPPCITY", "NOPE", "N", "I", "ITEM", "CAPACITY5", "EXPANSION"]:
        assert error_of(r, "CF.INSERT", "j", word, 5, "ITEMS", "a") == "Unknown argument received"
    assert not r.exists("j")


def test_insert_capacity_errors(r):
    assert error_of(r, "CF.INSERT", "k", "CAPACITY", "x", "ITEMS", "a") == "Bad capacity"
    assert error_of(r, "CF.INSERT", "k", "CAPACITY", "1.5", "ITEMS", "a") == "Bad capacity"
    for capacity in [3, 0, -5]:
        assert error_of(r, "CF.INSERT", "k", "CAPACITY", capacity, "ITEMS", "a") == SMALL
    assert not r.exists("k")
    assert r.execute_command("CF.INSERT", "k", "CAPACITY", 4, "ITEMS", "a") == [1]


def test_insert_arity(r):
    for command in ["CF.INSERT", "CF.INSERTNX"]:
        msg = arity(command.lower())
        assert error_of(r, command, "k", "ITEMS") == msg
        assert error_of(r, command, "k", "NOCREATE", "ITEMS") == msg
        assert error_of(r, command, "k", "NOCREATE", "NOCREATE") == msg  # no ITEMS
        assert error_of(r, command, "k", "CAPACITY") == msg
        assert error_of(r, command, "k", "NOCREATE", "CAPACITY") == msg
        assert error_of(r, command, "k") == msg
    assert not r.exists("k")


# --- deletes: no false negative for items not deleted -------------------------------------------

def random_adds_and_deletes(r, seed, capacity, expansion, universe, rounds=12):
    """Random CF.ADD/CF.ADDNX/CF.DEL sequences that delete only items added more times than
    deleted (a delete of anything else may take another item's fingerprint, below); after each
    round every such item answers 1 and CF.COUNT holds at least its copies."""
    rng = random.Random(seed)
    r.delete("k")
    r.execute_command("CF.RESERVE", "k", capacity, "EXPANSION", expansion)
    names = items("u", universe)
    held = {}
    for _ in range(rounds):
        pipe = r.pipeline(transaction=False)
        ops = []
        for _ in range(300):
            present = [v for v, n in held.items() if n > 0]
            if present and rng.random() < 0.4:
                v = rng.choice(present)
                ops.append(("del", v))
                pipe.execute_command("CF.DEL", "k", v)
                held[v] -= 1
            else:
                v = rng.choice(names)
                nx = rng.random() < 0.2
                ops.append(("addnx" if nx else "add", v))
                pipe.execute_command("CF.ADDNX" if nx else "CF.ADD", "k", v)
                if not nx:
                    held[v] = held.get(v, 0) + 1
        for (op, v), reply in zip(ops, pipe.execute()):
            if op == "del":
                assert reply == 1, f"CF.DEL of {v}, which is held, replied {reply}"
            elif op == "add":
                assert reply == 1
            elif reply == 1:  # CF.ADDNX stored it
                held[v] = held.get(v, 0) + 1
        kept = [v for v, n in held.items() if n > 0]
        found = r.execute_command("CF.MEXISTS", "k", *kept)
        assert [v for v, f in zip(kept, found) if f != 1] == []
        pipe = r.pipeline(transaction=False)
        for v in kept:
            pipe.execute_command("CF.COUNT", "k", v)
        assert [v for c, v in zip(pipe.execute(), kept) if c < held[v]] == []
    i = info(r, "k")
    assert i["Number of items inserted"] == sum(held.values())
    assert i["Number of filters"] > 1


@pytest.mark.parametrize("seed, capacity, expansion", [(1, 64, 1), (2, 64, 2), (3, 500, 4),
                                                       (4, 8, 2)])
def test_random_adds_and_deletes_never_lose_an_item(r, seed, capacity, expansion):
    random_adds_and_deletes(r, seed, capacity, expansion, universe=600)


def test_random_adds_and_deletes_with_4_bit_fingerprints(make_server):
    # One fingerprint in 15 collides: deletes that take another item's copy in a newer sub-filter
    # are common, and the copy left in an older one must answer for that item.
    r = make_server(module_args=["CF_FINGERPRINT_BITS", "4"]).client()
    for seed, expansion in [(5, 1), (6, 2), (7, 4), (8, 8)]:
        random_adds_and_deletes(r, seed, 32, expansion, universe=3000, rounds=10)


def test_deleting_an_item_never_added_may_take_another_items_place(r):
    # Inherent to cuckoo filters (docs/redis.md): an absent item that answers 1 shares a
    # fingerprint and a bucket with an item held, and CF.DEL removes that item's copy.
    r.execute_command("CF.RESERVE", "k", 4)
    r.execute_command("CF.ADD", "k", "held")
    candidates = items("never", 20000)
    found = r.execute_command("CF.MEXISTS", "k", *candidates)
    impostor = next(v for v, f in zip(candidates, found) if f == 1)
    assert r.execute_command("CF.DEL", "k", impostor) == 1
    assert r.execute_command("CF.EXISTS", "k", "held") == 0


# --- false-positive rate ------------------------------------------------------------------------

def measured_rate(r, key):
    probes = items("absent", 40000)
    return sum(r.execute_command("CF.MEXISTS", key, *probes)) / len(probes)


def test_false_positive_rate_of_8_bit_fingerprints(r):
    # One sub-filter at 94% load (MAXITERATIONS 20 would add a second one at about 85%):
    # 1 - exp(-8 · 0.94 / 255), about 2.9%.
    r.execute_command("CF.RESERVE", "k", 20000, "MAXITERATIONS", 500)
    r.execute_command("CF.INSERT", "k", "ITEMS", *items("in", 20000))
    assert info(r, "k")["Number of filters"] == 1
    assert 0.024 < measured_rate(r, "k") < 0.034


# --- CF.INFO, MEMORY USAGE ----------------------------------------------------------------------

def test_info_errors(r):
    assert error_of(r, "CF.INFO", "missing") == "ERR not found"
    r.execute_command("CF.ADD", "k", "a")
    assert error_of(r, "CF.INFO") == arity("cf.info")
    assert error_of(r, "CF.INFO", "k", "SIZE") == arity("cf.info")


def test_size_and_memory_usage_report_the_real_size(r):
    r.execute_command("CF.RESERVE", "k", 1_000_000)
    size = info(r, "k")["Size"]
    # 28 bits per bucket of 4 (semi-sorted 8-bit fingerprints) at 95% load: 7.4 bits an item.
    assert 1_000_000 * 7 / 8 / 0.95 <= size <= 1_000_000 * 7 / 8 / 0.95 * 1.01 + 2048
    usage = r.memory_usage("k")
    assert size <= usage <= size + 256
    r.execute_command("CF.INSERT", "k", "ITEMS", *items("m", 1000))
    assert info(r, "k")["Size"] == size  # the first sub-filter is allocated whole
    # Each sub-filter added is counted.
    r.execute_command("CF.RESERVE", "small", 1000)
    first = info(r, "small")["Size"]
    r.execute_command("CF.INSERT", "small", "ITEMS", *items("m", 3000))
    assert info(r, "small")["Number of filters"] >= 3
    assert info(r, "small")["Size"] >= 3 * (first - 1024)
    assert r.memory_usage("small") >= info(r, "small")["Size"]


# --- wrong types --------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [
    ["CF.ADD", "s", "a"], ["CF.ADDNX", "s", "a"], ["CF.INSERT", "s", "ITEMS", "a"],
    ["CF.INSERTNX", "s", "ITEMS", "a"], ["CF.EXISTS", "s", "a"], ["CF.MEXISTS", "s", "a"],
    ["CF.COUNT", "s", "a"], ["CF.DEL", "s", "a"], ["CF.INFO", "s"], ["CF.SCANDUMP", "s", 0],
    ["CF.LOADCHUNK", "s", 1, "x"], ["CF.LOADCHUNK", "s", 5, "x"], ["CF.RESERVE", "s", 100]])
def test_wrong_type(r, command):
    r.set("s", "v")
    assert error_of(r, *command) == WRONGTYPE
    r.delete("s")
    r.execute_command("BF.ADD", "s", "a")  # a Bloom filter is another type too
    assert error_of(r, *command) == WRONGTYPE
    assert r.execute_command("BF.EXISTS", "s", "a") == 1


def test_bf_commands_refuse_a_cuckoo_filter(r):
    r.execute_command("CF.ADD", "c", "a")
    for command in [["BF.ADD", "c", "a"], ["BF.EXISTS", "c", "a"], ["BF.INFO", "c"]]:
        assert error_of(r, *command) == WRONGTYPE
    assert r.execute_command("CF.EXISTS", "c", "a") == 1


# --- COPY ---------------------------------------------------------------------------------------

def test_copy_is_independent(r):
    r.execute_command("CF.INSERT", "a", "ITEMS", "x", "y")
    assert r.copy("a", "b")
    r.execute_command("CF.ADD", "b", "z")
    r.execute_command("CF.DEL", "b", "x")
    assert r.execute_command("CF.MEXISTS", "b", "x", "y", "z") == [0, 1, 1]
    assert r.execute_command("CF.MEXISTS", "a", "x", "y", "z") == [1, 1, 0]


# --- redis-cli ----------------------------------------------------------------------------------

def test_through_redis_cli(shared_server, r):
    cli = shared_server.cli
    assert cli("CF.RESERVE", "c", "1000").strip() == "OK"
    assert cli("CF.ADD", "c", "hello").strip() == "1"
    assert cli("CF.ADDNX", "c", "hello").strip() == "0"
    assert cli("CF.INSERT", "c", "ITEMS", "hello", "world").split() == ["1", "1"]
    assert cli("CF.COUNT", "c", "hello").strip() == "2"
    assert cli("CF.DEL", "c", "world").strip() == "1"
    assert cli("CF.MEXISTS", "c", "hello", "world").split() == ["1", "0"]
    assert cli("CF.RESERVE", "c", "100").strip() == "ERR item exists"
    assert cli("CF.DEL", "none", "x").strip() == "Not found"
    assert (cli("CF.INSERT", "d", "CAPPCITY", "5", "ITEMS", "a").strip() ==
            "Unknown argument received")
    assert cli("CF.INFO", "c").split("\n")[6:8] == ["Number of items inserted", "2"]


# --- the CF_FINGERPRINT_BITS load argument ------------------------------------------------------

def test_fingerprint_bits_load_argument(make_server):
    wide = make_server(module_args=["CF_FINGERPRINT_BITS", "12"]).client()
    narrow = make_server().client()
    for r in (wide, narrow):
        r.execute_command("CF.RESERVE", "k", 20000)
        r.execute_command("CF.INSERT", "k", "ITEMS", *items("in", 20000))
        assert r.execute_command("CF.MEXISTS", "k", *items("in", 20000)) == [1] * 20000
    # 44 bits per bucket instead of 28; 1 - exp(-8 · 0.95 / 4095), about 0.19%.
    assert info(wide, "k")["Size"] > info(narrow, "k")["Size"] * 1.5
    assert measured_rate(wide, "k") < 0.004
    assert measured_rate(narrow, "k") > 0.02
    # The width travels with the filter: a dump of a 12-bit filter stays one on an 8-bit server.
    loadchunks(narrow, "copy", scandump(wide, "k", "CF"), "CF")
    assert info(narrow, "copy") == info(wide, "k")
    assert measured_rate(narrow, "copy") == measured_rate(wide, "k")


def test_fingerprint_bits_argument_is_a_whole_keyword_in_any_case(make_server):
    r = make_server(module_args=["cf_fingerprint_bits", "16"]).client()
    r.execute_command("CF.RESERVE", "k", 1000)
    r8 = make_server(module_args=["CF_FINGERPRINT_BITS", "8"]).client()
    r8.execute_command("CF.RESERVE", "k", 1000)
    assert info(r, "k")["Size"] > info(r8, "k")["Size"]


@pytest.mark.parametrize("args, logged", [
    (["CF_FINGERPRINT_BITS", "3"], "CF_FINGERPRINT_BITS must be an integer from 4 to 16"),
    (["CF_FINGERPRINT_BITS", "17"], "CF_FINGERPRINT_BITS must be an integer from 4 to 16"),
    (["CF_FINGERPRINT_BITS", "x"], "CF_FINGERPRINT_BITS must be an integer from 4 to 16"),
    (["CF_FINGERPRINT_BITS"], "CF_FINGERPRINT_BITS must be an integer from 4 to 16"),
    (["CF_FINGERPRINT_BIT", "8"], "unknown load argument 'CF_FINGERPRINT_BIT'"),
    (["INITIAL_SIZES", "100"], "unknown load argument 'INITIAL_SIZES'"),
    (["INITIAL_SIZE", "0"], "INITIAL_SIZE must be an integer >= 1"),
    (["ERROR_RATE", "1"], "ERROR_RATE must be a number in (0, 1)"),
    (["ERROR_RATE", "x"], "ERROR_RATE must be a number in (0, 1)"),
    (["CF_MAX_EXPANSIONS", "0"], "CF_MAX_EXPANSIONS must be an integer >= 1"),
    (["CF_MAX_EXPANSIONS", "x"], "CF_MAX_EXPANSIONS must be an integer >= 1"),
])
def test_a_bad_load_argument_fails_the_load(tmp_path, args, logged):
    assert logged in failed_load_output(tmp_path, *args)


def test_redisbloom_load_arguments_keep_their_meaning(make_server):
    """RedisBloom's ERROR_RATE and INITIAL_SIZE shape the BF keys BF.ADD, BF.MADD and BF.INSERT
    create; CF_MAX_EXPANSIONS is the number of sub-filters at which CF adds are refused."""
    c = make_server(module_args=["INITIAL_SIZE", "400", "ERROR_RATE", "0.001",
                                 "CF_MAX_EXPANSIONS", "2"]).client()
    c.execute_command("BF.ADD", "added", "x")
    c.execute_command("BF.INSERT", "inserted", "ITEMS", "x")
    # The same filter as BF.RESERVE of that rate and capacity on a server without the arguments.
    default = make_server().client()
    default.execute_command("BF.RESERVE", "reserved", 0.001, 400)
    default.execute_command("BF.ADD", "reserved", "x")
    for key in ("added", "inserted"):
        assert info(c, key) == info(default, "reserved")
    # Two sub-filters at most: the third growth is refused.
    c.execute_command("CF.RESERVE", "cf", 4, "BUCKETSIZE", 1, "MAXITERATIONS", 1)
    replies = [reply_or_error(c, "CF.ADD", "cf", f"i{i}") for i in range(200)]
    assert replies.count(1) < 200
    assert "Maximum expansions reached" in replies
    assert info(c, "cf")["Number of filters"] == 2
