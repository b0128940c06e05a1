"""Files and bytes: save/load, bytes/loads, pickling, the mapped view, and damaged input."""

import os
import pickle
import stat
import threading

import pytest

import bloomery
from conftest import ALL_KINDS, kind_id, make_filter

KEYS = [f"key-{i}" for i in range(500)]


@pytest.mark.parametrize("cls", ALL_KINDS, ids=kind_id)
def test_round_trips_keep_the_class_and_the_contents(cls, tmp_path):
    f = make_filter(cls, KEYS)
    path = tmp_path / "f.filter"
    f.save(path)
    assert path.read_bytes() == bytes(f)
    for copy in (bloomery.load(path), bloomery.load(str(path)), bloomery.loads(bytes(f)),
                 bloomery.loads(bytearray(bytes(f))), bloomery.loads(memoryview(bytes(f))),
                 pickle.loads(pickle.dumps(f, protocol=pickle.HIGHEST_PROTOCOL))):
        assert type(copy) is cls
        assert copy == f
        assert copy.info() == f.info()
    with bloomery.open(path) as mapped:
        assert mapped.kind == f.kind
        assert mapped.info() == f.info()
        probe = KEYS + [f"absent-{i}" for i in range(2000)]
        assert mapped.contains_many(probe) == f.contains_many(probe)
        assert mapped.approx_len() == f.approx_len()
        assert mapped.fpr() == f.fpr()
        assert (mapped.capacity, mapped.target_fpr, mapped.size_in_bytes, mapped.seed,
                mapped.keyed) == (f.capacity, f.target_fpr, f.size_in_bytes, f.seed, f.keyed)
        assert os.fspath(mapped.path) == str(path)
    assert mapped.closed


def test_pickle_stores_the_filter_bytes():
    f = make_filter(bloomery.BloomFilter, KEYS)
    reduced = f.__reduce__()
    assert reduced[1] == (bytes(f),)
    assert reduced[0](*reduced[1]) == f


def test_keyed_filter_files_are_owner_only_and_keep_the_key(tmp_path):
    f = bloomery.BloomFilter(1000, 0.01, keyed=True)
    f.update(KEYS)
    path = tmp_path / "keyed.bloom"
    f.save(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    g = bloomery.load(path)
    assert g.keyed and g.seed is None and g == f
    assert all(g.contains_many(KEYS))
    # Another keyed filter has another key: same size, but not the same filter.
    h = bloomery.BloomFilter(1000, 0.01, keyed=True)
    h.update(KEYS)
    assert h != f


def test_save_replaces_a_file_crash_safely(tmp_path):
    path = tmp_path / "f.bloom"
    path.write_bytes(b"old")
    f = make_filter(bloomery.BloomFilter, KEYS)
    f.save(path)
    assert bloomery.load(path) == f
    assert [p.name for p in tmp_path.iterdir()] == ["f.bloom"]  # no temporary left behind


def test_mapped_view_is_read_only_and_closes():
    f = make_filter(bloomery.BloomFilter, KEYS)
    assert not hasattr(bloomery.MappedFilter, "add")
    assert not hasattr(bloomery.MappedFilter, "update")
    with pytest.raises(TypeError):
        bloomery.MappedFilter()
    del f


def test_closed_mapped_view_refuses_queries(tmp_path):
    path = tmp_path / "f.bloom"
    make_filter(bloomery.BloomFilter, KEYS).save(path)
    m = bloomery.open(path)
    assert "key-1" in m and not m.closed
    m.close()
    m.close()  # harmless
    assert m.closed
    for query in (lambda: "key-1" in m, lambda: m.contains_many(["key-1"]), m.info, m.fpr,
                  m.approx_len):
        with pytest.raises(ValueError, match="closed"):
            query()
    assert "closed" in repr(m)


def test_close_waits_for_running_queries(tmp_path):
    path = tmp_path / "f.bloom"
    f = bloomery.BloomFilter(200_000, 0.01)
    f.update(range(200_000))
    f.save(path)
    m = bloomery.open(path)
    keys = list(range(200_000))
    errors, answers = [], []
    answered = threading.Event()

    def query():
        try:
            while True:
                answers.append(all(m.contains_many(keys)))
                answered.set()
        except ValueError as e:  # closed meanwhile: the only acceptable outcome
            errors.append(str(e))

    threads = [threading.Thread(target=query) for _ in range(2)]
    for t in threads:
        t.start()
    answered.wait()
    m.close()
    for t in threads:
        t.join()
    assert all(answers) and len(errors) == 2


# ------------------------------------------------------------------------------------------------
# Damaged and foreign input: bloomery.FormatError (a ValueError) with the library's message.

def test_format_error_is_a_value_error():
    assert issubclass(bloomery.FormatError, ValueError)


@pytest.fixture
def good_bytes():
    return bytes(make_filter(bloomery.BloomFilter, KEYS))


@pytest.mark.parametrize(
    "damage,message",
    [
        (lambda b: b"", "file is empty"),
        (lambda b: b"not a filter at all, just text" * 10, "bad magic"),
        (lambda b: b[:100], "truncated"),
        (lambda b: b[: len(b) // 2], "truncated"),
        (lambda b: b + b"\0" * 64, "trailing data"),
        (lambda b: b[:-1] + bytes([b[-1] ^ 1]), "checksum mismatch"),
        (lambda b: b[:12] + b"\x63\0\0\0" + b[16:], "checksum mismatch|unknown filter kind"),
        (lambda b: b[:8] + b"\x09\0\0\0" + b[12:], "unsupported format version 9"),
    ],
    ids=["empty", "foreign", "header-cut", "payload-cut", "trailing", "flipped-bit", "kind",
         "version"],
)
def test_damaged_bytes_raise_format_error(good_bytes, damage, message, tmp_path):
    bad = damage(good_bytes)
    with pytest.raises(bloomery.FormatError, match=message):
        bloomery.loads(bad)
    path = tmp_path / "bad.filter"
    path.write_bytes(bad)
    with pytest.raises(bloomery.FormatError, match=message) as e:
        bloomery.load(path)
    assert str(path) in str(e.value)  # the message names the file
    with pytest.raises(bloomery.FormatError, match=message):
        bloomery.open(path)


def test_io_failures_raise_os_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="cannot open"):
        bloomery.load(tmp_path / "missing")
    with pytest.raises(FileNotFoundError):
        bloomery.open(tmp_path / "missing")
    with pytest.raises(IsADirectoryError):
        bloomery.load(tmp_path)
    with pytest.raises(OSError):
        make_filter(bloomery.BloomFilter, KEYS).save(tmp_path / "no-such-dir" / "f.bloom")


def test_loads_needs_bytes():
    with pytest.raises(TypeError):
        bloomery.loads("a str is not bytes")
