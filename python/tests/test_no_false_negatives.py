"""No false negatives, for every kind and key type, on random keys (hypothesis): after add and
update, after a union, a save and load, loads(bytes(f)), pickling, and through the mapped view."""

import collections
import copy
import os
import pickle
import tempfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bloomery
from conftest import INSERTABLE, MERGEABLE, INTERSECTABLE, REMOVABLE, kind_id, make_filter

byte_keys = st.one_of(
    st.text(max_size=40),
    st.binary(max_size=40),
    st.binary(max_size=40).map(bytearray),
    st.binary(max_size=40).map(memoryview),
)
int_keys = st.integers(min_value=-(2**63), max_value=2**64 - 1)
mixed_keys = st.lists(st.one_of(byte_keys, int_keys), max_size=150)


def every_form(f, tmp):
    """The filter itself and every copy of it a user can make, each with a name."""
    path = os.path.join(tmp, "f.filter")
    f.save(path)
    yield "filter", f
    yield "load", bloomery.load(path)
    yield "loads", bloomery.loads(bytes(f))
    yield "pickle", pickle.loads(pickle.dumps(f))
    yield "deepcopy", copy.deepcopy(f)
    with bloomery.open(path) as mapped:
        yield "mapped", mapped


def assert_all_present(f, keys, where):
    missing = [k for k in keys if k not in f]
    assert not missing, f"{where}: false negatives {missing[:5]!r}"
    assert all(f.contains_many(keys)), f"{where}: contains_many gave a false negative"


@pytest.mark.parametrize("cls,options", INSERTABLE, ids=[kind_id(c) for c, _ in INSERTABLE])
@given(keys=mixed_keys, split=st.integers(min_value=0, max_value=150))
def test_inserted_keys_are_always_found(cls, options, keys, split):
    f = cls(1000, 0.01, **options)
    keys = _fits(cls, keys)
    head, tail = keys[:split], keys[split:]
    for k in head:
        f.add(k)
    f.update(iter(tail))  # a generator: the batched path
    with tempfile.TemporaryDirectory() as tmp:
        for where, form in every_form(f, tmp):
            assert_all_present(form, keys, f"{cls.__name__} {where}")
            if where != "mapped":
                assert form == f


@pytest.mark.parametrize("cls", sorted(MERGEABLE, key=kind_id), ids=kind_id)
@given(a=mixed_keys, b=mixed_keys)
def test_union_holds_both_key_sets(cls, a, b):
    fa, fb = make_filter(cls, a), make_filter(cls, b)
    union = fa | fb
    assert_all_present(union, a + b, f"{cls.__name__} a | b")
    fa |= fb
    assert fa == union
    assert_all_present(fa, a + b, f"{cls.__name__} a |= b")
    if cls in INTERSECTABLE:
        in_b = {_hashable(k) for k in b}
        common = [k for k in a if _hashable(k) in in_b]
        both = make_filter(cls, a) & make_filter(cls, b)
        assert_all_present(both, common, f"{cls.__name__} a & b")


def _hashable(key):
    """A key's identity for the tests: its bytes, or its 64-bit integer value."""
    if isinstance(key, str):
        return key.encode()
    if isinstance(key, (bytes, bytearray, memoryview)):
        return bytes(key)
    return ("int", key % 2**64)


def _fits(cls, keys):
    """The keys, with at most 4 copies of each for a (fixed-size) CuckooFilter: one key's copies
    fit only in its two buckets of 4 slots and the stash, so the 10th is FilterFull, rightly
    (test_api.py checks that bound)."""
    if cls is not bloomery.CuckooFilter:
        return keys
    copies = collections.Counter()
    kept = []
    for k in keys:
        copies[_hashable(k)] += 1
        if copies[_hashable(k)] <= 4:
            kept.append(k)
    return kept


@pytest.mark.parametrize("cls", sorted(REMOVABLE, key=kind_id), ids=kind_id)
@given(keys=mixed_keys, data=st.data())
def test_removes_leave_the_other_keys(cls, keys, data):
    f = cls(1000, 0.01)
    keys = _fits(cls, keys)
    f.update(keys)
    gone = data.draw(st.lists(st.sampled_from(keys), unique_by=_hashable) if keys else st.just([]))
    for k in gone:
        f.remove(k)
    # A key inserted n times needs n removes; the keys removed once fewer times than inserted stay.
    counts = {}
    for k in keys:
        counts[_hashable(k)] = counts.get(_hashable(k), 0) + 1
    for k in gone:
        counts[_hashable(k)] -= 1
    kept = [k for k in keys if counts[_hashable(k)] > 0]
    assert_all_present(f, kept, f"{cls.__name__} after removes")


@given(keys=st.one_of(st.lists(byte_keys, max_size=150), st.lists(int_keys, max_size=150)))
def test_static_filter_holds_its_keys(keys):
    f = bloomery.StaticFilter.build(keys, 0.01)
    with tempfile.TemporaryDirectory() as tmp:
        for where, form in every_form(f, tmp):
            assert_all_present(form, keys, f"StaticFilter {where}")
