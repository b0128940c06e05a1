"""The set-like API: keys, add/add_new/update, contains_many (lists and buffers), removes, set
operators, statistics, copies, and what is deliberately not defined."""

import array
import concurrent.futures
import copy
import sys

import pytest

import bloomery
from conftest import ALL_KINDS, INSERTABLE, MERGEABLE, REMOVABLE, kind_id, make_filter

INSERTABLE_CLASSES = [cls for cls, _ in INSERTABLE]


def numpy():
    return pytest.importorskip("numpy")


# ------------------------------------------------------------------------------------------------
# Keys.

def test_str_is_its_utf8_bytes_and_bytes_likes_are_alike():
    f = bloomery.BloomFilter(1000, 1e-9)
    f.add("café ☕")
    data = "café ☕".encode()
    for same in (data, bytearray(data), memoryview(data)):
        assert same in f
    # A non-contiguous memoryview is the key of its bytes, in C order.
    g = bloomery.BloomFilter(1000, 1e-9)
    g.add(memoryview(b"a-b-c-d")[::2])
    assert b"abcd" in g


def test_ints_are_64_bit_two_complement_and_differ_from_their_bytes():
    f = bloomery.BloomFilter(1000, 1e-9)
    f.update([-1, 0, 2**63, 7])
    assert 2**64 - 1 in f and -(2**63) in f and 7 in f
    assert (7).to_bytes(8, "little") not in f and "7" not in f
    np_ = numpy()
    assert np_.uint64(7) in f and np_.int8(-1) in f  # objects with __index__ are integers


@pytest.mark.parametrize("bad", [1.5, None, [1], (1,), {"a": 1}, object(), True, False, 1j],
                         ids=repr)
def test_other_types_are_type_errors_everywhere(bad):
    f = bloomery.CountingBloomFilter(100, 0.01)
    name = type(bad).__name__
    for call in (lambda: f.add(bad), lambda: bad in f, lambda: f.add_new(bad),
                 lambda: f.update([bad]), lambda: f.contains_many([bad]), lambda: f.remove(bad),
                 lambda: f.discard(bad), lambda: bloomery.StaticFilter.build([bad], 0.01)):
        with pytest.raises(TypeError, match=f"a key must be str, bytes, bytearray, memoryview or "
                                            f"int, not {name}"):
            call()
    assert f.approx_len() == 0


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, 10**40, -(10**40)])
def test_ints_out_of_range_are_overflow_errors(value):
    f = bloomery.BloomFilter(100, 0.01)
    for call in (lambda: f.add(value), lambda: value in f, lambda: f.update([value])):
        with pytest.raises(OverflowError, match=r"integer keys are 64-bit, in \[-2\*\*63, 2\*\*64\)"):
            call()
    with pytest.raises(OverflowError, match="an int of 1000 bits"):
        f.add(2**999)


def test_unencodable_str_is_a_unicode_error():
    with pytest.raises(UnicodeEncodeError):
        bloomery.BloomFilter(100, 0.01).add("\ud800")


def test_a_single_str_or_bytes_is_not_a_collection():
    f = bloomery.BloomFilter(100, 0.01)
    for keys in ("https://example.com/", b"abc", bytearray(b"abc")):
        for call in (f.update, f.contains_many, lambda k: bloomery.StaticFilter.build(k, 0.01)):
            with pytest.raises(TypeError, match="is one key, not a collection"):
                call(keys)
    assert f.approx_len() == 0


# ------------------------------------------------------------------------------------------------
# Inserts.

@pytest.mark.parametrize("cls", INSERTABLE_CLASSES, ids=kind_id)
def test_add_new_reports_new_keys(cls):
    f = cls(1000, 0.001)
    assert f.add_new("a") is True
    assert f.add_new("a") is False
    assert f.add_new(b"a") is False  # the same key
    assert f.add_new(5) is True
    assert "a" in f and 5 in f


@pytest.mark.parametrize("cls", INSERTABLE_CLASSES, ids=kind_id)
def test_update_takes_any_iterables_and_several(cls):
    f = cls(10_000, 0.01)
    f.update(["a", "b"], ("c",), (x for x in [b"d", 1]), {"e"}, {"f": 0}.keys(), range(100, 110))
    assert all(k in f for k in ["a", "b", "c", b"d", 1, "e", "f", *range(100, 110)])
    f.update()
    f.update([])


def test_update_inserts_the_keys_before_a_bad_one():
    f = bloomery.BloomFilter(100_000, 1e-6)
    keys = [f"k{i}" for i in range(20_000)]  # more than one batch
    with pytest.raises(TypeError, match="not float"):
        f.update(keys + [1.5] + ["after"])
    assert all(f.contains_many(keys)) and "after" not in f


def test_clear():
    for cls in INSERTABLE_CLASSES:
        f = make_filter(cls, ["a", "b"])
        f.clear()
        assert "a" not in f and f.approx_len() == 0


# ------------------------------------------------------------------------------------------------
# Batched queries: lists, and buffers of integers without a Python object per key.

@pytest.mark.parametrize("cls", ALL_KINDS, ids=kind_id)
def test_contains_many_lists_match_single_queries(cls):
    present = [f"p{i}" for i in range(3000)] + list(range(500))
    f = make_filter(cls, present[:3000]) if cls is bloomery.StaticFilter else make_filter(
        cls, present, capacity=5000)
    probe = present + [f"q{i}" for i in range(3000)] + list(range(10**6, 10**6 + 500))
    if cls is bloomery.StaticFilter:
        probe = [k for k in probe if isinstance(k, str)]
    hits = f.contains_many(probe)
    assert isinstance(hits, list) and hits == [k in f for k in probe]
    assert f.contains_many([]) == []
    assert f.contains_many(iter(probe)) == hits


@pytest.mark.parametrize("cls", ALL_KINDS, ids=kind_id)
@pytest.mark.parametrize("dtype", ["uint64", "int64", "int32", "uint32", "int16", "uint8", "int8"])
def test_buffers_of_integers_are_read_in_place(cls, dtype):
    np_ = numpy()
    info = np_.iinfo(dtype)
    rng = np_.random.default_rng(7)
    values = rng.integers(info.min, info.max, 3000, dtype=dtype, endpoint=True)
    keys = np_.unique(np_.concatenate([values, np_.array([info.min, info.max], dtype=dtype)]))
    f = make_filter(cls, keys, capacity=20_000)
    probe = np_.concatenate([keys, np_.arange(0, 5000).astype(dtype)])
    hits = f.contains_many(probe)
    assert isinstance(hits, np_.ndarray) and hits.dtype == np_.bool_ and hits.shape == probe.shape
    assert hits.tolist() == f.contains_many(probe.tolist())  # the same keys as Python ints
    assert hits[: len(keys)].all()
    strided = probe[::3]  # not contiguous: converted batch by batch
    assert f.contains_many(strided).tolist() == hits[::3].tolist()


def test_update_from_buffers():
    np_ = numpy()
    f = bloomery.BloomFilter(100_000, 0.001)
    f.update(np_.arange(0, 40_000, dtype=np_.uint64))
    f.update(np_.arange(-100, 0, dtype=np_.int64)[::2])
    f.update(array.array("i", [10**6, 10**6 + 1]))
    f.update(memoryview(array.array("Q", [2**64 - 5])))
    assert f.contains_many(np_.arange(0, 40_000, dtype=np_.uint64)).all()
    assert all(k in f for k in [-100, -98, -2, 10**6, 10**6 + 1, 2**64 - 5, -5])
    # Big-endian buffers and float arrays are iterated instead: ints found, floats refused.
    f.update(np_.arange(50_000, 50_010, dtype=">u8"))
    assert 50_005 in f
    with pytest.raises(TypeError, match="not numpy.float64"):
        f.update(np_.array([1.5]))


def test_static_filter_builds_from_a_buffer():
    np_ = numpy()
    keys = np_.arange(0, 100_000, 3, dtype=np_.int64)
    f = bloomery.StaticFilter.build(keys, 0.01)
    assert f.contains_many(keys).all() and f.capacity == len(keys)
    assert bloomery.StaticFilter.build(keys[::2], 0.01).contains_many(keys[::2]).all()


def test_static_build_scratch_is_kept_and_released():
    def on_a_new_thread():
        assert bloomery.StaticFilter.kept_build_scratch_bytes() == 0
        keys = [f"k{i}" for i in range(50_000)]
        first = bloomery.StaticFilter.build(keys, 0.01)
        kept = bloomery.StaticFilter.kept_build_scratch_bytes()
        assert 50_000 * 20 < kept <= 32 << 20
        bloomery.StaticFilter.release_build_scratch()
        assert bloomery.StaticFilter.kept_build_scratch_bytes() == 0
        assert bytes(bloomery.StaticFilter.build(keys, 0.01)) == bytes(first)
        return True

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # a thread of its own: none kept yet
        assert pool.submit(on_a_new_thread).result()


# ------------------------------------------------------------------------------------------------
# Removes.

@pytest.mark.parametrize("cls", sorted(REMOVABLE, key=kind_id), ids=kind_id)
def test_remove_and_discard(cls):
    f = cls(1000, 0.001)
    f.add("a")
    f.add("a")
    f.remove("a")
    assert "a" in f  # inserted twice, removed once
    assert f.discard("a") is True
    assert "a" not in f
    assert f.discard("a") is False
    with pytest.raises(KeyError) as e:
        f.remove("a")
    assert e.value.args == ("a",)


def test_non_removable_kinds_have_no_remove():
    for cls in ALL_KINDS:
        assert hasattr(cls, "remove") == (cls in REMOVABLE)
    assert not hasattr(bloomery.StaticFilter, "add") and not hasattr(bloomery.StaticFilter, "update")


def test_full_cuckoo_filter_raises_filter_full():
    f = bloomery.CuckooFilter(100, 0.01)
    added = 0
    with pytest.raises(bloomery.FilterFull, match="the cuckoo filter is full") as e:
        for i in range(10_000):
            f.add(i)
            added += 1
    assert e.value.added == 0 and added >= 100
    assert all(f.contains_many(range(added)))  # nothing was lost
    with pytest.raises(bloomery.FilterFull):
        f.add_new("another")
    g = bloomery.CuckooFilter(100, 0.01)
    with pytest.raises(bloomery.FilterFull) as e:
        g.update(range(10_000))
    assert e.value.added == added  # the same table fills at the same key
    assert all(g.contains_many(range(added)))
    assert issubclass(bloomery.FilterFull, RuntimeError)


def test_cuckoo_filter_holds_a_bounded_number_of_copies_of_one_key():
    # A key's fingerprint can sit only in its two buckets of 4 slots (and the one-entry stash):
    # copy 10 is refused, and the copies already in stay findable and removable.
    f = bloomery.CuckooFilter(1000, 0.01)
    with pytest.raises(bloomery.FilterFull) as e:
        f.update([""] * 10)
    assert e.value.added == 9
    assert "" in f and b"" in f
    assert all(f.discard("") for _ in range(9))
    assert not f.discard("") and "" not in f


def test_scalable_cuckoo_filter_grows_then_fills():
    f = bloomery.ScalableCuckooFilter(100, 0.01, max_sub_filters=3)
    with pytest.raises(bloomery.FilterFull, match="scalable cuckoo filter is full") as e:
        f.update(range(100_000))
    assert f.info()["sub_filters"] == 3
    assert all(f.contains_many(range(e.value.added)))


# ------------------------------------------------------------------------------------------------
# Set operators.

@pytest.mark.parametrize("cls", sorted(MERGEABLE, key=kind_id), ids=kind_id)
def test_union_in_place_and_not(cls):
    a, b = make_filter(cls, ["a", 1]), make_filter(cls, ["b", 2])
    u = a | b
    assert type(u) is cls and u is not a
    assert all(k in u for k in ["a", "b", 1, 2])
    assert "b" not in a
    same = a
    a |= b
    assert a is same and a == u
    a |= a  # a union with itself keeps its keys
    assert all(k in a for k in ["a", "b", 1, 2])


def test_intersection():
    a = make_filter(bloomery.BloomFilter, ["a", "both"])
    b = make_filter(bloomery.BloomFilter, ["b", "both"])
    i = a & b
    assert "both" in i
    a &= b
    assert a == i


def test_operators_between_kinds_are_type_errors():
    a = bloomery.BloomFilter(100, 0.01)
    b = bloomery.BlockedBloomFilter(100, 0.01)
    with pytest.raises(TypeError, match="unsupported operand"):
        a | b
    with pytest.raises(TypeError, match="unsupported operand"):
        a & "x"
    c = bloomery.CuckooFilter(100, 0.01)
    with pytest.raises(TypeError, match="cuckoo filters have no union"):
        c | c
    with pytest.raises(TypeError, match="counting filters have no intersection"):
        bloomery.CountingBloomFilter(100, 0.01) & bloomery.CountingBloomFilter(100, 0.01)
    s = bloomery.StaticFilter.build(["a"], 0.01)
    with pytest.raises(TypeError, match="build one StaticFilter from both"):
        s | s


# ------------------------------------------------------------------------------------------------
# Statistics, copies, and what is not defined.

@pytest.mark.parametrize("cls", ALL_KINDS, ids=kind_id)
def test_statistics(cls):
    f = make_filter(cls, [f"k{i}" for i in range(100)])
    info = f.info()
    for name in ("kind", "bits", "hashes", "seed", "hash", "size_in_bytes", "bits_per_key",
                 "capacity", "inserted", "approximate_count", "fill_ratio", "target_fpr",
                 "estimated_fpr", "keyed", "over_capacity"):
        assert name in info
    assert info["kind"] == f.kind
    assert info["size_in_bytes"] == f.size_in_bytes > 0
    assert info["approximate_count"] == f.approx_len()
    assert 90 <= f.approx_len() <= 110
    assert info["estimated_fpr"] == f.fpr() < 0.01
    assert f.capacity == info["capacity"] and f.target_fpr == info["target_fpr"]
    assert f.seed == info["seed"] == 0x7972656D6F6F6C62 and not f.keyed
    assert repr(f).startswith(f"<bloomery.{cls.__name__} capacity=")
    assert sys.getsizeof(f) >= f.size_in_bytes
    assert isinstance(f, bloomery.Filter)


def test_len_is_not_defined_but_truth_is():
    f = bloomery.BloomFilter(100, 0.01)
    with pytest.raises(TypeError):
        len(f)
    assert bool(f) is True


def test_filters_are_not_hashable():
    with pytest.raises(TypeError, match="unhashable"):
        hash(bloomery.BloomFilter(100, 0.01))


@pytest.mark.parametrize("cls", ALL_KINDS, ids=kind_id)
def test_copies_are_independent(cls):
    f = make_filter(cls, ["a"])
    for g in (f.copy(), copy.copy(f), copy.deepcopy(f)):
        assert g == f and g is not f and type(g) is cls
        if cls is not bloomery.StaticFilter:
            g.add("only-in-the-copy")
            assert g != f or "only-in-the-copy" in f  # a false positive could make them equal


def test_seeds_and_keys_separate_filters():
    a = bloomery.BloomFilter(1000, 0.01, seed=1)
    b = bloomery.BloomFilter(1000, 0.01, seed=2)
    a.add("x")
    b.add("x")
    assert a.seed == 1 and a != b
    with pytest.raises(ValueError, match=r"cannot compute the union of bloom filters: seed differs \(1 vs 2\)"):
        a | b
    k = bloomery.BloomFilter(1000, 0.01, keyed=True)
    assert k.keyed and k.seed is None and k.info()["hash"] == "xxh3-128-keyed"
    assert "keyed" in repr(k)


def test_version_is_the_librarys():
    assert bloomery.__version__.count(".") == 2
    assert all(part.isdigit() for part in bloomery.__version__.split("."))


def test_every_public_name_has_a_docstring():
    for name in bloomery.__all__:
        obj = getattr(bloomery, name)
        if name in ("__version__", "Key"):
            continue
        assert obj.__doc__ and len(obj.__doc__) > 20, name
        if isinstance(obj, type):
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr not in ("__contains__", "__init__", "__or__",
                                                         "__ior__", "__and__", "__iand__",
                                                         "__bytes__", "__eq__", "__reduce__"):
                    continue
                assert getattr(member, "__doc__", None), f"{name}.{attr}"
