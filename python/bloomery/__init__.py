"""bloomery: approximate membership filters, the Bloom filter family.

A filter answers "is this key in the set?" with "certainly not" or "possibly", in a few bits per
key: ``key in f`` is False only for keys never added (no false negatives, ever), and True for an
absent key at about the filter's false-positive rate.

    import bloomery

    seen = bloomery.BloomFilter(1_000_000, 0.01)     # capacity, target FPR: 1.2 MB
    seen.update(urls)                                # batched in C++, GIL released
    if seen.add_new("https://example.com/"):         # True when the key was new
        ...
    seen.save("seen.bloom")                          # the CLI reads it: bloomery query ...
    g = bloomery.load("seen.bloom")                  # the right class for the file's kind

One class per kind: BloomFilter, BlockedBloomFilter, CountingBloomFilter, CuckooFilter,
ScalableBloomFilter, ScalableCuckooFilter (built from capacity and fpr) and StaticFilter
(StaticFilter.build(keys, fpr)). Keys are str (UTF-8), bytes-like, or int in [-2**63, 2**64).
GuavaBloomFilter is Guava's BloomFilter, bit-exact with Guava 31.1 (its streams and hashing), and
guava_shape gives the size Guava picks. ParquetBloomFilter is Parquet's split-block Bloom filter,
bit-exact with the format; parquet_bloom_filters reads a column's filters from a Parquet file, one
per row group, and parquet_columns lists its columns. docs/python.md in the repository has the
whole API.
"""

from typing import Union as _Union

from ._bloomery import (
    Filter,
    FilterFull,
    FormatError,
    GuavaBloomFilter,
    MappedFilter,
    ParquetBloomFilter,
    __version__,
    _kind_classes,
    guava_shape,
    load,
    loads,
    open,
    parquet_bloom_filters,
    parquet_columns,
)

# One class per kind of the library's kind table (BloomFilter, ..., StaticFilter), by its name.
globals().update({cls.__name__: cls for cls in _kind_classes.values()})


Key = _Union[str, bytes, bytearray, memoryview, int]
"""A key: a str (its UTF-8 bytes), bytes-like (its bytes) or an int in [-2**63, 2**64)."""


def _from_bytes(data):
    """Rebuilds a pickled filter: pickle stores a filter as ``(_from_bytes, (bytes(f),))``.

    A Python function, because pickle cannot name the extension's own functions.
    """
    return loads(data)


__all__ = sorted(
    [cls.__name__ for cls in _kind_classes.values()]
    + ["Filter", "FilterFull", "FormatError", "GuavaBloomFilter", "Key", "MappedFilter",
       "ParquetBloomFilter", "__version__", "guava_shape", "load", "loads", "open",
       "parquet_bloom_filters", "parquet_columns"])
