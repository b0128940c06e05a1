"""Shared fixtures of the bindings' tests: every kind, built the same way, and the CLI's path."""

import os

import pytest
from hypothesis import HealthCheck, settings

import bloomery

# Modest example counts and no deadline keep the whole run under ~30 s on a shared 2-core VM;
# no example database, so a run writes nothing into the tree.
settings.register_profile(
    "bloomery",
    max_examples=50,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("bloomery")

# Every kind that takes inserts, as (class, keyword options) for a filter of (capacity, fpr).
INSERTABLE = [
    (bloomery.BloomFilter, {}),
    (bloomery.BlockedBloomFilter, {}),
    (bloomery.CountingBloomFilter, {}),
    (bloomery.CuckooFilter, {}),
    (bloomery.ScalableBloomFilter, {}),
    (bloomery.ScalableCuckooFilter, {}),
]
ALL_KINDS = [cls for cls, _ in INSERTABLE] + [bloomery.StaticFilter]
MERGEABLE = {bloomery.BloomFilter, bloomery.BlockedBloomFilter, bloomery.CountingBloomFilter,
             bloomery.ScalableBloomFilter}
INTERSECTABLE = {bloomery.BloomFilter, bloomery.BlockedBloomFilter}
REMOVABLE = {bloomery.CountingBloomFilter, bloomery.CuckooFilter, bloomery.ScalableCuckooFilter}

# The CLI's name of each class's kind.
KIND_NAMES = {
    bloomery.BloomFilter: "bloom",
    bloomery.BlockedBloomFilter: "blocked",
    bloomery.CountingBloomFilter: "counting",
    bloomery.CuckooFilter: "cuckoo",
    bloomery.ScalableBloomFilter: "scalable",
    bloomery.StaticFilter: "static",
    bloomery.ScalableCuckooFilter: "scalable-cuckoo",
}


def make_filter(cls, keys, capacity=1000, fpr=0.01, **options):
    """A filter of class `cls` holding `keys` (a static filter is built from them)."""
    if cls is bloomery.StaticFilter:
        return cls.build(keys, fpr, **options)
    f = cls(capacity, fpr, **options)
    f.update(keys)
    return f


def kind_id(cls):
    return cls.__name__


@pytest.fixture
def cli():
    """The bloomery CLI built beside the bindings (CMake passes its path in BLOOMERY_CLI)."""
    path = os.environ.get("BLOOMERY_CLI")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("the bloomery CLI is not built (BLOOMERY_CLI unset): interop not tested")
    return path
