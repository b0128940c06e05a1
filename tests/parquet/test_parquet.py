"""bloomery's Parquet split-block Bloom filters checked against DuckDB 1.5.6, which wrote them.

duckdb_oracle.mjs (Node, @duckdb/node-api from npm) writes Parquet files with DuckDB and answers
parquet_bloom_probe; the bloomery CLI (BLOOMERY_CLI) and Python bindings (`bloomery` on
PYTHONPATH) must give DuckDB's answer for every key and row group, rebuild every filter
byte for byte, report the footer as parquet_metadata does, and refuse damaged files. README.md
beside this file says how to run it. Without npm, or when the package cannot be installed, the
test is skipped, except under CI=true, where that is a failure; without the CLI or the
bindings, the tests that need them are skipped. The golden set of tests/data/parquet is checked
too (against the bindings and the CLI without npm, and against DuckDB with it).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ORACLE_SOURCE = HERE / "duckdb_oracle.mjs"
GOLDEN_DIR = HERE.parent / "data" / "parquet"
DUCKDB_NAME = "@duckdb/node-api"
DUCKDB_VERSION = "1.5.6-r.1"
NODE_DIR = Path(os.environ.get("BLOOMERY_PARQUET_NODE_DIR") or Path.cwd() / "duckdb-node")
IN_CI = os.environ.get("CI") == "true"

NPM_TIMEOUT = 600  # seconds for npm install (once; later runs find the package in NODE_DIR)
NODE_TIMEOUT = 300  # seconds for one oracle run (write: about 1 s; all probes: a few s)
CLI_TIMEOUT = 60

FILTER_TYPES = ("BYTE_ARRAY", "INT32", "INT64", "FLOAT", "DOUBLE")  # what bloomery probes
MAX_PRESENT_KEYS = 600  # present values probed per column, at most (a deterministic sample)
UNFILTERED_KEYS = 60  # of those, values found only in chunks without a filter

# The columns of the oracle's files that DuckDB probes (top-level ones of a type bloomery reads).
# parquet_bloom_probe cannot probe a STRUCT's leaves: st.x and st.y are checked by their bitsets
# and by the CLI and the bindings agreeing (test_nested_columns).
PROBED = {
    "types.parquet": ["s", "i32", "i16", "i64", "d", "f", "uniq", "mixed", "sparse"],
    "sizes.parquet": ["big", "one", "wide", "txt", "dbl"],
    "fpp.parquet": ["s", "i32", "i64", "d", "f"],
}
PROBED_CASES = [f"{file}:{column}" for file, columns in PROBED.items() for column in columns]
NESTED = ("st.x", "st.y")

# Keys DuckDB's CAST refuses, and bloomery's CLI must refuse (exit 2). DuckDB casts more text
# than bloomery's keys allow ('1.5' to BIGINT 2, '0x10', '1e3', '1_000', ' 7 '); those are not
# compared.
BAD_KEYS = {"i64": ["abc", "9223372036854775808", ""], "i32": ["2147483648", "x1"],
            "d": ["abc", "1.2.3"]}

INT_RANGES = {"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "BIGINT": 64}
NON_FINITE = {"nan", "inf", "-inf"}  # DuckDB's VARCHAR casts of NaN and the infinities

# FLOAT and DOUBLE keys are compared bit for bit, as DuckDB 1.5.6 probes them (it hashes the
# key's IEEE 754 bits): 0.0 and -0.0 are different keys (DuckDB's dictionary keeps one zero per
# row group, of the sign it met first; types.parquet holds -0.0 in row groups 0 and 2, 0.0 in 1
# and 3), and NaN (Python's, strtod's and DuckDB's 'NaN' are all 0x7ff8000000000000) is excluded
# where none was stored. DuckDB's sources after 1.5.6 probe both zeros for either and never
# exclude NaN: an upgraded oracle would disagree on those keys (and only those).


# ---------------------------------------------------------------------------------------------
# Keys


def py_key(physical: str, text: str):
    """A key's text as the bindings take it: str for BYTE_ARRAY, int or float for numbers."""
    if physical == "BYTE_ARRAY":
        return text
    if physical in ("INT32", "INT64"):
        return int(text)
    return float(text)


def float32_text(rng: random.Random) -> str:
    """The repr of a random finite float32 (exact as a double, so it parses to that float32)."""
    while True:
        value = struct.unpack("<f", struct.pack("<I", rng.getrandbits(32)))[0]
        if math.isfinite(value):
            return repr(value)


def absent_keys(duckdb_type: str, present: list[str], count: int, rng: random.Random) -> list[str]:
    """`count` keys of the column's type that are not in `present` (DuckDB's VARCHAR casts):
    near misses of present values and random ones, plus, for FLOAT and DOUBLE, the special
    values (0.0, -0.0, NaN, the infinities) that are absent."""
    have = set(present)
    if duckdb_type in ("FLOAT", "DOUBLE"):
        have_bits = {number_bits(duckdb_type, p) for p in present}
    out: list[str] = []
    if duckdb_type in ("FLOAT", "DOUBLE"):
        out += [k for k in ("0.0", "-0.0", "nan", "inf", "-inf", "0.1", "5e-324") if k not in have]
    attempts = 0
    while len(out) < count and attempts < 100 * count + 1000:
        attempts += 1
        base = rng.choice(present) if present else None
        if duckdb_type == "VARCHAR":
            if base is not None and rng.random() < 0.5:
                key = base + rng.choice(["!", "é", " ", "0", "Ж"])
            else:
                prefix = rng.choice(["absent-", "nié-", "東", "😀", "x"])
                key = prefix + str(rng.randrange(10**9))
        elif duckdb_type in INT_RANGES:
            bits = INT_RANGES[duckdb_type]
            low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
            if base is not None and rng.random() < 0.5:
                key = str(min(high, max(low, int(base) + rng.choice([-2, -1, 1, 2]))))
            else:
                key = str(rng.randint(low, high))
        elif duckdb_type == "DOUBLE":
            if base is not None and base not in NON_FINITE and rng.random() < 0.5:
                key = repr(math.nextafter(float(base), rng.choice([math.inf, -math.inf])))
            else:
                key = repr(rng.uniform(-1e6, 1e6) if rng.random() < 0.7
                           else struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0])
        elif duckdb_type == "FLOAT":
            if rng.random() < 0.5:
                key = float32_text(rng)
            else:
                key = repr(float(rng.randrange(-5000, 5000)) / 8)
        else:
            raise AssertionError(f"no absent keys for {duckdb_type}")
        if key in ("nan", "-nan") or key in have or key in out:
            continue
        if duckdb_type in ("FLOAT", "DOUBLE") and number_bits(duckdb_type, key) in have_bits:
            continue  # another text of a present number
        out.append(key)
    return out


def number_bits(duckdb_type: str, text: str) -> bytes:
    return struct.pack("<f" if duckdb_type == "FLOAT" else "<d", float(text))


def cli_plain(physical: str, key: str) -> bool:
    """Whether a key goes in the main CLI check (stdin): not the empty string (an empty line),
    nor NaN or an infinity (test_cli_probe_special_keys passes those as arguments)."""
    if physical == "BYTE_ARRAY":
        return key != ""
    if physical in ("FLOAT", "DOUBLE"):
        return math.isfinite(float(key))
    return True


def expected_result(excluded: bool, has_filter: bool) -> str:
    if not has_filter:
        assert not excluded, "DuckDB excluded a key from a chunk without a filter"
        return "no-filter"
    return "absent" if excluded else "maybe"


def first_mismatches(got: list, want: list, labels: list, limit: int = 5) -> str:
    wrong = [(label, g, w) for label, g, w in zip(labels, got, want) if g != w]
    shown = "; ".join(f"{label}: {g!r} (DuckDB: {w!r})" for label, g, w in wrong[:limit])
    return f"{len(wrong)} of {len(want)} differ, e.g. {shown}"


# ---------------------------------------------------------------------------------------------
# Files: the footer's numbers, Thrift varints, damage


def zigzag(value: int) -> int:
    return value * 2 if value >= 0 else -value * 2 - 1


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        if value < 0x80:
            out.append(value)
            return bytes(out)
        out.append(value & 0x7F | 0x80)
        value >>= 7


def filter_header(data: bytes, offset: int) -> tuple[int, int]:
    """(numBytes, header length) of the BloomFilterHeader at `offset`, as DuckDB writes it:
    numBytes (field 1, i32), the unions BLOCK, XXHASH and UNCOMPRESSED, the stop byte."""
    assert data[offset] == 0x15, f"no numBytes field at {offset}"
    pos, value, shift = offset + 1, 0, 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            break
    num_bytes = (value >> 1) ^ -(value & 1)
    rest = b"\x1c\x1c\x00\x00" * 3 + b"\x00"
    assert data[pos:pos + len(rest)] == rest, f"an unexpected Bloom filter header at {offset}"
    return num_bytes, pos + len(rest) - offset


def raw_bitset(data: bytes, chunk: dict) -> bytes:
    num_bytes, header = filter_header(data, chunk["bloom_filter_offset"])
    assert header + num_bytes == chunk["bloom_filter_length"]
    start = chunk["bloom_filter_offset"] + header
    return data[start:start + num_bytes]


def footer_span(data: bytes) -> tuple[int, int]:
    """(start, length) of the footer (FileMetaData)."""
    length = int.from_bytes(data[-8:-4], "little")
    return len(data) - 8 - length, length


def patch_chunk_field(data: bytes, offset: int, length: int, new_offset: int | None = None,
                      new_length: int | None = None) -> bytes:
    """The file with one chunk's bloom_filter_offset (field 14, i64) or bloom_filter_length
    (field 15, i32) rewritten in the footer, in as many varint bytes as before (so nothing
    else moves). The chunk is found by its two fields, which DuckDB writes one after the other."""
    start, size = footer_span(data)
    footer = data[start:start + size]
    old_offset, old_length = varint(zigzag(offset)), varint(zigzag(length))
    pattern = old_offset + b"\x15" + old_length
    at = footer.find(pattern)
    assert at > 0 and footer.find(pattern, at + 1) < 0, "the chunk's filter fields are not unique"
    assert footer[at - 1] & 0x0F == 6, "no i64 field before the filter offset"
    new_o = varint(zigzag(offset if new_offset is None else new_offset))
    new_l = varint(zigzag(length if new_length is None else new_length))
    assert len(new_o) == len(old_offset) and len(new_l) == len(old_length), "varint sizes differ"
    patched = footer[:at] + new_o + b"\x15" + new_l + footer[at + len(pattern):]
    return data[:start] + patched + data[start + size:]


def damaged_versions(data: bytes, chunk: dict) -> dict[str, bytes]:
    """Damaged copies of a file; `chunk` (one with a filter, of the column probed) is the one
    whose filter is damaged by the filter-* kinds."""
    start, size = footer_span(data)
    off, length = chunk["bloom_filter_offset"], chunk["bloom_filter_length"]
    past_eof = len(data) + 1000
    header_at = off + 1 + len(varint(zigzag(chunk["num_bytes"])))  # the algorithm union
    return {
        "empty": b"",
        "too-short": b"PAR1PAR1",
        "truncated-half": data[:len(data) // 2],
        "truncated-tail": data[:-3],
        "bad-magic-head": b"PARX" + data[4:],
        "bad-magic-tail": data[:-4] + b"PARX",
        "footer-length-too-large": data[:-8] + (len(data) - 11).to_bytes(4, "little") + b"PAR1",
        "footer-length-huge": data[:-8] + b"\xff\xff\xff\xff" + b"PAR1",
        "zeroed-footer": data[:start] + bytes(size) + data[start + size:],
        "garbage-footer": data[:start] + b"\xff" * size + data[start + size:],
        "filter-offset-past-eof": patch_chunk_field(data, off, length, new_offset=past_eof),
        "filter-offset-near-eof": patch_chunk_field(data, off, length, new_offset=len(data) - 20),
        "filter-length-mismatch": patch_chunk_field(data, off, length, new_length=length + 2),
        # BLOCK (union field 1) becomes an unknown algorithm (field 2).
        "filter-unknown-algorithm": data[:header_at + 1] + b"\x2c" + data[header_at + 2:],
        # numBytes 0 (a varint padded to the old one's size): no bitset at all.
        "filter-zero-bytes": (data[:off + 1] + b"\x80" * (header_at - off - 2) + b"\x00"
                              + data[header_at:]),
    }


# ---------------------------------------------------------------------------------------------
# Fixtures: node and the DuckDB package, the oracle's files, DuckDB's answers


def _unavailable(reason: str):
    if IN_CI:
        pytest.fail(f"{reason}; under CI=true the Parquet interop test must run", pytrace=False)
    pytest.skip(reason)


def _installed_version(node_dir: Path) -> str | None:
    package = node_dir / "node_modules" / "@duckdb" / "node-api" / "package.json"
    bindings = node_dir / "node_modules" / "@duckdb" / "node-bindings-linux-x64"
    try:
        version = json.loads(package.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None
    return version if bindings.is_dir() else None


class Oracle:
    """duckdb_oracle.mjs, copied into the npm prefix so that its import resolves there."""

    def __init__(self, node: str, node_dir: Path):
        self.node = node
        self.script = node_dir / ORACLE_SOURCE.name
        source = ORACLE_SOURCE.read_bytes()
        if not self.script.exists() or self.script.read_bytes() != source:
            tmp = self.script.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(source)
            tmp.replace(self.script)

    def run(self, *args) -> None:
        cmd = [self.node, str(self.script), *map(str, args)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=NODE_TIMEOUT,
                           stdin=subprocess.DEVNULL, check=False)
        assert r.returncode == 0, f"duckdb_oracle.mjs {args[0]} exited {r.returncode}:\n{r.stderr}"


@pytest.fixture(scope="session")
def oracle() -> Oracle:
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        _unavailable("node or npm is not on PATH, so there is no DuckDB to compare with")
    if _installed_version(NODE_DIR) != DUCKDB_VERSION:
        NODE_DIR.mkdir(parents=True, exist_ok=True)
        try:
            r = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix",
                                str(NODE_DIR), f"{DUCKDB_NAME}@{DUCKDB_VERSION}"],
                               capture_output=True, text=True, timeout=NPM_TIMEOUT,
                               stdin=subprocess.DEVNULL, check=False)
        except subprocess.TimeoutExpired:
            _unavailable(f"npm install {DUCKDB_NAME}@{DUCKDB_VERSION} timed out (no network?)")
        if r.returncode != 0 or _installed_version(NODE_DIR) != DUCKDB_VERSION:
            lines = (r.stderr or r.stdout).strip().splitlines()
            said = [x for x in lines if x.startswith(("npm error code", "npm error Fetch",
                                                      "npm ERR! code", "npm ERR! network"))]
            _unavailable(f"npm install {DUCKDB_NAME}@{DUCKDB_VERSION} into {NODE_DIR} failed "
                         f"(exit {r.returncode}; no network?): " + " | ".join(said or lines[-3:]))
    return Oracle(node, NODE_DIR)


@pytest.fixture(scope="session")
def bloomery():
    """The Python bindings (imported here, so that collection works without them)."""
    try:
        import bloomery as module
    except ImportError as e:
        pytest.skip(f"the bloomery Python bindings are not importable ({e}); set PYTHONPATH")
    for name in ("parquet_bloom_filters", "ParquetBloomFilter", "FormatError"):
        assert hasattr(module, name), f"bloomery has no {name}"
    return module


@pytest.fixture(scope="session")
def cli() -> str:
    path = os.environ.get("BLOOMERY_CLI")
    if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
        pytest.skip("the bloomery CLI is not built (BLOOMERY_CLI unset): its Parquet commands "
                    "are not tested")
    return path


@dataclass
class ParquetFile:
    """One file the oracle wrote, as its manifest describes it."""
    path: Path
    manifest: dict

    @property
    def data(self) -> bytes:
        return self.path.read_bytes()

    @property
    def row_groups(self) -> int:
        return len(self.manifest["row_groups"])

    def column(self, name: str) -> dict:
        for column in self.manifest["columns"]:
            if column["path"] == name:
                return column
        raise KeyError(f"{self.path.name} has no column {name}")


@pytest.fixture(scope="session")
def files(oracle, tmp_path_factory) -> dict[str, ParquetFile]:
    """The oracle's files (duckdb_oracle.mjs write) by name."""
    out = tmp_path_factory.mktemp("duckdb-files")
    oracle.run("write", out)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["duckdb_version"] == "v1.5.6", manifest["duckdb_version"]
    return {f["file"]: ParquetFile(out / f["file"], f) for f in manifest["files"]}


@dataclass
class ProbeSet:
    """DuckDB's answers for one column: excluded[k][g] for key k in row group g."""
    file: ParquetFile
    column: dict
    keys: list[str]
    excluded: list[list[bool]]

    @property
    def physical(self) -> str:
        return self.column["physical_type"]

    def has_filter(self, group: int) -> bool:
        return self.column["chunks"][group]["bloom_filter_offset"] is not None


def _probe_keys(column: dict, rng: random.Random) -> list[str]:
    filtered, unfiltered = set(), set()
    for chunk in column["chunks"]:
        into = filtered if chunk["bloom_filter_offset"] is not None else unfiltered
        into.update(chunk["distinct"])
    unfiltered -= filtered
    filtered_list, unfiltered_list = sorted(filtered), sorted(unfiltered)
    unfiltered_list = rng.sample(unfiltered_list, min(UNFILTERED_KEYS, len(unfiltered_list)))
    room = MAX_PRESENT_KEYS - len(unfiltered_list)
    if len(filtered_list) > room:
        filtered_list = rng.sample(filtered_list, room)
    present = filtered_list + unfiltered_list
    keys = present + absent_keys(column["duckdb_type"], present, max(len(present), 50), rng)
    rng.shuffle(keys)
    return keys


@pytest.fixture(scope="session")
def probes(oracle, files, tmp_path_factory) -> dict[str, ProbeSet]:
    """DuckDB's parquet_bloom_probe of every PROBED column (one oracle run), by "file:column";
    "bad:file:column" entries hold BAD_KEYS' results."""
    work = tmp_path_factory.mktemp("duckdb-probes")
    jobs, sets = [], {}
    for file_name, columns in PROBED.items():
        f = files[file_name]
        for name in columns:
            column = f.column(name)
            keys = _probe_keys(column, random.Random(f"bloomery-parquet-{file_name}-{name}"))
            jobs.append({"file": str(f.path), "column": name, "keys": keys})
            sets[f"{file_name}:{name}"] = (f, column, keys)
    for name, keys in BAD_KEYS.items():
        jobs.append({"file": str(files["types.parquet"].path), "column": name, "keys": keys})
    (work / "jobs.json").write_text(json.dumps(jobs), encoding="utf-8")
    oracle.run("probe-batch", work / "jobs.json", work / "results.json")
    results = json.loads((work / "results.json").read_text(encoding="utf-8"))
    assert len(results) == len(jobs)
    out = {}
    for (label, (f, column, keys)), result in zip(sets.items(), results):
        assert not result["errors"], f"{label}: DuckDB refused keys: {result['errors']}"
        assert result["row_groups"] == f.row_groups
        out[label] = ProbeSet(f, column, keys, result["results"])
    for (name, keys), result in zip(BAD_KEYS.items(), results[len(sets):]):
        out[f"bad:types.parquet:{name}"] = result
    return out


@pytest.fixture(scope="session")
def golden() -> dict:
    expected = GOLDEN_DIR / "expected.json"
    if not expected.is_file():
        pytest.fail(f"the golden set is missing: {expected}")
    return json.loads(expected.read_text(encoding="utf-8"))


def run_cli(cli: str, *args, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([cli, *map(str, args)], input=stdin if stdin is not None else b"",
                          capture_output=True, timeout=CLI_TIMEOUT, check=False)


def key_args(keys) -> list[str]:
    """Keys as arguments, after "--" when one starts with "-" (-5, -inf: not options)."""
    keys = [str(k) for k in keys]
    return ["--", *keys] if any(k.startswith("-") for k in keys) else keys


def cli_probe(cli: str, column: str, path: Path, *keys) -> subprocess.CompletedProcess:
    return run_cli(cli, "parquet", "probe", "--column", column, path, *key_args(keys))


def cli_probe_json(cli: str, path: Path, column: str, keys: list[str], via_args: bool = False):
    """`parquet probe --json` of the keys: (exit code, parsed output or None, stderr)."""
    if via_args:
        r = run_cli(cli, "parquet", "probe", "--column", column, "--json", path, *key_args(keys))
    else:
        stdin = "".join(f"{k}\n" for k in keys).encode("utf-8")
        r = run_cli(cli, "parquet", "probe", "--column", column, "--json", path, stdin=stdin)
    err = r.stderr.decode(errors="replace")
    if r.returncode == 2:
        return r.returncode, None, err
    return r.returncode, json.loads(r.stdout.decode("utf-8")), err


def check_cli_results(ps: ProbeSet, keys: list[str], excluded: list[list[bool]], code: int,
                      out: dict, what: str) -> None:
    assert out["column"] == ps.column["path"], what
    assert out["type"] == ps.physical, what
    want, labels = [], []
    for key, row in zip(keys, excluded):
        for g, ex in enumerate(row):
            result = expected_result(ex, ps.has_filter(g))
            want.append({"key": key, "row_group": g, "result": result})
            labels.append(f"{key!r} in row group {g}")
    got = out["results"]
    assert len(got) == len(want), f"{what}: {len(got)} results for {len(want)}"
    if got != want:
        pytest.fail(f"{what}: {first_mismatches(got, want, labels)}")
    some = any(w["result"] != "absent" for w in want)
    assert code == (0 if some else 1), f"{what}: exit {code}"


# ---------------------------------------------------------------------------------------------
# The oracle itself: DuckDB's files and answers are as the tests assume


def test_oracle_files_are_as_designed(files):
    types = files["types.parquet"]
    assert types.row_groups == 4 and [g["num_rows"] for g in types.manifest["row_groups"]] == [
        2048, 2048, 2048, 1356]
    with_filter = lambda c: [ch["bloom_filter_offset"] is not None for ch in c["chunks"]]
    # Columns without a filter anywhere, and with one in some row groups only.
    assert with_filter(types.column("flag")) == [False] * 4  # BOOLEAN: never
    assert with_filter(types.column("uniq")) == [False] * 4  # unique values: no dictionary
    assert with_filter(types.column("mixed")) == [True, False, True, False]
    assert with_filter(types.column("sparse")) == [True, False, True, True]  # all NULL in 1
    for name in ("s", "i16", "i64", "d", "f", "st.x", "st.y"):
        assert all(with_filter(types.column(name))), name
    assert types.column("i16")["physical_type"] == "INT32"
    assert types.column("st.x")["physical_type"] == "INT32"
    assert types.column("st.y")["physical_type"] == "BYTE_ARRAY"
    # The +0.0 / -0.0 pattern: one zero per row group, the sign of its first appearance.
    zeros = [sorted({"0.0", "-0.0"} & set(ch["distinct"])) for ch in types.column("d")["chunks"]]
    assert zeros == [["-0.0"], ["0.0"], ["-0.0"], ["0.0"]], zeros
    nans = ["nan" in ch["distinct"] for ch in types.column("d")["chunks"]]
    assert nans == [True, False, True, False]
    sizes = files["sizes.parquet"]
    assert [ch.get("num_bytes") for ch in sizes.column("big")["chunks"]] == [4096, 4096, None]
    assert [ch["num_bytes"] for ch in sizes.column("one")["chunks"]] == [32, 32, 32]
    for f in files.values():
        for column in f.manifest["columns"]:
            for ch in column["chunks"]:
                if ch["bloom_filter_offset"] is None:
                    continue
                # Filters only for dictionary-encoded chunks, sized to a power of two.
                assert "DICTIONARY" in ch["encodings"], (f.path.name, column["path"])
                n = ch["num_bytes"]
                assert n >= 32 and n & (n - 1) == 0, (f.path.name, column["path"], n)
                assert ch["header_bytes"] == (15 if n < 64 else 16 if n < 8192 else 17)


def test_oracle_answers_are_sound(probes):
    """No false negatives from DuckDB, no exclusion without a filter, and the high-fpp file
    really gives false positives (the exactness checks depend on them)."""
    false_positives = 0
    for label, ps in probes.items():
        if label.startswith("bad:"):
            continue
        for key, row in zip(ps.keys, ps.excluded):
            for g, ex in enumerate(row):
                chunk = ps.column["chunks"][g]
                if key in chunk["distinct"]:
                    assert not ex, f"{label}: DuckDB excludes {key!r}, present in row group {g}"
                if not ps.has_filter(g):
                    assert not ex, f"{label}: DuckDB excludes {key!r} without a filter"
                if ps.file.path.name == "fpp.parquet" and key not in chunk["distinct"] and not ex:
                    false_positives += 1
    assert false_positives > 100, f"only {false_positives} false positives in fpp.parquet"
    for name, keys in BAD_KEYS.items():
        result = probes[f"bad:types.parquet:{name}"]
        assert sorted(map(int, result["errors"])) == list(range(len(keys))), (name, result)


# ---------------------------------------------------------------------------------------------
# Probes: bloomery answers as parquet_bloom_probe, key for key, row group for row group


@pytest.mark.parametrize("case", PROBED_CASES)
def test_cli_probe_json(case, probes, cli):
    ps = probes[case]
    chosen = [i for i, k in enumerate(ps.keys) if cli_plain(ps.physical, k)]
    keys = [ps.keys[i] for i in chosen]
    code, out, err = cli_probe_json(cli, ps.file.path, ps.column["path"], keys)
    assert out is not None, f"{case}: parquet probe exited 2: {err}"
    check_cli_results(ps, keys, [ps.excluded[i] for i in chosen], code, out, f"{case} (CLI)")


@pytest.mark.parametrize("case", PROBED_CASES)
def test_python_probe(case, probes, bloomery):
    ps = probes[case]
    filters = bloomery.parquet_bloom_filters(str(ps.file.path), ps.column["path"])
    assert len(filters) == ps.file.row_groups, case
    for g, f in enumerate(filters):
        chunk = ps.column["chunks"][g]
        if not ps.has_filter(g):
            assert f is None, f"{case}: row group {g} has no filter, the bindings gave {f!r}"
            continue
        assert isinstance(f, bloomery.ParquetBloomFilter), (case, g)
        assert f.num_bytes == chunk["num_bytes"] and f.type == ps.physical, (case, g)
        got = [py_key(ps.physical, k) in f for k in ps.keys]
        want = [not row[g] for row in ps.excluded]
        if got != want:
            pytest.fail(f"{case}, row group {g}: "
                        f"{first_mismatches(got, want, [repr(k) for k in ps.keys])}")
        if ps.physical == "BYTE_ARRAY":  # bytes keys: the text's UTF-8
            as_bytes = [k.encode("utf-8") in f for k in ps.keys]
            assert as_bytes == want, f"{case}, row group {g}: bytes keys differ from str keys"
        if ps.physical in ("FLOAT", "DOUBLE"):  # an int key is that number (0 is +0.0)
            ints = [(k, row[g]) for k, row in zip(ps.keys, ps.excluded) if k not in NON_FINITE
                    and float(k).is_integer() and 0 < abs(float(k)) < 2**53]
            assert all((int(float(k)) in f) == (not ex) for k, ex in ints), (case, g)


def test_cli_probe_text(probes, cli):
    """Text mode: KEY<TAB>ROW_GROUP<TAB>absent|maybe|no-filter, keys in input order."""
    ps = probes["types.parquet:mixed"]  # with and without filters
    keys = ps.keys[:80]
    stdin = "".join(f"{k}\n" for k in keys).encode("utf-8")
    r = run_cli(cli, "parquet", "probe", "--column", "mixed", ps.file.path, stdin=stdin)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    want = [f"{k}\t{g}\t{expected_result(ex, ps.has_filter(g))}"
            for k, row in zip(keys, ps.excluded[:80]) for g, ex in enumerate(row)]
    got = r.stdout.decode("utf-8").split("\n")
    assert got[-1] == "", "the output does not end with a newline"
    assert got[:-1] == want


def test_cli_probe_keys_as_arguments(probes, cli):
    """Keys given as arguments, the empty string among them, and NaN, the infinities and the
    zeros for FLOAT and DOUBLE, answer as from stdin (as DuckDB answers)."""
    checked = 0
    for case in PROBED_CASES:
        ps = probes[case]
        picked = [i for i, k in enumerate(ps.keys) if not cli_plain(ps.physical, k)
                  or k in ("0.0", "-0.0")]
        if not picked:
            continue
        keys = [ps.keys[i] for i in picked]
        code, out, err = cli_probe_json(cli, ps.file.path, ps.column["path"], keys, via_args=True)
        assert out is not None, f"{case}: parquet probe {keys!r} exited 2: {err}"
        check_cli_results(ps, keys, [ps.excluded[i] for i in picked], code, out,
                          f"{case} (CLI, keys {keys!r} as arguments)")
        checked += 1
    assert checked >= 5


def test_cli_probe_exit_codes(probes, files, cli):
    types = files["types.parquet"].path
    ps = probes["types.parquet:i64"]
    everywhere = [k for k, row in zip(ps.keys, ps.excluded) if all(row)]
    somewhere = [k for k, row in zip(ps.keys, ps.excluded) if not all(row)]
    assert len(everywhere) >= 3 and somewhere
    codes = {
        "maybe": cli_probe(cli, "i64", types, somewhere[0]),
        "all absent": cli_probe(cli, "i64", types, *everywhere[:3]),
        "absent and maybe": cli_probe(cli, "i64", types, everywhere[0], somewhere[0]),
        "no filter": cli_probe(cli, "uniq", types, "12345"),
        "missing column": cli_probe(cli, "nope", types, "1"),
        "a group, not a leaf": cli_probe(cli, "st", types, "1"),
        "BOOLEAN column": cli_probe(cli, "flag", types, "true"),
        "1.5 for INT64": cli_probe(cli, "i64", types, "1.5"),
        "missing file": cli_probe(cli, "i64", types.parent / "no.parquet", "1"),
    }
    for name, keys in BAD_KEYS.items():
        for key in keys:
            codes[f"{key!r} for {name}"] = cli_probe(cli, name, types, key)
    want = {"maybe": 0, "all absent": 1, "absent and maybe": 0, "no filter": 0}
    for what, r in codes.items():
        code = want.get(what, 2)
        assert r.returncode == code, (f"{what}: exit {r.returncode}, want {code}; stderr: "
                                      f"{r.stderr.decode(errors='replace')}")
        if code == 2:
            assert r.stderr.strip(), f"{what}: exit 2 without a message"
            assert not r.stdout.strip(), f"{what}: output on exit 2: {r.stdout[:200]!r}"


# ---------------------------------------------------------------------------------------------
# Bitsets: bloomery rebuilds every filter DuckDB wrote, byte for byte


@pytest.mark.parametrize("file_name", list(PROBED))
def test_python_bitsets(file_name, files, bloomery):
    f = files[file_name]
    data = f.data
    checked = 0
    for column in f.manifest["columns"]:
        physical = column["physical_type"]
        if physical not in FILTER_TYPES:
            continue
        read = bloomery.parquet_bloom_filters(str(f.path), column["path"])
        assert len(read) == f.row_groups
        for chunk, from_file in zip(column["chunks"], read):
            where = f"{file_name} {column['path']} row group {chunk['row_group']}"
            if chunk["bloom_filter_offset"] is None:
                assert from_file is None, where
                continue
            raw = raw_bitset(data, chunk)
            assert hashlib.sha256(raw).hexdigest() == chunk["bitset_sha256"], where
            assert from_file.bitset() == raw, f"{where}: the filter read is not the file's bitset"
            built = bloomery.ParquetBloomFilter(chunk["num_bytes"], type=physical)
            assert built.num_bytes == chunk["num_bytes"] and built.type == physical
            assert built.bitset() == bytes(chunk["num_bytes"])  # empty at first
            for value in chunk["distinct"]:
                built.add(py_key(physical, value))
            assert built.bitset() == raw, f"{where}: the filter built from its values differs"
            missing = [v for v in chunk["distinct"] if py_key(physical, v) not in from_file]
            assert not missing, f"{where}: present values answer False: {missing[:5]}"
            checked += 1
    assert checked > 0


def test_nested_columns(files, cli, bloomery):
    """A STRUCT's leaves by their dotted paths: their filters rebuilt (test_python_bitsets),
    every present value maybe, and the CLI answering as the bindings (DuckDB cannot probe them)."""
    f = files["types.parquet"]
    rng = random.Random("bloomery-parquet-nested")
    for name in NESTED:
        column = f.column(name)
        present = sorted({v for ch in column["chunks"] for v in ch["distinct"]})
        keys = present + absent_keys(column["duckdb_type"], present, len(present), rng)
        filters = bloomery.parquet_bloom_filters(str(f.path), name)
        assert all(x is not None for x in filters), name
        physical = column["physical_type"]
        answers = [[py_key(physical, k) in x for x in filters] for k in keys]
        for k, row in zip(keys, answers):
            for g, maybe in enumerate(row):
                if k in column["chunks"][g]["distinct"]:
                    assert maybe, f"{name}: {k!r} present in row group {g}, answered absent"
        code, out, err = cli_probe_json(cli, f.path, name, keys)
        assert out is not None, f"{name}: parquet probe exited 2: {err}"
        want = [{"key": k, "row_group": g, "result": "maybe" if m else "absent"}
                for k, row in zip(keys, answers) for g, m in enumerate(row)]
        assert out["results"] == want, f"{name}: the CLI and the bindings differ"
        assert out["type"] == physical and code == 0


# ---------------------------------------------------------------------------------------------
# parquet info: the footer as parquet_metadata reports it


def info_chunks(f: ParquetFile) -> list[dict]:
    out = []
    for g in range(f.row_groups):
        for column in f.manifest["columns"]:
            ch = column["chunks"][g]
            has = ch["bloom_filter_offset"] is not None
            out.append({"row_group": g, "column": column["path"], "type": column["physical_type"],
                        "bloom_filter": has, "offset": ch["bloom_filter_offset"],
                        "length": ch["bloom_filter_length"],
                        "blocks": ch["num_bytes"] // 32 if has else None})
    return out


@pytest.mark.parametrize("file_name", list(PROBED))
def test_cli_info_json(file_name, files, cli):
    f = files[file_name]
    r = run_cli(cli, "parquet", "info", "--json", f.path)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    out = json.loads(r.stdout.decode("utf-8"))
    assert set(out) >= {"file", "chunks"}
    want = info_chunks(f)
    got = [{k: c.get(k) for k in want[0]} for c in out["chunks"]]
    assert len(got) == len(want), f"{len(got)} chunks, parquet_metadata has {len(want)}"
    if got != want:
        labels = [f"chunk {i}" for i in range(len(want))]
        pytest.fail(f"{file_name}: {first_mismatches(got, want, labels)}")


def test_cli_info_text(files, cli):
    f = files["types.parquet"]
    r = run_cli(cli, "parquet", "info", f.path)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    dash = lambda v: "-" if v is None else str(v)
    want = ["\t".join([str(c["row_group"]), c["column"], c["type"],
                       "yes" if c["bloom_filter"] else "no",
                       dash(c["offset"]), dash(c["length"]), dash(c["blocks"])])
            for c in info_chunks(f)]
    assert r.stdout.decode("utf-8").split("\n") == want + [""]


# ---------------------------------------------------------------------------------------------
# Damaged files: refused (CLI exit 2 with a message, Python FormatError)

DAMAGE_KINDS = ["empty", "too-short", "truncated-half", "truncated-tail", "bad-magic-head",
                "bad-magic-tail", "footer-length-too-large", "footer-length-huge", "zeroed-footer",
                "garbage-footer", "filter-offset-past-eof", "filter-offset-near-eof",
                "filter-length-mismatch", "filter-unknown-algorithm", "filter-zero-bytes"]
FOOTER_DAMAGE = [k for k in DAMAGE_KINDS if not k.startswith("filter-")]


@pytest.fixture(scope="session")
def damaged(files, tmp_path_factory) -> dict[str, Path]:
    f = files["types.parquet"]
    chunk = f.column("s")["chunks"][0]
    out = tmp_path_factory.mktemp("damaged")
    paths = {}
    for kind, data in damaged_versions(f.data, chunk).items():
        assert data is not None, f"{kind}: cannot be made from this file"
        paths[kind] = out / f"{kind}.parquet"
        paths[kind].write_bytes(data)
    assert sorted(paths) == sorted(DAMAGE_KINDS)
    return paths


@pytest.mark.parametrize("kind", DAMAGE_KINDS)
def test_damaged_cli(kind, damaged, cli):
    runs = [("probe", cli_probe(cli, "s", damaged[kind], "k7"))]
    if kind in FOOTER_DAMAGE:
        runs.append(("info", run_cli(cli, "parquet", "info", damaged[kind])))
        runs.append(("info --json", run_cli(cli, "parquet", "info", "--json", damaged[kind])))
    for what, r in runs:
        err = r.stderr.decode(errors="replace")
        assert r.returncode == 2, f"parquet {what} on {kind}: exit {r.returncode}; stderr: {err}"
        assert "Parquet" in err or "parquet" in err, f"parquet {what} on {kind}: message {err!r}"


@pytest.mark.parametrize("kind", DAMAGE_KINDS)
def test_damaged_python(kind, damaged, bloomery):
    with pytest.raises(bloomery.FormatError):
        bloomery.parquet_bloom_filters(str(damaged[kind]), "s")


# ---------------------------------------------------------------------------------------------
# The golden set (tests/data/parquet): what C++ unit tests use without npm


def golden_cases(golden: dict):
    for entry in golden["files"]:
        for column in entry["columns"]:
            yield GOLDEN_DIR / entry["file"], entry, column


def test_golden_set_python(golden, bloomery):
    for path, entry, column in golden_cases(golden):
        data = path.read_bytes()
        assert len(data) == entry["size"], path.name
        physical = column["physical_type"]
        filters = bloomery.parquet_bloom_filters(str(path), column["path"])
        assert len(filters) == len(entry["row_groups"])
        for chunk, f in zip(column["chunks"], filters):
            where = f"{path.name} {column['path']} row group {chunk['row_group']}"
            if chunk["bloom_filter_offset"] is None:
                assert f is None, where
                continue
            assert f.num_bytes == chunk["num_bytes"], where
            assert hashlib.sha256(f.bitset()).hexdigest() == chunk["bitset_sha256"], where
            assert f.bitset() == raw_bitset(data, chunk), where
            built = bloomery.ParquetBloomFilter(chunk["num_bytes"], type=physical)
            for value in chunk["distinct"]:
                built.add(py_key(physical, value))
            assert built.bitset() == f.bitset(), where
            for probe in column["probes"]:
                got = py_key(physical, probe["key"]) in f
                assert got == (not probe["excludes"][chunk["row_group"]]), (where, probe)


def test_golden_set_cli(golden, cli):
    for path, entry, column in golden_cases(golden):
        keys = [p["key"] for p in column["probes"]]
        code, out, err = cli_probe_json(cli, path, column["path"], keys, via_args=True)
        assert out is not None, f"{path.name} {column['path']}: exit 2: {err}"
        has = [chunk["bloom_filter_offset"] is not None for chunk in column["chunks"]]
        want = [{"key": p["key"], "row_group": g, "result": expected_result(ex, has[g])}
                for p in column["probes"] for g, ex in enumerate(p["excludes"])]
        assert out["results"] == want, f"{path.name} {column['path']}"


def test_golden_set_matches_duckdb(golden, oracle, tmp_path):
    """expected.json is still DuckDB's word on the committed files (metadata and probes)."""
    jobs = [{"file": str(path), "column": column["path"],
             "keys": [p["key"] for p in column["probes"]]}
            for path, entry, column in golden_cases(golden)]
    (tmp_path / "jobs.json").write_text(json.dumps(jobs), encoding="utf-8")
    oracle.run("probe-batch", tmp_path / "jobs.json", tmp_path / "results.json")
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    for (path, entry, column), result in zip(golden_cases(golden), results):
        assert not result["errors"], (path.name, column["path"], result["errors"])
        want = [p["excludes"] for p in column["probes"]]
        assert result["results"] == want, (path.name, column["path"])
        data = path.read_bytes()
        for chunk in column["chunks"]:
            if chunk["bloom_filter_offset"] is not None:
                assert hashlib.sha256(raw_bitset(data, chunk)).hexdigest() == chunk["bitset_sha256"]
