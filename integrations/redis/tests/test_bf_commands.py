"""BF.* commands against a live redis-server: RedisBloom 2.4's syntax, defaults, replies and error
texts, and where bloomery does better (docs/redis.md)."""

import pytest
import redis

from redis_helpers import WRONGTYPE, error_of, info, items


def add_all(r, key, values):
    return r.execute_command("BF.MADD", key, *values)


# --- BF.RESERVE ---------------------------------------------------------------------------------

def test_reserve_creates_an_empty_filter(r):
    assert r.execute_command("BF.RESERVE", "test", 0.05, 1000) == b"OK"
    i = info(r, "test")
    assert list(i) == ["Capacity", "Size", "Number of filters", "Number of items inserted",
                       "Expansion rate"]
    assert i["Capacity"] == 1000
    assert i["Number of filters"] == 1
    assert i["Number of items inserted"] == 0
    assert i["Expansion rate"] == 2
    assert r.execute_command("BF.CARD", "test") == 0
    assert r.execute_command("BF.EXISTS", "test", "foo") == 0


def test_reserve_on_an_existing_key_is_an_error(r):
    r.execute_command("BF.RESERVE", "k", 0.01, 100)
    assert error_of(r, "BF.RESERVE", "k", 0.01, 100) == "ERR item exists"
    r.set("s", "v")
    assert error_of(r, "BF.RESERVE", "s", 0.01, 100) == WRONGTYPE


@pytest.mark.parametrize("rate", ["abc", "", "0.01x", "nan"])
def test_reserve_bad_error_rate(r, rate):
    assert error_of(r, "BF.RESERVE", "k", rate, 100) == "ERR bad error rate"


@pytest.mark.parametrize("rate", ["0", "1", "-0.5", "1.5", "inf", "-inf"])
def test_reserve_error_rate_out_of_range(r, rate):
    assert error_of(r, "BF.RESERVE", "k", rate, 100) == "ERR (0 < error rate range < 1) "


@pytest.mark.parametrize("capacity", ["abc", "1.5", "1e3", ""])
def test_reserve_bad_capacity(r, capacity):
    assert error_of(r, "BF.RESERVE", "k", 0.01, capacity) == "ERR bad capacity"


@pytest.mark.parametrize("capacity", ["0", "-1", "-9223372036854775808"])
def test_reserve_capacity_must_be_positive(r, capacity):
    assert error_of(r, "BF.RESERVE", "k", 0.01, capacity) == "ERR (capacity should be larger than 0)"


def test_reserve_expansion_errors(r):
    assert error_of(r, "BF.RESERVE", "k", 0.01, 100, "EXPANSION") == "ERR no expansion"
    assert error_of(r, "BF.RESERVE", "k", 0.01, 100, "EXPANSION", "x") == "ERR bad expansion"
    assert (error_of(r, "BF.RESERVE", "k", 0.01, 100, "NONSCALING", "EXPANSION", 2) ==
            "Nonscaling filters cannot expand")
    assert (error_of(r, "BF.RESERVE", "k", 0.01, 100, "EXPANSION", 2, "NONSCALING") ==
            "Nonscaling filters cannot expand")
    assert not r.exists("k")


@pytest.mark.parametrize("expansion", ["0", "-1", "-100", "17"])
def test_reserve_expansion_out_of_range_is_an_error(r, expansion):
    # RedisBloom 2.4 creates the filter for 0 and negative expansions and reports "added".
    assert error_of(r, "BF.RESERVE", "k", 0.01, 100, "EXPANSION", expansion) == "ERR bad expansion"
    assert not r.exists("k")


def test_reserve_options_are_whole_keywords_in_any_case(r):
    assert r.execute_command("BF.RESERVE", "a", 0.01, 100, "nonscaling") == b"OK"
    assert info(r, "a")["Expansion rate"] is None
    assert r.execute_command("BF.RESERVE", "b", 0.01, 100, "Expansion", 4) == b"OK"
    assert info(r, "b")["Expansion rate"] == 4
    # RedisBloom's BF.RESERVE ignores words it does not know: a misspelt NONSCALING silently
    # made a scaling filter.
    assert error_of(r, "BF.RESERVE", "c", 0.01, 100, "NONSCALINGX") == "Unknown argument received"
    assert error_of(r, "BF.RESERVE", "c", 0.01, 100, "NON") == "Unknown argument received"
    assert error_of(r, "BF.RESERVE", "c", 0.01, 100, "EXP", 2) == "Unknown argument received"
    assert not r.exists("c")


def test_reserve_key_named_like_an_option_is_just_a_key(r):
    # RedisBloom scans every argument for NONSCALING, the key included.
    assert r.execute_command("BF.RESERVE", "nonscaling", 0.01, 100) == b"OK"
    assert info(r, "nonscaling")["Expansion rate"] == 2
    assert r.execute_command("BF.RESERVE", "EXPANSION", 0.01, 100) == b"OK"
    assert info(r, "EXPANSION")["Expansion rate"] == 2


def test_reserve_arity(r):
    msg = "ERR wrong number of arguments for 'bf.reserve' command"
    assert error_of(r, "BF.RESERVE", "k", 0.01) == msg
    assert error_of(r, "BF.RESERVE", "k", 0.01, 100, "EXPANSION", 2, "NONSCALING", "x") == msg


@pytest.mark.parametrize("expansion, capacities", [(1, [100, 100, 100]), (2, [100, 200, 400]),
                                                   (3, [100, 300, 900]), (16, [100, 1600])])
def test_filters_grow_by_the_expansion(r, expansion, capacities):
    r.execute_command("BF.RESERVE", "k", 0.01, 100, "EXPANSION", expansion)
    total, added, i = 0, 0, 0
    for n, capacity in enumerate(capacities):
        # Fill sub-filter n exactly: it is the newest until the next new item arrives.
        total += capacity
        while info(r, "k")["Number of items inserted"] < total:
            added += r.execute_command("BF.ADD", "k", f"item{i}")
            i += 1
        assert (info(r, "k")["Number of filters"], info(r, "k")["Capacity"]) == (n + 1, total)
    r.execute_command("BF.ADD", "k", "one more")
    assert info(r, "k")["Number of filters"] == len(capacities) + 1
    assert info(r, "k")["Capacity"] == total + capacities[-1] * expansion
    assert r.execute_command("BF.CARD", "k") == added + 1


def test_a_filter_that_cannot_grow_says_so(r):
    # bloomery's most sub-filters is 64: with EXPANSION 1 and capacity 1, 64 items.
    r.execute_command("BF.RESERVE", "k", 0.01, 1, "EXPANSION", 1)
    reply = r.execute_command("BF.MADD", "k", *items("c", 100))
    assert str(reply[-1]) == "ERR problem inserting into filter"
    assert sum(x for x in reply if isinstance(x, int)) == 64
    assert info(r, "k")["Number of filters"] == 64
    assert r.execute_command("BF.CARD", "k") == 64
    new = next(v for v in items("more", 100) if r.execute_command("BF.EXISTS", "k", v) == 0)
    assert error_of(r, "BF.ADD", "k", new) == "ERR problem inserting into filter"
    # Nothing changed, and items already added still answer.
    assert info(r, "k")["Number of filters"] == 64
    added = [v for v, x in zip(items("c", 100), reply) if x == 1]
    assert r.execute_command("BF.MEXISTS", "k", *added) == [1] * 64


# --- BF.ADD, BF.MADD ----------------------------------------------------------------------------

def test_add_creates_with_the_defaults(r):
    assert r.execute_command("BF.ADD", "k", "foo") == 1
    assert r.execute_command("BF.ADD", "k", "foo") == 0
    i = info(r, "k")
    assert (i["Capacity"], i["Number of filters"], i["Number of items inserted"],
            i["Expansion rate"]) == (100, 1, 1, 2)


def test_madd_replies_per_item(r):
    assert r.execute_command("BF.MADD", "m", "foo", "bar", "baz") == [1, 1, 1]
    assert r.execute_command("BF.ADD", "n", "foo") == 1
    assert r.execute_command("BF.MADD", "n", "foo", "bar") == [0, 1]
    assert r.execute_command("BF.MADD", "n", "x", "x") == [1, 0]
    assert info(r, "m")["Capacity"] == 100


def test_added_items_are_always_found(r):
    values = items("v", 5000)
    replies = add_all(r, "k", values)
    assert r.execute_command("BF.MEXISTS", "k", *values) == [1] * len(values)
    # Items answered "maybe present" are not counted.
    assert info(r, "k")["Number of items inserted"] == sum(replies)
    assert r.execute_command("BF.CARD", "k") == sum(replies)
    assert sum(replies) >= 5000 * 0.98  # a new item is skipped with at most the 1% rate


def test_false_positive_rate_stays_below_the_error_rate(r):
    r.execute_command("BF.RESERVE", "k", 0.01, 1000)
    add_all(r, "k", items("in", 8000))
    absent = r.execute_command("BF.MEXISTS", "k", *items("out", 20000))
    # The compound rate is below 1% (the sub-filters have 0.5%, 0.25%, ...); 1.3% bounds the
    # binomial spread of 20000 probes.
    assert sum(absent) / len(absent) < 0.013


def test_add_arity(r):
    assert error_of(r, "BF.ADD", "k") == "ERR wrong number of arguments for 'bf.add' command"
    assert error_of(r, "BF.ADD", "k", "a", "b") == "ERR wrong number of arguments for 'bf.add' command"
    assert error_of(r, "BF.MADD", "k") == "ERR wrong number of arguments for 'bf.madd' command"
    assert not r.exists("k")


# --- NONSCALING ---------------------------------------------------------------------------------

def test_nonscaling_filter_takes_exactly_its_capacity(r):
    assert r.execute_command("BF.INSERT", "nonscaling", "CAPACITY", 3, "NONSCALING",
                             "ITEMS", "a", "b", "c") == [1, 1, 1]
    reply = r.execute_command("BF.INSERT", "nonscaling", "ITEMS", "a", "b", "c", "d", "d")
    assert reply[:3] == [0, 0, 0]
    assert len(reply) == 4  # the array stops at the first error
    assert isinstance(reply[3], redis.ResponseError)
    assert str(reply[3]) == "ERR non scaling filter is full"
    assert error_of(r, "BF.ADD", "nonscaling", "e") == "ERR non scaling filter is full"
    assert r.execute_command("BF.ADD", "nonscaling", "a") == 0
    reply = r.execute_command("BF.MADD", "nonscaling", "b", "zz", "a")
    assert reply[0] == 0 and str(reply[1]) == "ERR non scaling filter is full" and len(reply) == 2
    i = info(r, "nonscaling")
    assert (i["Capacity"], i["Number of filters"], i["Number of items inserted"],
            i["Expansion rate"]) == (3, 1, 3, None)


@pytest.mark.parametrize("rate", [0.001, 0.01, 0.3, 0.5])
def test_nonscaling_capacity_counts_new_items_exactly(r, rate):
    # (Far higher rates saturate the few bits long before 500 items are new to them.)
    r.execute_command("BF.RESERVE", "k", rate, 500, "NONSCALING")
    added = 0
    for i in range(100):
        reply = r.execute_command("BF.MADD", "k", *items(f"x{i}-", 100))
        added += sum(x for x in reply if isinstance(x, int))
        if isinstance(reply[-1], redis.ResponseError):
            break
    assert added == 500
    assert info(r, "k")["Number of items inserted"] == 500
    assert info(r, "k")["Number of filters"] == 1


@pytest.mark.parametrize("rate", [0.6, 0.9, 0.999, 0.9999999999999999])
def test_nonscaling_high_error_rates(r, rate):
    # bloomery's bound must stay below 1 while its one sub-filter gets the requested rate.
    assert r.execute_command("BF.RESERVE", "k", rate, 1000, "NONSCALING") == b"OK"
    assert r.execute_command("BF.ADD", "k", "a") == 1
    assert r.execute_command("BF.EXISTS", "k", "a") == 1
    assert info(r, "k")["Capacity"] == 1000


# --- BF.INSERT ----------------------------------------------------------------------------------

def test_insert_creates_with_its_options(r):
    assert r.execute_command("BF.INSERT", "k", "CAPACITY", 1000, "ERROR", 0.001, "EXPANSION", 4,
                             "ITEMS", "a", "b") == [1, 1]
    i = info(r, "k")
    assert (i["Capacity"], i["Expansion rate"], i["Number of items inserted"]) == (1000, 4, 2)
    # On an existing key the creation options are ignored.
    assert r.execute_command("BF.INSERT", "k", "CAPACITY", 5, "ITEMS", "c") == [1]
    assert info(r, "k")["Capacity"] == 1000


def test_insert_defaults(r):
    assert r.execute_command("BF.INSERT", "k", "ITEMS", "a") == [1]
    i = info(r, "k")
    assert (i["Capacity"], i["Expansion rate"]) == (100, 2)


def test_insert_nocreate(r):
    assert error_of(r, "BF.INSERT", "k", "NOCREATE", "ITEMS", "a") == "ERR not found"
    assert not r.exists("k")
    r.execute_command("BF.ADD", "k", "a")
    assert r.execute_command("BF.INSERT", "k", "NOCREATE", "ITEMS", "a", "b") == [0, 1]


def test_insert_options_are_whole_keywords_in_any_case(r):
    assert r.execute_command("BF.INSERT", "k", "capacity", 50, "Error", 0.1, "expansion", 3,
                             "nonScaling", "items", "a") == [1]
    i = info(r, "k")
    assert (i["Capacity"], i["Expansion rate"]) == (50, None)
    assert error_of(r, "BF.INSERT", "k2", "NoCreate", "ITEMS", "a") == "ERR not found"
    # RedisBloom reads "CAPPCITY" as CAPACITY, "EXPANDED" as EXPANSION, "NOPE" as NONSCALING.
    for word in ["CAPPCITY", "EXPANDED", "ERR", "NOPE", "N", "ITEM", "CAPACITY5"]:
        assert error_of(r, "BF.INSERT", "j", word, 5, "ITEMS", "a") == "Unknown argument received"
    assert not r.exists("j")


def test_insert_parse_errors(r):
    assert error_of(r, "BF.INSERT", "k", "ERROR", "x", "ITEMS", "a") == "Bad error rate"
    assert error_of(r, "BF.INSERT", "k", "CAPACITY", "x", "ITEMS", "a") == "Bad capacity"
    assert error_of(r, "BF.INSERT", "k", "CAPACITY", "1.5", "ITEMS", "a") == "Bad capacity"
    assert error_of(r, "BF.INSERT", "k", "EXPANSION", "x", "ITEMS", "a") == "Bad expansion"
    assert not r.exists("k")


@pytest.mark.parametrize("option, value", [("ERROR", 0), ("ERROR", 1), ("ERROR", -0.1),
                                           ("ERROR", 2), ("CAPACITY", 0), ("CAPACITY", -5),
                                           ("EXPANSION", 0), ("EXPANSION", -1),
                                           ("EXPANSION", 17)])
def test_insert_values_out_of_range(r, option, value):
    assert error_of(r, "BF.INSERT", "k", option, value, "ITEMS", "a") == "Bad argument received"
    assert not r.exists("k")


def test_insert_arity(r):
    msg = "ERR wrong number of arguments for 'bf.insert' command"
    assert error_of(r, "BF.INSERT", "k", "ITEMS") == msg
    assert error_of(r, "BF.INSERT", "k", "NOCREATE", "ITEMS") == msg
    assert error_of(r, "BF.INSERT", "k", "NOCREATE", "NONSCALING") == msg  # no ITEMS
    assert error_of(r, "BF.INSERT", "k", "CAPACITY") == msg
    assert error_of(r, "BF.INSERT", "k", "ERROR", 0.1, "CAPACITY") == msg
    assert error_of(r, "BF.INSERT", "k") == msg
    assert not r.exists("k")


# --- BF.EXISTS, BF.MEXISTS ----------------------------------------------------------------------

def test_exists_on_a_missing_key_is_zero(r):
    assert r.execute_command("BF.EXISTS", "nonexist", "blah") == 0
    assert r.execute_command("BF.MEXISTS", "nonexist", "a", "b") == [0, 0]


def test_mexists_answers_in_order(r):
    r.execute_command("BF.MADD", "k", "a", "c")
    assert r.execute_command("BF.MEXISTS", "k", "a", "b", "c") == [1, 0, 1]
    assert r.execute_command("BF.EXISTS", "k", "c") == 1


def test_exists_arity(r):
    assert error_of(r, "BF.EXISTS", "k") == "ERR wrong number of arguments for 'bf.exists' command"
    assert (error_of(r, "BF.EXISTS", "k", "a", "b") ==
            "ERR wrong number of arguments for 'bf.exists' command")
    assert error_of(r, "BF.MEXISTS", "k") == "ERR wrong number of arguments for 'bf.mexists' command"


def test_binary_items(r):
    values = [b"", b"\x00", b"\x00\x01", b"\xff" * 100, "é".encode()]
    assert r.execute_command("BF.MADD", "k", *values) == [1] * 5
    assert r.execute_command("BF.MEXISTS", "k", *values) == [1] * 5


# --- BF.INFO, BF.CARD ---------------------------------------------------------------------------

def test_info_single_fields(r):
    r.execute_command("BF.RESERVE", "k", 0.01, 1000, "EXPANSION", 3)
    r.execute_command("BF.MADD", "k", "a", "b")
    full = info(r, "k")
    for word, label in [("CAPACITY", "Capacity"), ("size", "Size"), ("Filters", "Number of filters"),
                        ("ITEMS", "Number of items inserted"), ("expansion", "Expansion rate")]:
        assert r.execute_command("BF.INFO", "k", word) == [full[label]]
    assert full["Size"] > 1000 * 9.6 / 8  # bits at 0.5% for 1000 items, at least
    r.execute_command("BF.RESERVE", "n", 0.01, 10, "NONSCALING")
    assert r.execute_command("BF.INFO", "n", "EXPANSION") == [None]


def test_info_errors(r):
    assert error_of(r, "BF.INFO", "missing") == "ERR not found"
    r.execute_command("BF.ADD", "k", "a")
    assert error_of(r, "BF.INFO", "k", "CAPACITYX") == "Invalid information value"
    assert error_of(r, "BF.INFO", "k", "cap") == "Invalid information value"
    assert error_of(r, "BF.INFO") == "ERR wrong number of arguments for 'bf.info' command"
    assert (error_of(r, "BF.INFO", "k", "SIZE", "ITEMS") ==
            "ERR wrong number of arguments for 'bf.info' command")


def test_card(r):
    assert r.execute_command("BF.CARD", "missing") == 0
    r.execute_command("BF.MADD", "k", *items("c", 300))
    assert r.execute_command("BF.CARD", "k") == info(r, "k")["Number of items inserted"]
    assert error_of(r, "BF.CARD") == "ERR wrong number of arguments for 'bf.card' command"
    assert error_of(r, "BF.CARD", "k", "x") == "ERR wrong number of arguments for 'bf.card' command"


def test_size_and_memory_usage_report_the_real_size(r):
    r.execute_command("BF.RESERVE", "k", 0.01, 1_000_000)
    size = info(r, "k")["Size"]
    # 1e6 items at 0.5% need 11.0 bits each: the bit array dominates.
    assert 1_000_000 * 11.0 / 8 <= size <= 1_000_000 * 11.2 / 8
    usage = r.memory_usage("k")
    assert size <= usage <= size + 256
    r.execute_command("BF.MADD", "k", *items("m", 1000))
    assert info(r, "k")["Size"] == size  # the first sub-filter is allocated whole


# --- wrong types --------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [
    ["BF.ADD", "s", "a"], ["BF.MADD", "s", "a"], ["BF.INSERT", "s", "ITEMS", "a"],
    ["BF.EXISTS", "s", "a"], ["BF.MEXISTS", "s", "a"], ["BF.INFO", "s"], ["BF.CARD", "s"],
    ["BF.SCANDUMP", "s", 0], ["BF.LOADCHUNK", "s", 1, "x"], ["BF.RESERVE", "s", 0.1, 10]])
def test_wrong_type(r, command):
    r.set("s", "v")
    assert error_of(r, *command) == WRONGTYPE
    r.delete("s")
    r.rpush("s", "v")
    assert error_of(r, *command) == WRONGTYPE
    assert r.lrange("s", 0, -1) == [b"v"]


# --- huge capacities, 64-bit sizes --------------------------------------------------------------

def test_huge_capacities_are_error_replies(r):
    # RedisBloom 2.4 aborts the server on these.
    assert (error_of(r, "BF.RESERVE", "k", 0.01, 10**12) ==
            "ERR Insufficient memory to create filter")
    assert error_of(r, "BF.RESERVE", "k", 0.01, 2**63 - 1).startswith("ERR could not create filter")
    assert (error_of(r, "BF.INSERT", "k", "CAPACITY", 10**12, "ITEMS", "a") ==
            "ERR Insufficient memory to create filter")
    assert error_of(r, "BF.RESERVE", "k", 1e-300, 100).startswith("ERR could not create filter")
    assert not r.exists("k")
    assert r.ping()
    assert r.execute_command("BF.ADD", "k", "a") == 1


def test_no_32_bit_limits(r):
    # 4.5e9 bits (more than 2^32) for 3.1e9 items (more than 2^32 - 1 counts as capacity).
    capacity = 3_100_000_000
    r.execute_command("BF.RESERVE", "wide", 0.5, capacity, "NONSCALING")
    try:
        i = info(r, "wide")
        assert i["Capacity"] == capacity
        assert i["Size"] * 8 > 2**32
        assert r.memory_usage("wide") >= i["Size"]
        values = items("w", 20000)
        assert sum(r.execute_command("BF.MADD", "wide", *values)) >= 19990
        assert r.execute_command("BF.MEXISTS", "wide", *values) == [1] * len(values)
    finally:
        r.delete("wide")


# --- COPY ---------------------------------------------------------------------------------------

def test_copy_is_independent(r):
    r.execute_command("BF.MADD", "a", "x", "y")
    assert r.copy("a", "b")
    r.execute_command("BF.ADD", "b", "z")
    assert r.execute_command("BF.MEXISTS", "b", "x", "y", "z") == [1, 1, 1]
    assert r.execute_command("BF.EXISTS", "a", "z") == 0
    assert r.execute_command("BF.CARD", "a") == 2


# --- redis-cli ----------------------------------------------------------------------------------

def test_through_redis_cli(shared_server, r):
    cli = shared_server.cli
    assert cli("BF.RESERVE", "c", "0.01", "100").strip() == "OK"
    assert cli("BF.ADD", "c", "hello").strip() == "1"
    assert cli("BF.MADD", "c", "hello", "world").split() == ["0", "1"]
    assert cli("BF.EXISTS", "c", "world").strip() == "1"
    assert cli("BF.INFO", "c", "ITEMS").strip() == "2"
    assert cli("BF.RESERVE", "c", "0.01", "100").strip() == "ERR item exists"
    assert cli("BF.RESERVE", "d", "2", "100").rstrip("\n") == "ERR (0 < error rate range < 1) "
    assert cli("BF.INSERT", "d", "CAPPCITY", "5", "ITEMS", "a").strip() == "Unknown argument received"
    assert cli("BF.INFO", "c").split("\n")[:2] == ["Capacity", "100"]
