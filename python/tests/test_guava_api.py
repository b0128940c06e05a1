"""GuavaBloomFilter and guava_shape: Guava 31.1's BloomFilter from Python. No Java here: the
bit-exactness checks rest on murmur3_128 values real Guava 31.1 computed, from which the bits
each strategy sets follow; the comparison with a running Guava lives in tests/guava."""

import math
import threading

import pytest

import bloomery

# Hashing.murmur3_128().hashBytes(...).toString() in Guava 31.1: h1's bytes little-endian, then
# h2's.
MURMUR3_128 = {
    b"": "00000000000000000000000000000000",
    b"a": "897859f6655555855a890e51483ab5e6",
    b"hello": "029bbd41b3a7d8cb191dae486a901e5b",
}

FUNNELS = ["string", "chars", "long", "int"]


def halves(key):
    raw = bytes.fromhex(MURMUR3_128[key])
    return int.from_bytes(raw[:8], "little"), int.from_bytes(raw[8:], "little")


def mitz64_bits(key, hashes, bits):
    """The bits MURMUR128_MITZ_64 sets for the funneled bytes `key`."""
    h1, h2 = halves(key)
    combined, out = h1, set()
    for _ in range(hashes):
        out.add((combined & (2**63 - 1)) % bits)
        combined = (combined + h2) % 2**64
    return out


def mitz32_bits(key, hashes, bits):
    """The bits MURMUR128_MITZ_32 (Guava 11) sets: Java int arithmetic on h1's two halves."""
    h1, _ = halves(key)
    a, b = h1 & 0xFFFFFFFF, h1 >> 32
    out = set()
    for j in range(1, hashes + 1):
        c = (a + j * b) % 2**32
        if c >= 2**31:
            c = ~(c - 2**32)
        out.add(c % bits)
    return out


def set_bits(stream):
    """The set bits of a Guava stream (big-endian words after the 6-byte header)."""
    out = set()
    for w in range(int.from_bytes(stream[2:6], "big", signed=True)):
        word = int.from_bytes(stream[6 + 8 * w:14 + 8 * w], "big")
        out |= {64 * w + i for i in range(64) if word >> i & 1}
    return out


def stream_with_bits(strategy, hashes, words, bits_to_set):
    data = bytearray([strategy, hashes]) + words.to_bytes(4, "big") + bytes(8 * words)
    for bit in bits_to_set:
        word, offset = divmod(bit, 64)
        data[6 + 8 * word + 7 - offset // 8] |= 1 << (offset % 8)
    return bytes(data)


# ------------------------------------------------------------------------------------------------
# Sizing.

def test_guava_shape_is_guavas_sizing():
    # Guava: -1000 * ln(0.01) / ln(2)^2 = 9585 bits -> 150 words; k = round(9585 / 1000 * ln 2) = 7.
    assert bloomery.guava_shape(1000, 0.01) == (150, 7)
    assert bloomery.guava_shape(0, 0.03) == bloomery.guava_shape(1, 0.03)  # n = 0 counts as 1
    bits = int(-10_000 * math.log(0.001) / math.log(2) ** 2)
    assert bloomery.guava_shape(10_000, 0.001) == ((bits + 63) // 64,
                                                   max(1, round(bits / 10_000 * math.log(2))))


def test_the_constructor_allocates_the_shape():
    for n, p in [(1000, 0.01), (0, 0.03), (1, 0.5), (12345, 1e-6)]:
        words, hashes = bloomery.guava_shape(n, p)
        f = bloomery.GuavaBloomFilter(n, p)
        assert (f.bits, f.hashes, f.size_in_bytes) == (64 * words, hashes, 8 * words)
        assert f.bits_set == 0 and f.approximate_count == 0 and f.estimated_fpr == 0.0
        assert f.strategy == "MURMUR128_MITZ_64" and f.funnel == "string"


@pytest.mark.parametrize("fpp", [0.0, 1.0, float("nan"), -1.0, 1.5, float("inf")], ids=repr)
def test_bad_fpp_is_a_value_error(fpp):
    with pytest.raises(ValueError, match="false positive probability"):
        bloomery.GuavaBloomFilter(100, fpp)
    with pytest.raises(ValueError, match="false positive probability"):
        bloomery.guava_shape(100, fpp)


@pytest.mark.parametrize("n", [-1, -(2**70), 2**63, 2**64, 2**100], ids=repr)
def test_bad_expected_insertions_is_a_value_error(n):
    with pytest.raises(ValueError, match="expected"):
        bloomery.GuavaBloomFilter(n, 0.01)
    with pytest.raises(ValueError, match="expected"):
        bloomery.guava_shape(n, 0.01)


def test_sizes_guava_cannot_create_are_value_errors():
    with pytest.raises(ValueError, match="Guava cannot create"):
        bloomery.guava_shape(1, 1e-100)  # k > 255
    with pytest.raises(ValueError, match="Guava cannot create"):
        bloomery.guava_shape(2**62, 0.01)  # more than 2**31 - 1 words


def test_argument_types():
    with pytest.raises(TypeError, match="expected_insertions must be an int"):
        bloomery.GuavaBloomFilter(10.0, 0.01)
    with pytest.raises(TypeError, match="expected_insertions must be an int"):
        bloomery.guava_shape(True, 0.01)
    with pytest.raises(TypeError, match="fpp must be a float"):
        bloomery.GuavaBloomFilter(10, "0.01")
    with pytest.raises(TypeError, match="funnel must be a str"):
        bloomery.GuavaBloomFilter(10, 0.01, 1)
    assert bloomery.guava_shape(100, 1 / 8) == bloomery.guava_shape(100, 0.125)


@pytest.mark.parametrize("name", ["", "String", "utf8", "bytes", "long ", "int32"])
def test_unknown_funnel_is_a_value_error_listing_the_funnels(name):
    for make in (lambda: bloomery.GuavaBloomFilter(10, 0.01, name),
                 lambda: bloomery.GuavaBloomFilter.from_bytes(
                     bloomery.GuavaBloomFilter(10, 0.01).to_bytes(), name)):
        with pytest.raises(ValueError, match="unknown Guava funnel") as info:
            make()
        assert all(f in str(info.value) for f in FUNNELS)


# ------------------------------------------------------------------------------------------------
# The stream.

def test_stream_layout():
    f = bloomery.GuavaBloomFilter(1000, 0.01, "long")
    f.add(42)
    data = f.to_bytes()
    assert isinstance(data, bytes)
    assert data[0] == 1  # MURMUR128_MITZ_64's ordinal
    assert data[1] == f.hashes == 7
    assert int.from_bytes(data[2:6], "big") == f.bits // 64 == 150
    assert len(data) == 6 + f.bits // 8 == 6 + f.size_in_bytes
    assert len(set_bits(data)) == f.bits_set


@pytest.mark.parametrize("funnel", FUNNELS)
def test_round_trip(funnel):
    f = bloomery.GuavaBloomFilter(2000, 0.02, funnel)
    keys = list(range(-500, 500)) if funnel in ("long", "int") else [f"k{i}" for i in range(1000)]
    assert all(f.add(k) or True for k in keys)
    data = f.to_bytes()
    for form in (data, bytearray(data), memoryview(data)):
        g = bloomery.GuavaBloomFilter.from_bytes(form, funnel)
        assert g == f and g.to_bytes() == data
        assert (g.funnel, g.strategy, g.hashes, g.bits, g.bits_set) == \
            (funnel, f.strategy, f.hashes, f.bits, f.bits_set)
        assert all(k in g for k in keys)
    assert bloomery.GuavaBloomFilter.from_bytes(data=data, funnel=funnel) == f


def test_from_bytes_default_funnel_is_string():
    f = bloomery.GuavaBloomFilter(10, 0.01)
    assert bloomery.GuavaBloomFilter.from_bytes(f.to_bytes()).funnel == "string"
    with pytest.raises(TypeError):
        bloomery.GuavaBloomFilter.from_bytes("not bytes")


def damaged_streams():
    good = bloomery.GuavaBloomFilter(10, 0.01).to_bytes()  # 2 words, k = 7
    assert len(good) == 6 + 2 * 8
    return {
        "empty": b"",
        "5 bytes": good[:5],
        "strategy 2": bytes([2]) + good[1:],
        "strategy -1": b"\xff" + good[1:],
        "k = 0": good[:1] + b"\x00" + good[2:],
        "0 words": good[:2] + bytes(4),
        "0 words, data after": good[:2] + bytes(4) + good[6:],
        "negative words": good[:2] + b"\xff\xff\xff\xff" + good[6:],
        "truncated words": good[:-1],
        "header only": good[:6],
        "trailing byte": good + b"\x00",
        "3 words declared": good[:2] + (3).to_bytes(4, "big") + good[6:],
        "1 word declared": good[:2] + (1).to_bytes(4, "big") + good[6:],
    }


@pytest.mark.parametrize("name", list(damaged_streams()))
def test_damaged_streams_are_format_errors(name):
    data = damaged_streams()[name]
    with pytest.raises(bloomery.FormatError, match="Guava") as info:
        bloomery.GuavaBloomFilter.from_bytes(data)
    assert isinstance(info.value, ValueError)


# ------------------------------------------------------------------------------------------------
# Bit-exactness, from Guava's own hash values.

@pytest.mark.parametrize("key", list(MURMUR3_128))
def test_mitz64_sets_the_bits_guava_sets(key):
    f = bloomery.GuavaBloomFilter(1000, 0.01)
    assert f.add(key.decode()) is True
    assert set_bits(f.to_bytes()) == mitz64_bits(key, 7, 9600)
    assert f.add(key.decode()) is False  # no bit changed: put returns false
    g = bloomery.GuavaBloomFilter(1000, 0.01)
    g.add(key)  # byteArrayFunnel: the same bytes
    assert g == f


def test_the_empty_key_sets_bit_zero_only():
    # murmur3_128 of no bytes is 0, so every probe lands on bit 0: the last byte of word 0.
    for funnel, key in (("string", ""), ("string", b""), ("chars", "")):
        f = bloomery.GuavaBloomFilter(1000, 0.01, funnel)
        f.add(key)
        data = f.to_bytes()
        assert data[13] == 1 and data[6:13] == bytes(7) and not any(data[14:])
        assert f.bits_set == 1


@pytest.mark.parametrize("key", [b"a", b"hello"])
def test_mitz64_streams_are_answered_as_guava_answers(key):
    stream = stream_with_bits(1, 7, 150, mitz64_bits(key, 7, 9600))
    f = bloomery.GuavaBloomFilter.from_bytes(stream)
    assert key in f and key.decode() in f
    assert f.bits_set == len(mitz64_bits(key, 7, 9600))


@pytest.mark.parametrize("key", list(MURMUR3_128))
def test_mitz32_streams_are_read_answered_and_extended(key):
    stream = stream_with_bits(0, 5, 3, mitz32_bits(key, 5, 192))
    f = bloomery.GuavaBloomFilter.from_bytes(stream)
    assert f.strategy == "MURMUR128_MITZ_32" and f.hashes == 5 and f.bits == 192
    assert key in f
    empty = bloomery.GuavaBloomFilter.from_bytes(stream_with_bits(0, 5, 3, set()))
    assert key not in empty
    assert empty.add(key) is True
    assert empty == f and empty.to_bytes() == stream and empty.to_bytes()[0] == 0


# ------------------------------------------------------------------------------------------------
# Funnels: what each feeds, checked as the bytes the string funnel hashes as they are.

def string_twin(f):
    """The filter's stream read with the string funnel, which hashes bytes as they are."""
    return bloomery.GuavaBloomFilter.from_bytes(f.to_bytes(), "string")


def test_chars_funnel_hashes_utf16le_code_units():
    f = bloomery.GuavaBloomFilter(1000, 0.001, "chars")
    f.add("é")
    assert "é" in f
    keys = ["é", "hello", "\U0001F600", "\ud800", "a\udc00b", "\ud83d\ude00x"]
    for k in keys:
        f.add(k)
    twin = string_twin(f)
    for k in keys:
        assert k.encode("utf-16-le", "surrogatepass") in twin
    # A surrogate pair stored as two code points is the same Java String as the character.
    assert "\ud83d\ude00" in f
    # Not the string funnel's bytes: the two funnels set different bits for the same str.
    utf8, utf16 = bloomery.GuavaBloomFilter(1000, 0.001), bloomery.GuavaBloomFilter(1000, 0.001,
                                                                                   "chars")
    utf8.add("é")
    utf16.add("é")
    assert utf8.to_bytes() != utf16.to_bytes()


def test_string_funnel_hashes_utf8_and_bytes_alike():
    f = bloomery.GuavaBloomFilter(1000, 0.001)
    f.add(b"\xc3\xa9")
    assert "é" in f and bytearray(b"\xc3\xa9") in f and memoryview(b"\xc3\xa9") in f
    g = bloomery.GuavaBloomFilter(1000, 0.001)
    g.add(memoryview(b"a-b-c")[::2])  # a non-contiguous view: its bytes in C order
    assert "abc" in g


def test_string_funnel_encodes_lone_surrogates_as_java_does():
    f = bloomery.GuavaBloomFilter(1000, 0.001)
    assert f.add("\ud800") is True
    assert b"?" in f and "?" in f
    g = bloomery.GuavaBloomFilter(1000, 0.001)
    g.add("x\udfffy\ud800")
    assert b"x?y?" in g
    # A high surrogate followed by a low one is one supplementary character in a Java String.
    h = bloomery.GuavaBloomFilter(1000, 0.001)
    h.add("\ud83d\ude00")
    assert "\U0001F600".encode() in h and b"??" not in h


def test_long_and_int_funnels_hash_little_endian_twos_complement():
    for funnel, size in (("long", 8), ("int", 4)):
        f = bloomery.GuavaBloomFilter(1000, 0.001, funnel)
        keys = [0, 1, -1, 2**31 - 1, -(2**31), 123456789]
        for k in keys:
            f.add(k)
        twin = string_twin(f)
        for k in keys:
            assert k.to_bytes(size, "little", signed=True) in twin


def test_integer_ranges_are_overflow_errors():
    f = bloomery.GuavaBloomFilter(100, 0.01, "int")
    for ok in (2**31 - 1, -(2**31)):
        f.add(ok)
        assert ok in f
    for bad in (2**31, -(2**31) - 1, 2**63, 10**40):
        with pytest.raises(OverflowError, match="Java ints"):
            f.add(bad)
        with pytest.raises(OverflowError, match="Java ints"):
            bad in f  # noqa: B015
    g = bloomery.GuavaBloomFilter(100, 0.01, "long")
    for ok in (2**63 - 1, -(2**63)):
        g.add(ok)
        assert ok in g
    for bad in (2**63, -(2**63) - 1, 2**64, 10**400):
        with pytest.raises(OverflowError, match="Java longs"):
            g.add(bad)
    assert f.bits_set <= 2 * f.hashes and g.bits_set <= 2 * g.hashes


def test_numpy_integers_are_integer_keys():
    np = pytest.importorskip("numpy")
    f = bloomery.GuavaBloomFilter(100, 0.001, "long")
    f.add(np.int64(-5))
    assert -5 in f and np.int8(-5) in f
    with pytest.raises(TypeError, match="string funnel"):
        bloomery.GuavaBloomFilter(100, 0.01).add(np.int64(5))  # not its buffer's bytes


WRONG_KEYS = {
    "string": [5, 1.5, None, True, [b"a"], object()],
    "chars": [b"x", bytearray(b"x"), memoryview(b"x"), 5, True, None],
    "long": ["5", b"5", 1.5, True, False, None],
    "int": ["5", b"5", 1.5, True, None, 1j],
}


@pytest.mark.parametrize("funnel", FUNNELS)
def test_wrong_key_types_are_type_errors_naming_the_funnel(funnel):
    f = bloomery.GuavaBloomFilter(100, 0.01, funnel)
    for bad in WRONG_KEYS[funnel]:
        with pytest.raises(TypeError, match=f"Guava {funnel} funnel"):
            f.add(bad)
        with pytest.raises(TypeError, match=f"Guava {funnel} funnel"):
            bad in f  # noqa: B015
    assert f.bits_set == 0


# ------------------------------------------------------------------------------------------------
# Membership.

def keys_for(funnel, count, offset=0):
    if funnel == "long":
        return [(i + offset) * 0x9E3779B97F4A7C15 % 2**64 - 2**63 for i in range(count)]
    if funnel == "int":
        return [(i + offset) * 0x9E3779B9 % 2**32 - 2**31 for i in range(count)]
    if funnel == "chars":
        return [f"ключ-{i + offset}-\U0001F600" for i in range(count)]
    return [f"key-{i + offset}" if i % 2 else f"key-{i + offset}".encode() for i in range(count)]


@pytest.mark.parametrize("funnel", FUNNELS)
def test_no_false_negatives(funnel):
    f = bloomery.GuavaBloomFilter(5000, 0.01, funnel)
    keys = keys_for(funnel, 5000)
    for k in keys:
        f.add(k)
    assert all(k in f for k in keys)
    g = bloomery.GuavaBloomFilter.from_bytes(f.to_bytes(), funnel)
    assert all(k in g for k in keys)
    # approximateElementCount: within a few % of the distinct keys at the design load.
    assert abs(f.approximate_count - 5000) < 250


def test_false_positive_rate():
    f = bloomery.GuavaBloomFilter(10_000, 0.01)
    for i in range(10_000):
        f.add(f"present-{i}")
    hits = sum(f"absent-{i}" in f for i in range(100_000))
    # Guava's sizing (95872 bits, k = 7) gives (1 - e^(-7 * 10^4 / 95872))^7 = 1.00% for an ideal
    # filter. Over 100,000 independent absent keys the count is binomial: sd = sqrt(1e5 * 0.01 *
    # 0.99) = 31.5 keys, i.e. 0.0315 percentage points, so 0.0135 is 11 sd above the target and
    # 0.0065 11 sd below: a correct filter never fails, a broken hashing or sizing does.
    assert 0.0065 < hits / 100_000 < 0.0135
    assert 0.005 < f.estimated_fpr < 0.015
    assert f.estimated_fpr == pytest.approx((f.bits_set / f.bits) ** f.hashes)


# ------------------------------------------------------------------------------------------------
# The object.

def test_add_says_whether_a_bit_changed():
    f = bloomery.GuavaBloomFilter(1000, 0.01)
    assert f.add("x") is True
    assert f.add("x") is False
    assert "x" in f and "y" not in f


def test_equality_and_hash():
    a = bloomery.GuavaBloomFilter(1000, 0.01)
    b = bloomery.GuavaBloomFilter(1000, 0.01)
    assert a == b and a == a
    a.add("k")
    assert a != b
    b.add(b"k")
    assert a == b
    assert a != bloomery.GuavaBloomFilter(1000, 0.02)  # another size
    chars = bloomery.GuavaBloomFilter.from_bytes(a.to_bytes(), "chars")
    assert chars != a  # the same bits, another funnel: answers differ
    assert a != a.to_bytes() and a != "GuavaBloomFilter"
    with pytest.raises(TypeError):
        hash(a)


def test_repr_and_properties():
    f = bloomery.GuavaBloomFilter(1000, 0.01)
    assert repr(f) == \
        "GuavaBloomFilter(funnel='string', strategy='MURMUR128_MITZ_64', hashes=7, bits=9600)"
    for funnel in FUNNELS:
        assert bloomery.GuavaBloomFilter(10, 0.1, funnel).funnel == funnel
    f.add("a")
    assert f.bits_set == len(mitz64_bits(b"a", 7, 9600))
    assert f.approximate_count == 1
    for name in ("funnel", "strategy", "hashes", "bits", "bits_set", "size_in_bytes",
                 "approximate_count", "estimated_fpr"):
        with pytest.raises(AttributeError):
            setattr(f, name, 1)
    assert not hasattr(f, "__len__")


def test_keyword_arguments_and_docs():
    f = bloomery.GuavaBloomFilter(expected_insertions=100, fpp=0.05, funnel="int")
    assert f.funnel == "int"
    assert bloomery.guava_shape(expected_insertions=100, fpp=0.05) == (f.bits // 64, f.hashes)
    assert "Guava 31.1" in bloomery.GuavaBloomFilter.__doc__
    assert "does not store the funnel" in bloomery.GuavaBloomFilter.__doc__
    assert "funnel: str = 'string'" in bloomery.GuavaBloomFilter.__init__.__doc__
    assert bloomery.GuavaBloomFilter.__module__ == "bloomery"
    assert bloomery.guava_shape.__module__ == "bloomery"
    assert not issubclass(bloomery.GuavaBloomFilter, bloomery.Filter)


def test_threads_share_a_filter():
    # add takes the object's lock alone, queries share it: concurrent use loses no key.
    f = bloomery.GuavaBloomFilter(20_000, 0.01)
    chunks = [[f"t{t}-{i}" for i in range(2000)] for t in range(4)]
    errors = []

    def writer(keys):
        try:
            for k in keys:
                f.add(k)
                assert k in f
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(keys,)) for keys in chunks]
    threads.append(threading.Thread(target=lambda: [f.to_bytes() for _ in range(50)]))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(k in f for keys in chunks for k in keys)
    assert bloomery.GuavaBloomFilter.from_bytes(f.to_bytes()) == f
