"""ParquetBloomFilter, parquet_bloom_filters and parquet_columns: Parquet's split-block Bloom
filters from Python. No DuckDB here: the golden files of tests/data/parquet (written by DuckDB
1.5.6) and their expected.json carry DuckDB's bitsets and answers, and a pure-Python XXH64 and
split-block insert, written from the Parquet specification, check each type's encoding. The
comparison with a running DuckDB lives in tests/parquet."""

import hashlib
import json
import math
import pathlib
import random
import struct
import threading

import pytest

import bloomery

GOLDEN_DIR = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "parquet"
GOLDEN = json.loads((GOLDEN_DIR / "expected.json").read_text(encoding="utf-8"))
TYPES = ["BYTE_ARRAY", "INT32", "INT64", "FLOAT", "DOUBLE"]
KEYLESS = ["BOOLEAN", "INT96", "FIXED_LEN_BYTE_ARRAY"]


def py_key(physical, text):
    """A key of expected.json (text) as the bindings take it."""
    if physical == "BYTE_ARRAY":
        return text
    if physical in ("INT32", "INT64"):
        return int(text)
    return float(text)  # "nan", "inf", "-0.0" included


def golden_columns():
    for entry in GOLDEN["files"]:
        for column in entry["columns"]:
            yield pytest.param(entry, column, id=f"{entry['file']}:{column['path']}")


# ------------------------------------------------------------------------------------------------
# The specification in Python: XXH64 (seed 0) of a value's plain encoding, and the bits a hash
# sets in a split-block filter.

MASK = 2**64 - 1
P1, P2, P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
P4, P5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5
SALT = [0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947,
        0x5C6BFB31]


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & MASK


def xxh64_round(acc, lane):
    return rotl((acc + lane * P2) & MASK, 31) * P1 & MASK


def xxh64(data):
    n, i = len(data), 0
    lane = lambda at, width: int.from_bytes(data[at:at + width], "little")
    if n >= 32:
        v = [(P1 + P2) & MASK, P2, 0, (-P1) & MASK]
        while i + 32 <= n:
            v = [xxh64_round(v[j], lane(i + 8 * j, 8)) for j in range(4)]
            i += 32
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & MASK
        for x in v:
            h = ((h ^ xxh64_round(0, x)) * P1 + P4) & MASK
    else:
        h = P5
    h = (h + n) & MASK
    while i + 8 <= n:
        h = (rotl(h ^ xxh64_round(0, lane(i, 8)), 27) * P1 + P4) & MASK
        i += 8
    if i + 4 <= n:
        h = (rotl(h ^ (lane(i, 4) * P1 & MASK), 23) * P2 + P3) & MASK
        i += 4
    while i < n:
        h = rotl(h ^ (data[i] * P5 & MASK), 11) * P1 & MASK
        i += 1
    h = (h ^ (h >> 33)) * P2 & MASK
    h = (h ^ (h >> 29)) * P3 & MASK
    return h ^ (h >> 32)


def plain(physical, value):
    """Parquet's plain encoding of a value (struct rounds a FLOAT to the nearest float32)."""
    if physical == "BYTE_ARRAY":
        return value.encode() if isinstance(value, str) else bytes(value)
    return struct.pack({"INT32": "<i", "INT64": "<q", "FLOAT": "<f", "DOUBLE": "<d"}[physical],
                       value)


def spec_insert(bitset, h):
    """Sets the bits of hash h in a bitset (bytes as stored: 32-bit words little-endian)."""
    block = ((h >> 32) * (len(bitset) // 32)) >> 32
    for i, salt in enumerate(SALT):
        bit = ((h & 0xFFFFFFFF) * salt & 0xFFFFFFFF) >> 27
        bitset[32 * block + 4 * i + bit // 8] |= 1 << (bit % 8)


def spec_bitset(physical, num_bytes, values):
    bitset = bytearray(num_bytes)
    for v in values:
        spec_insert(bitset, xxh64(plain(physical, v)))
    return bytes(bitset)


def test_python_xxh64_has_the_reference_values():
    assert xxh64(b"") == 0xEF46DB3751D8E999
    assert xxh64(b"a") == 0xD24EC4F1A98C6E5B
    assert xxh64(b"abc") == 0x44BC2CF5AD770999


# ------------------------------------------------------------------------------------------------
# The golden files: DuckDB's filters read, rebuilt and probed.

@pytest.mark.parametrize("entry,column", golden_columns())
def test_golden_filters_read_rebuilt_and_probed(entry, column):
    path = GOLDEN_DIR / entry["file"]
    physical = column["physical_type"]
    filters = bloomery.parquet_bloom_filters(str(path), column["path"])
    assert isinstance(filters, list) and len(filters) == len(entry["row_groups"])
    data = path.read_bytes()
    for chunk, f in zip(column["chunks"], filters):
        g = chunk["row_group"]
        if chunk["bloom_filter_offset"] is None:
            assert f is None, g
            assert not any(p["excludes"][g] for p in column["probes"])
            continue
        assert isinstance(f, bloomery.ParquetBloomFilter)
        assert f.type == physical and f.num_bytes == chunk["num_bytes"]
        assert f.blocks == chunk["num_bytes"] // 32
        bits = f.bitset()
        assert hashlib.sha256(bits).hexdigest() == chunk["bitset_sha256"], g
        start = chunk["bloom_filter_offset"] + chunk["header_bytes"]
        assert bits == data[start:start + chunk["num_bytes"]]
        assert chunk["header_bytes"] + chunk["num_bytes"] == chunk["bloom_filter_length"]
        # Rebuilt from the chunk's values: the writer's bitset, byte for byte.
        values = [py_key(physical, v) for v in chunk["distinct"]]
        built = bloomery.ParquetBloomFilter(chunk["num_bytes"], physical)
        assert built.bitset() == bytes(chunk["num_bytes"])
        for v in values:
            built.add(v)
        assert built.bitset() == bits and built == f, g
        assert all(v in f for v in values)
        # DuckDB's answer for every probe: absent exactly where it excludes the row group.
        wrong = [p["key"] for p in column["probes"]
                 if (py_key(physical, p["key"]) in f) == p["excludes"][g]]
        assert not wrong, f"row group {g}: {len(wrong)} answers differ from DuckDB's: {wrong[:5]}"


@pytest.mark.parametrize("entry,column", golden_columns())
def test_golden_bitsets_follow_the_specification(entry, column):
    physical = column["physical_type"]
    for chunk in column["chunks"]:
        if chunk["bloom_filter_offset"] is None:
            continue
        values = [py_key(physical, v) for v in chunk["distinct"]]
        expected = spec_bitset(physical, chunk["num_bytes"], values)
        assert hashlib.sha256(expected).hexdigest() == chunk["bitset_sha256"]


def test_golden_probes_cover_the_special_floats():
    f_column = next(c for c in GOLDEN["files"][0]["columns"] if c["path"] == "f")
    keys = {p["key"] for p in f_column["probes"]}
    assert {"0.0", "-0.0", "nan", "inf", "-inf"} <= keys
    filters = bloomery.parquet_bloom_filters(GOLDEN_DIR / "golden.parquet", "f")
    # 0.0 is stored, -0.0 is another key (its bits differ), and NaN was never stored.
    zero = next(p for p in f_column["probes"] if p["key"] == "0.0")
    negative_zero = next(p for p in f_column["probes"] if p["key"] == "-0.0")
    assert [0.0 in f for f in filters] == [not e for e in zero["excludes"]]
    assert [-0.0 in f for f in filters] == [not e for e in negative_zero["excludes"]]
    nan = next(p for p in f_column["probes"] if p["key"] == "nan")
    assert [math.nan in f for f in filters] == [not e for e in nan["excludes"]] == [False] * 3


def test_parquet_columns_reports_the_footer():
    for entry in GOLDEN["files"]:
        got = bloomery.parquet_columns(GOLDEN_DIR / entry["file"])
        want = [(c["path"], c["physical_type"],
                 [ch["bloom_filter_offset"] is not None for ch in c["chunks"]])
                for c in entry["columns"]]
        assert got == want


def test_a_chunk_without_a_filter_is_none():
    filters = bloomery.parquet_bloom_filters(GOLDEN_DIR / "golden.parquet", "part")
    assert filters[2] is None and all(f is not None for f in filters[:2])
    assert repr(filters[0]) == "ParquetBloomFilter(type='INT32', num_bytes=32)"


# ------------------------------------------------------------------------------------------------
# Keys: each type's encoding, against the specification in Python.

SPEC_KEYS = {
    "BYTE_ARRAY": ["", "a", "café", "東京", "😀", "x" * 40, b"\x00\xff", bytearray(b"raw")],
    "INT32": [0, 1, -1, 2**31 - 1, -2**31, 12345],
    "INT64": [0, 1, -1, 2**63 - 1, -2**63, 2**40 + 7],
    "FLOAT": [0.0, -0.0, 0.1, 1 / 3, 1.5, 1e-45, 1e-46, 3.4028235e38, -3.4028235e38,
              math.inf, -math.inf, math.nan, 16777217.0, 5e-324],
    "DOUBLE": [0.0, -0.0, 0.1, 1 / 3, 5e-324, 1.7976931348623157e308, math.inf, -math.inf,
               math.nan, -123.25],
}


@pytest.mark.parametrize("physical", TYPES)
def test_each_key_sets_the_specifications_bits(physical):
    for key in SPEC_KEYS[physical]:
        for num_bytes in (32, 96, 1024):
            f = bloomery.ParquetBloomFilter(num_bytes, physical)
            assert f.add(key) is True
            assert f.bitset() == spec_bitset(physical, num_bytes, [key]), (key, num_bytes)
            assert key in f
            assert f.add(key) is False  # every bit set already


def test_float_keys_are_rounded_to_the_nearest_float32():
    as_float32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
    for x in (0.1, 1 / 3, 2.0**-149 * 0.75, 16777217.0, 3.4028235e38, -1e-40):
        a = bloomery.ParquetBloomFilter(64, "FLOAT")
        b = bloomery.ParquetBloomFilter(64, "FLOAT")
        a.add(x)
        b.add(as_float32(x))  # exactly representable: no rounding
        assert a == b, x
        assert as_float32(x) in a and x in b
    # A FLOAT column's 0.1 is the float32 0.100000001490116..., hashed as its 4 bytes.
    f = bloomery.ParquetBloomFilter(64, "FLOAT")
    f.add(0.1)
    assert f.bitset() == spec_bitset("FLOAT", 64, [0.1])
    assert spec_bitset("FLOAT", 64, [0.1]) == spec_bitset("FLOAT", 64, [as_float32(0.1)])
    assert f != bloomery.ParquetBloomFilter.from_bitset(spec_bitset("DOUBLE", 64, [0.1]), "FLOAT")


def test_float_overflow_is_refused_as_struct_refuses_it():
    largest = 2.0**128 - 2.0**104  # the largest float32
    halfway = 2.0**128 - 2.0**103  # from here on a double rounds to infinity
    f = bloomery.ParquetBloomFilter(32, "FLOAT")
    for x in (largest, math.nextafter(halfway, 0.0), -math.nextafter(halfway, 0.0)):
        f.add(x)
        assert struct.pack("<f", x) in (struct.pack("<f", largest), struct.pack("<f", -largest))
    for x in (halfway, -halfway, 1e39, -1e300, 2**200):
        with pytest.raises(OverflowError):
            struct.pack("<f", float(x))
        with pytest.raises(OverflowError, match="FLOAT"):
            f.add(x)
        with pytest.raises(OverflowError):
            x in f


def test_int_keys_of_float_columns_are_float_of_them():
    for physical in ("FLOAT", "DOUBLE"):
        for value in (0, 7, -3, 2**53 + 1, 2**60, 16777217):
            a = bloomery.ParquetBloomFilter(64, physical)
            b = bloomery.ParquetBloomFilter(64, physical)
            a.add(value)
            b.add(float(value))
            assert a == b, (physical, value)
        with pytest.raises(OverflowError, match=physical):
            bloomery.ParquetBloomFilter(64, physical).add(2**1024)


def test_byte_array_keys():
    f = bloomery.ParquetBloomFilter(256)
    assert f.type == "BYTE_ARRAY"
    f.add("café")
    assert "café".encode() in f and bytearray("café".encode()) in f
    assert memoryview(b"xcxaxfx\xc3x\xa9")[1::2] in f  # a non-contiguous view: bytes(view)
    g = bloomery.ParquetBloomFilter(256)
    g.add(memoryview(b"caf\xc3\xa9"))
    assert f == g
    with pytest.raises(UnicodeEncodeError):
        f.add("\ud800")
    with pytest.raises(UnicodeEncodeError):
        "a\udcff" in f


@pytest.mark.parametrize("physical", ["INT32", "INT64"])
def test_integer_ranges(physical):
    bits = 32 if physical == "INT32" else 64
    f = bloomery.ParquetBloomFilter(32, physical)
    for ok in (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1, 0):
        f.add(ok)
        assert ok in f
    for bad in (2 ** (bits - 1), -(2 ** (bits - 1)) - 1, 2**64, -(2**300)):
        with pytest.raises(OverflowError, match=physical):
            f.add(bad)
        with pytest.raises(OverflowError, match=physical):
            bad in f


class Index:
    """An object with __index__: an int key (as NumPy's integer scalars are)."""

    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


def test_index_objects_are_ints():
    f = bloomery.ParquetBloomFilter(64, "INT64")
    f.add(Index(42))
    assert 42 in f and Index(42) in f


WRONG_KEYS = {
    "BYTE_ARRAY": [1, 1.5, None, ["a"], object()],
    "INT32": ["1", b"1", 1.0, None],
    "INT64": ["1", 2.0, bytearray(b"1"), None],
    "FLOAT": ["0.1", b"\x00\x00\x00\x00", None, 1j],
    "DOUBLE": ["0.1", memoryview(b"12345678"), None, [1.0]],
}


@pytest.mark.parametrize("physical", TYPES)
def test_wrong_key_types_are_type_errors_naming_the_type(physical):
    f = bloomery.ParquetBloomFilter(32, physical)
    for key in WRONG_KEYS[physical] + [True, False]:
        with pytest.raises(TypeError, match=f"Parquet {physical} column") as e:
            f.add(key)
        if isinstance(key, bool):
            assert "True and False are not keys" in str(e.value)
        with pytest.raises(TypeError, match=physical):
            key in f
    assert f.bitset() == bytes(32)


# ------------------------------------------------------------------------------------------------
# The class: construction, from_bitset, equality, errors.

def test_construction_and_properties():
    f = bloomery.ParquetBloomFilter(1024, "INT64")
    assert (f.num_bytes, f.blocks, f.type) == (1024, 32, "INT64")
    assert repr(f) == "ParquetBloomFilter(type='INT64', num_bytes=1024)"
    assert f.bitset() == bytes(1024)
    assert bloomery.ParquetBloomFilter(num_bytes=96, type="DOUBLE").blocks == 3
    assert bloomery.ParquetBloomFilter(Index(64)).num_bytes == 64
    assert isinstance(f, bloomery.ParquetBloomFilter)
    assert not isinstance(f, bloomery.Filter)


@pytest.mark.parametrize("num_bytes", [0, 1, 31, 33, 48, -32, 128 * 2**20 + 32, 2**32, 2**64,
                                       2**100])
def test_bad_sizes_are_value_errors(num_bytes):
    with pytest.raises(ValueError, match="multiple of 32 bytes from 32 to 128 MiB"):
        bloomery.ParquetBloomFilter(num_bytes)


def test_bad_size_types_are_type_errors():
    for num_bytes in (32.0, "32", None, True):
        with pytest.raises(TypeError, match="num_bytes must be an int"):
            bloomery.ParquetBloomFilter(num_bytes)


@pytest.mark.parametrize("name", ["int64", "STRING", "", "BYTE_ARRAY ", "\ud800"] + KEYLESS)
def test_bad_types_are_value_errors_listing_the_types(name):
    with pytest.raises(ValueError, match="BYTE_ARRAY, INT32, INT64, FLOAT or DOUBLE") as e:
        bloomery.ParquetBloomFilter(64, name)
    if name in KEYLESS:
        assert name in str(e.value)
    with pytest.raises(ValueError, match="BYTE_ARRAY, INT32, INT64, FLOAT or DOUBLE"):
        bloomery.ParquetBloomFilter.from_bitset(bytes(64), name)


def test_type_must_be_a_str():
    with pytest.raises(TypeError, match="type must be a str"):
        bloomery.ParquetBloomFilter(64, 6)


def test_from_bitset_round_trips():
    for physical in TYPES:
        f = bloomery.ParquetBloomFilter(128, physical)
        for key in SPEC_KEYS[physical]:
            f.add(key)
        for data in (f.bitset(), bytearray(f.bitset()), memoryview(f.bitset())):
            g = bloomery.ParquetBloomFilter.from_bitset(data, physical)
            assert g == f and g.bitset() == f.bitset() and g.type == physical
    assert bloomery.ParquetBloomFilter.from_bitset(bytes(32)).type == "BYTE_ARRAY"


@pytest.mark.parametrize("size", [0, 1, 31, 33, 100])
def test_from_bitset_of_a_bad_size_is_a_format_error(size):
    with pytest.raises(bloomery.FormatError, match="multiple of 32"):
        bloomery.ParquetBloomFilter.from_bitset(bytes(size))


def test_from_bitset_needs_bytes():
    with pytest.raises(TypeError):
        bloomery.ParquetBloomFilter.from_bitset("0" * 32)


def test_equality():
    a = bloomery.ParquetBloomFilter(64, "INT32")
    b = bloomery.ParquetBloomFilter(64, "INT32")
    assert a == b and a == a
    a.add(1)
    assert a != b
    b.add(1)
    assert a == b
    assert bloomery.ParquetBloomFilter(64, "INT32") != bloomery.ParquetBloomFilter(64, "INT64")
    assert bloomery.ParquetBloomFilter(64) != bloomery.ParquetBloomFilter(96)
    assert a != a.bitset() and a != 1
    with pytest.raises(TypeError):
        hash(a)


def random_keys(physical, rng, n):
    if physical == "BYTE_ARRAY":
        return [rng.randbytes(rng.randrange(0, 40)) if i % 2 else
                "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0xA0, 0xD7FF),
                                        rng.randrange(0xE000, 0x10FFFF)]))
                        for _ in range(rng.randrange(0, 12)))
                for i in range(n)]
    if physical in ("INT32", "INT64"):
        bits = 32 if physical == "INT32" else 64
        return [rng.randrange(-(2 ** (bits - 1)), 2 ** (bits - 1)) for _ in range(n)]
    if physical == "FLOAT":
        return [struct.unpack("<f", struct.pack("<I", rng.getrandbits(32)))[0] if i % 2 else
                rng.uniform(-1e6, 1e6) for i in range(n)]
    return [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] if i % 2 else
            rng.uniform(-1e12, 1e12) for i in range(n)]


@pytest.mark.parametrize("physical", TYPES)
def test_no_false_negatives(physical):
    rng = random.Random(f"bloomery-parquet-{physical}")
    keys = random_keys(physical, rng, 5000)
    f = bloomery.ParquetBloomFilter(8192, physical)
    for key in keys:
        f.add(key)
    missing = [key for key in keys if key not in f]
    assert not missing, missing[:5]
    # About 8 bits per key: most absent keys are ruled out.
    others = random_keys(physical, random.Random(f"other-{physical}"), 2000)
    assert sum(k in f for k in others) < 400


def test_threads_share_a_filter():
    f = bloomery.ParquetBloomFilter(4096, "INT64")
    errors = []

    def writer(first):
        try:
            for k in range(first, first + 2000):
                f.add(k)
                assert k in f
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(i * 10_000,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert all(k in f for i in range(4) for k in range(i * 10_000, i * 10_000 + 2000))
    built = bloomery.ParquetBloomFilter(4096, "INT64")
    for i in range(4):
        for k in range(i * 10_000, i * 10_000 + 2000):
            built.add(k)
    assert built == f


# ------------------------------------------------------------------------------------------------
# Files: errors.

def test_a_missing_column_is_a_value_error_listing_the_columns():
    with pytest.raises(ValueError, match=r"no column 'nope' in .*golden\.parquet; its columns are: "
                                         r"s, i32, i64, d, f, part$"):
        bloomery.parquet_bloom_filters(GOLDEN_DIR / "golden.parquet", "nope")
    with pytest.raises(ValueError, match="no column 'S'"):
        bloomery.parquet_bloom_filters(GOLDEN_DIR / "golden.parquet", "S")
    with pytest.raises(TypeError, match="column must be a str"):
        bloomery.parquet_bloom_filters(GOLDEN_DIR / "golden.parquet", 1)


def test_missing_files_are_os_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        bloomery.parquet_bloom_filters(tmp_path / "no.parquet", "s")
    with pytest.raises(FileNotFoundError):
        bloomery.parquet_columns(str(tmp_path / "no.parquet"))
    with pytest.raises(OSError):
        bloomery.parquet_bloom_filters(tmp_path, "s")


def retyped(data, column, new_type):
    """The file with a top-level column's physical type rewritten in every row group's
    ColumnMetaData, and how many chunks were. In Thrift's compact encoding a chunk's metadata
    starts with field 1 (0x15, the type's zigzag varint), field 2 (0x19, encodings: a list of
    small i32 enums) and field 3 (0x19, path_in_schema: a list of one string, 0x18)."""
    code = {"BOOLEAN": 0, "INT32": 1, "INT64": 2, "INT96": 3, "FLOAT": 4, "DOUBLE": 5,
            "BYTE_ARRAY": 6, "FIXED_LEN_BYTE_ARRAY": 7}
    path = b"\x19\x18" + bytes([len(column)]) + column.encode()
    start = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    out, patched = bytearray(data), 0
    for at in range(start, len(data) - 8):
        if data[at] != 0x15 or data[at + 1] >= 0x10 or data[at + 2] != 0x19:
            continue
        count = data[at + 3] >> 4
        if data[at + 3] & 0x0F != 5 or not 0 < count < 15:
            continue
        if any(b >= 0x80 for b in data[at + 4:at + 4 + count]):
            continue
        if data[at + 4 + count:at + 4 + count + len(path)] == path:
            out[at + 1] = 2 * code[new_type]
            patched += 1
    return bytes(out), patched


@pytest.mark.parametrize("new_type", KEYLESS)
def test_columns_without_keys_are_value_errors(new_type, tmp_path):
    data = (GOLDEN_DIR / "golden.parquet").read_bytes()
    patched, count = retyped(data, "i32", new_type)
    assert count == 3  # one chunk per row group
    path = tmp_path / f"{new_type}.parquet"
    path.write_bytes(patched)
    columns = bloomery.parquet_columns(path)
    assert columns[1][:2] == ("i32", new_type)
    with pytest.raises(ValueError, match=f"column 'i32' of .* is {new_type}; bloomery reads the "
                                         "Bloom filters of BYTE_ARRAY, INT32, INT64, FLOAT and "
                                         "DOUBLE columns"):
        bloomery.parquet_bloom_filters(path, "i32")
    assert len(bloomery.parquet_bloom_filters(path, "i64")) == 3  # the others still read


def varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def with_filter_fields(data, chunk, offset=None, length=None):
    """The file with a chunk's bloom_filter_offset (field 14, i64) or bloom_filter_length
    (field 15, i32) rewritten in its footer, each a zigzag varint of the same size as before."""
    old = (varint(2 * chunk["bloom_filter_offset"]) + b"\x15" +
           varint(2 * chunk["bloom_filter_length"]))
    new = (varint(2 * (chunk["bloom_filter_offset"] if offset is None else offset)) + b"\x15" +
           varint(2 * (chunk["bloom_filter_length"] if length is None else length)))
    assert len(new) == len(old) and data.count(old) == 1
    return data.replace(old, new)


def damaged_copies():
    data = (GOLDEN_DIR / "golden.parquet").read_bytes()
    chunk = GOLDEN["files"][0]["columns"][0]["chunks"][0]  # s, row group 0
    length = int.from_bytes(data[-8:-4], "little")
    start = len(data) - 8 - length
    header = chunk["bloom_filter_offset"]
    return {
        "empty": b"",
        "magic-only": b"PAR1PAR1",
        "truncated-half": data[:len(data) // 2],
        "truncated-tail": data[:-3],
        "truncated-one": data[:-1],
        "bad-magic-head": b"PARX" + data[4:],
        "bad-magic-tail": data[:-4] + b"PARX",
        "footer-length-too-large": data[:-8] + (len(data) - 11).to_bytes(4, "little") + b"PAR1",
        "footer-length-huge": data[:-8] + b"\xff\xff\xff\xff" + b"PAR1",
        "zeroed-footer": data[:start] + bytes(length) + data[start + length:],
        "garbage-footer": data[:start] + b"\xff" * length + data[start + length:],
        "half-footer": data[:start] + data[start:start + length // 2] + bytes(length - length // 2)
        + data[start + length:],
        "filter-offset-past-eof": with_filter_fields(data, chunk, offset=len(data) + 100),
        "filter-length-mismatch": with_filter_fields(data, chunk,
                                                     length=chunk["bloom_filter_length"] + 2),
        "filter-header-zeroed": data[:header] + bytes(chunk["header_bytes"])
        + data[header + chunk["header_bytes"]:],
    }


@pytest.mark.parametrize("kind", list(damaged_copies()))
def test_damaged_files_are_format_errors(kind, tmp_path):
    path = tmp_path / f"{kind}.parquet"
    path.write_bytes(damaged_copies()[kind])
    with pytest.raises(bloomery.FormatError, match="Parquet"):
        bloomery.parquet_bloom_filters(path, "s")
    if not kind.startswith("filter-"):
        with pytest.raises(bloomery.FormatError, match="Parquet"):
            bloomery.parquet_columns(path)


def test_damage_to_one_filter_spares_the_other_columns(tmp_path):
    path = tmp_path / "one.parquet"
    path.write_bytes(damaged_copies()["filter-length-mismatch"])
    assert len(bloomery.parquet_bloom_filters(path, "i64")) == 3


def test_docstrings_name_the_behaviour():
    assert "split-block" in bloomery.ParquetBloomFilter.__doc__
    assert "row group" in bloomery.parquet_bloom_filters.__doc__
    assert "has_filter" in bloomery.parquet_columns.__doc__
