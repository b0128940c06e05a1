"""bloomery's Guava interop checked against the real Guava (Debian libguava-java 31.1).

GuavaOracle.java (compiled once per run) creates Guava filters, writes their streams and answers
mightContain; the bloomery CLI (BLOOMERY_CLI) and Python bindings (`bloomery` on PYTHONPATH)
must read those streams and answer the same, write byte-identical streams, size filters the
same, and write streams Guava reads back with the same answers. README.md beside this file says
how to run it. Without java/javac or the Guava jar the test is skipped, except under CI=true,
where that is a failure; without the CLI or the bindings, the tests that need them are skipped.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import string
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ORACLE_SOURCE = HERE / "GuavaOracle.java"
GUAVA_JAR = Path(os.environ.get("BLOOMERY_GUAVA_JAR", "/usr/share/java/guava.jar"))
IN_CI = os.environ.get("CI") == "true"

JAVA_TIMEOUT = 180  # seconds for one JVM run over every case (about a second on 2 cores)
CLI_TIMEOUT = 60
STRATEGY_NAMES = {0: "MURMUR128_MITZ_32", 1: "MURMUR128_MITZ_64"}  # by the stream's ordinal
FUNNELS = ("string", "chars", "long", "int")
EXTRA_KEYS = 50  # keys bloomery adds to a Guava MITZ_32 stream before Guava reads it back
MAX_ALLOCATED_BYTES = 64 << 20  # the largest filter the shapes test builds (GuavaOracle agrees)


# ---------------------------------------------------------------------------------------------
# The case matrix


@dataclass(frozen=True)
class Case:
    funnel: str
    strategy: int  # 64: MURMUR128_MITZ_64 (the public create), 32: MURMUR128_MITZ_32
    n: int  # expected insertions
    fpp: float
    keys: int  # keys inserted (and as many never-inserted ones probed)
    label: str

    @property
    def name(self) -> str:
        return f"{self.funnel}-mitz{self.strategy}-{self.label}"


def _case_matrix() -> list[Case]:
    cases = []
    for funnel in FUNNELS:
        for strategy in (64, 32):
            cases.append(Case(funnel, strategy, 1000, 0.01, 1000, "n1000"))
            cases.append(Case(funnel, strategy, 5000, 0.001, 3000, "n5000"))
        # 4000 keys in a filter sized for 100: every bit set, approximateElementCount throws.
        cases.append(Case(funnel, 64, 100, 0.03, 4000, "overfilled"))
        cases.append(Case(funnel, 64, 0, 0.01, 3, "n0"))  # Guava sizes n = 0 as n = 1
    return cases


CASES = {case.name: case for case in _case_matrix()}
ALL_CASES = list(CASES)
MITZ64_CASES = [name for name, case in CASES.items() if case.strategy == 64]

# The shapes grid: every n with every fpp (each passed to Java as its Python repr), and a few
# fpps Guava refuses.
SHAPE_NS = [0, 1, 2, 3, 7, 10, 100, 1000, 12345, 10**6, 10**8, 2**31, 2**40]
SHAPE_FPPS = [0.5, 0.3, 0.1, 0.03, 0.01, 0.001, 1e-5, 1e-9, 1e-15, 1e-30, 1e-60, 1e-80, 0.999,
              0.99999]
SHAPE_REFUSED = [(5, 0.0), (5, 1.0), (5, -0.5), (5, 1.5), (5, math.nan), (5, math.inf)]

# Damaged versions of a Guava stream (of the case DAMAGED_BASE): bloomery refuses every one.
DAMAGED_BASE = "string-mitz64-n1000"


def _with_word_count(stream: bytes, words: int) -> bytes:
    return stream[:2] + (words & 0xFFFFFFFF).to_bytes(4, "big") + stream[6:]


DAMAGES = {
    "empty": lambda s: b"",
    "truncated-header": lambda s: s[:4],
    "truncated-words": lambda s: s[:-5],
    "strategy-2": lambda s: b"\x02" + s[1:],
    "strategy-minus-1": lambda s: b"\xff" + s[1:],
    "zero-hashes": lambda s: s[:1] + b"\x00" + s[2:],
    "word-count-too-large": lambda s: _with_word_count(s, stream_header(s)[2] + 1),
    "word-count-zero": lambda s: _with_word_count(s, 0)[:6],
    "word-count-negative": lambda s: _with_word_count(s, -1),
    "trailing-bytes": lambda s: s + bytes(8),
}
# Guava's readFrom reads a stream, not a file: it stops after the last word and never sees
# trailing bytes, so it accepts them (not asserted); bloomery reads whole files and refuses
# them. Every other damage Guava refuses too: EOFException for the short ones, an IOException
# "Unable to deserialize BloomFilter from InputStream. ..." for a bad strategy, k or word count.
GUAVA_REFUSES = [kind for kind in DAMAGES if kind != "trailing-bytes"]


# ---------------------------------------------------------------------------------------------
# Keys: deterministic, unique, never empty, no line breaks (the files hold one key a line, and
# Python's str.splitlines would also split at U+0085 or U+2028, so none of those either)

_ASCII = string.ascii_letters + string.digits + "-_.:/?#@!$&'()*+,;=~%"
_LATIN1 = "àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝßµ¿¡«»°±§"
_CYRILLIC = "".join(map(chr, range(0x0410, 0x0450))) + "ёЁ"
_CJK = (0x4E00, 0x9FFF)
# Outside the BMP: two UTF-16 units each (surrogate pairs for the chars funnel), 4 UTF-8 bytes.
_ASTRAL = [(0x1F300, 0x1F5FF), (0x1F600, 0x1F64F), (0x1F900, 0x1F9FF), (0x1D400, 0x1D7FF),
           (0x20000, 0x2A6DF)]

# Always among a text funnel's keys: each script alone, and lengths at MurmurHash3's 16-byte
# blocks (16 UTF-8 bytes; 16 UTF-16 bytes for the chars funnel).
_FIXED_TEXT = ["a", "é", "Ж", "中", "😀", "🙂🙃", "𝄞", "naïve café", "Москва", "東京都",
               "0123456789abcdef", "0123456789abcdefg", "x" * 100, "é" * 8, "😀" * 4,
               "Grüße, Мир! 世界 🌍"]
_FIXED_LONG = [0, 1, -1, 2**63 - 1, -(2**63), 2**63 - 2, -(2**63) + 1, 2**31 - 1, -(2**31), 2**31,
               -(2**31) - 1, 2**32, 2**32 - 1, 127, 128, -128, 255, 256, 65535, 10**18, -(10**18)]
_FIXED_INT = [0, 1, -1, 2**31 - 1, -(2**31), 2**31 - 2, -(2**31) + 1, 127, 128, -128, -129, 255,
              256, 65535, 65536, -65536, 10**9, -(10**9)]


def _random_char(rng: random.Random, script: str) -> str:
    if script == "ascii":
        return rng.choice(_ASCII)
    if script == "latin1":
        return rng.choice(_LATIN1)
    if script == "cyrillic":
        return rng.choice(_CYRILLIC)
    if script == "cjk":
        return chr(rng.randint(*_CJK))
    return chr(rng.randint(*rng.choice(_ASTRAL)))


def _random_text(rng: random.Random) -> str:
    scripts = ["ascii", "latin1", "cyrillic", "cjk", "astral"]
    style = rng.randrange(4)
    if style == 0:  # URL-like ASCII, the common case
        return f"https://example.com/{rng.choice(['a', 'page', 'item'])}/{rng.randrange(10**9)}"
    if style == 1:  # one script
        script = rng.choice(scripts)
        return "".join(_random_char(rng, script) for _ in range(rng.randint(1, 24)))
    # Mixed scripts, words separated by spaces (never at either end).
    words = []
    for _ in range(rng.randint(1, 4)):
        words.append("".join(_random_char(rng, rng.choice(scripts))
                             for _ in range(rng.randint(1, 10))))
    return " ".join(words)


def _random_long(rng: random.Random) -> int:
    style = rng.randrange(4)
    if style == 0:
        return rng.randrange(-(2**63), 2**63)
    if style == 1:
        return rng.randrange(-(10**6), 10**6)
    if style == 2:  # near a power of two, either sign
        v = 2 ** rng.randrange(63) + rng.randrange(-3, 4)
        return max(-(2**63), min(2**63 - 1, v if rng.random() < 0.5 else -v))
    return rng.randrange(-(2**40), 2**40)


def _random_int(rng: random.Random) -> int:
    if rng.random() < 0.5:
        return rng.randrange(-(2**31), 2**31)
    return rng.randrange(-(10**5), 10**5)


def make_keys(funnel: str, count: int, rng: random.Random) -> list:
    """`count` distinct keys for the funnel (str for string and chars, int for long and int),
    the fixed edge cases among them (as many as fit), in a random order."""
    fixed, draw = {
        "string": (_FIXED_TEXT, _random_text),
        "chars": (_FIXED_TEXT, _random_text),
        "long": (_FIXED_LONG, _random_long),
        "int": (_FIXED_INT, _random_int),
    }[funnel]
    keys = list(dict.fromkeys(fixed))[:count]
    seen = set(keys)
    while len(keys) < count:
        key = draw(rng)
        if key not in seen:
            seen.add(key)
            keys.append(key)
    rng.shuffle(keys)
    return keys


def key_lines(keys) -> bytes:
    return "".join(f"{k}\n" for k in keys).encode("utf-8")


def output_lines(out: bytes) -> list[str]:
    """A CLI's stdout as lines (split at "\\n" only, as the key files are)."""
    text = out.decode("utf-8")
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n") if text else []


def stream_header(stream: bytes) -> tuple[int, int, int]:
    """(strategy ordinal, k, word count) of a Guava stream."""
    return stream[0], stream[1], int.from_bytes(stream[2:6], "big", signed=True)


def bits_set(stream: bytes) -> int:
    return sum(bin(b).count("1") for b in stream[6:])


def first_difference(got: bytes, want: bytes) -> str:
    if len(got) != len(want):
        return (f"{len(got)} bytes against Guava's {len(want)} (headers {got[:6].hex()} and "
                f"{want[:6].hex()})")
    at = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b)
    return (f"bytes differ first at offset {at} of {len(want)} (headers {got[:6].hex()} and "
            f"{want[:6].hex()})")


def expect_same_answers(got: list[bool], want: list[bool], keys: list, what: str) -> None:
    """Fails, naming how many answers differ and the first few keys, unless got == want."""
    if len(got) != len(want):
        pytest.fail(f"{what}: {len(got)} answers for {len(want)} probes")
    wrong = [(k, g, w) for k, g, w in zip(keys, got, want) if g != w]
    if wrong:
        shown = ", ".join(f"{k!r}: {int(g)} (want {int(w)})" for k, g, w in wrong[:5])
        pytest.fail(f"{what}: {len(wrong)} of {len(want)} probes differ, e.g. {shown}")


def read_answers(path: Path) -> list[bool]:
    return [line == "1" for line in path.read_text().split()]


def read_stats(path: Path) -> tuple[int | None, float]:
    count, fpp = path.read_text().split()
    return (None if count == "error" else int(count)), float(fpp)


def run_cli(cli: str, *args) -> subprocess.CompletedProcess:
    return subprocess.run([cli, *map(str, args)], capture_output=True, timeout=CLI_TIMEOUT,
                          check=False, stdin=subprocess.DEVNULL)


def java_text(p: float) -> str:
    """p as Double.parseDouble reads it."""
    if math.isnan(p):
        return "NaN"
    if math.isinf(p):
        return "Infinity" if p > 0 else "-Infinity"
    return repr(p)


# ---------------------------------------------------------------------------------------------
# Fixtures: the tools, the compiled oracle, the cases Guava wrote, what bloomery wrote back


def _unavailable(reason: str):
    if IN_CI:
        pytest.fail(f"{reason}; under CI=true the Guava interop test must run", pytrace=False)
    pytest.skip(reason)


class Oracle:
    def __init__(self, java: str, classpath: str):
        self.java = java
        self.classpath = classpath

    def run(self, mode: str, first: Path, second: Path) -> None:
        cmd = [self.java, "-cp", self.classpath, "GuavaOracle", mode, str(first), str(second)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=JAVA_TIMEOUT,
                           stdin=subprocess.DEVNULL, check=False)
        assert r.returncode == 0, f"GuavaOracle {mode} exited {r.returncode}:\n{r.stderr}"


@pytest.fixture(scope="module")
def oracle(tmp_path_factory) -> Oracle:
    javac, java = shutil.which("javac"), shutil.which("java")
    if not javac or not java:
        _unavailable("javac or java is not on PATH (Debian: default-jdk-headless), so there is "
                     "no Guava to compare with")
    if not GUAVA_JAR.is_file():
        _unavailable(f"no Guava jar at {GUAVA_JAR} (Debian: libguava-java; or set "
                     "BLOOMERY_GUAVA_JAR)")
    classes = tmp_path_factory.mktemp("oracle-classes")
    r = subprocess.run([javac, "-nowarn", "-cp", str(GUAVA_JAR), "-d", str(classes),
                        str(ORACLE_SOURCE)],
                       capture_output=True, text=True, timeout=JAVA_TIMEOUT, check=False)
    assert r.returncode == 0, f"javac {ORACLE_SOURCE.name} failed:\n{r.stderr}"
    return Oracle(java, f"{GUAVA_JAR}{os.pathsep}{classes}")


@pytest.fixture(scope="module")
def bloomery():
    """The Python bindings (imported here, so that collection works without them)."""
    try:
        import bloomery as module
    except ImportError as e:
        pytest.skip(f"the bloomery Python bindings are not importable ({e}); set PYTHONPATH")
    assert hasattr(module, "GuavaBloomFilter"), "bloomery has no GuavaBloomFilter"
    return module


@pytest.fixture(scope="module")
def cli() -> str:
    path = os.environ.get("BLOOMERY_CLI")
    if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
        pytest.skip("the bloomery CLI is not built (BLOOMERY_CLI unset): its Guava interop is "
                    "not tested")
    return path


@dataclass
class GuavaCase:
    """One case as Guava ran it."""
    case: Case
    inserted: list
    probes: list  # the inserted keys and as many others, shuffled
    extras: list  # EXTRA_KEYS more keys, neither inserted nor probed
    insert_file: Path
    probe_file: Path
    stream_file: Path
    stream: bytes  # writeTo's bytes
    answers: list[bool]  # mightContain of each probe
    puts: list[bool]  # put's result for each inserted key
    approximate_count: int | None  # None: Guava threw (every bit set)
    expected_fpp: float


@pytest.fixture(scope="module")
def guava(oracle, tmp_path_factory) -> dict[str, GuavaCase]:
    """Every case of the matrix, written and answered by Guava (GuavaOracle write)."""
    work = tmp_path_factory.mktemp("guava-cases")
    rows, made = [], {}
    for name, case in CASES.items():
        rng = random.Random(f"bloomery-guava-{name}")
        keys = make_keys(case.funnel, 2 * case.keys + EXTRA_KEYS, rng)
        inserted, absent = keys[:case.keys], keys[case.keys:2 * case.keys]
        probes = inserted + absent
        rng.shuffle(probes)
        insert_file, probe_file = work / f"{name}.inserts", work / f"{name}.probes"
        insert_file.write_bytes(key_lines(inserted))
        probe_file.write_bytes(key_lines(probes))
        made[name] = (inserted, probes, keys[2 * case.keys:], insert_file, probe_file)
        rows.append(f"{name}\t{case.funnel}\t{case.strategy}\t{case.n}\t{case.fpp!r}\t"
                    f"{insert_file}\t{probe_file}\n")
    cases_file = work / "cases.tsv"
    cases_file.write_text("".join(rows), encoding="utf-8")
    oracle.run("write", cases_file, work)

    result = {}
    for name, (inserted, probes, extras, insert_file, probe_file) in made.items():
        stream_file = work / f"{name}.guava"
        count, fpp = read_stats(work / f"{name}.stats")
        result[name] = GuavaCase(CASES[name], inserted, probes, extras, insert_file, probe_file,
                                 stream_file, stream_file.read_bytes(),
                                 read_answers(work / f"{name}.answers"),
                                 read_answers(work / f"{name}.puts"), count, fpp)
        # The oracle itself: an answer per probe, no false negative.
        g = result[name]
        assert len(g.answers) == len(probes) and len(g.puts) == len(inserted), name
        inserted_set = set(inserted)
        assert all(a for k, a in zip(probes, g.answers) if k in inserted_set), name
    return result


@pytest.fixture(scope="module")
def cli_builds(cli, guava, tmp_path_factory) -> dict[str, tuple[Path, subprocess.CompletedProcess]]:
    """`bloomery build --format guava` of each MITZ_64 case's keys: (output, the process)."""
    work = tmp_path_factory.mktemp("cli-builds")
    builds = {}
    for name in MITZ64_CASES:
        g = guava[name]
        out = work / f"{name}.bloomery"
        r = run_cli(cli, "build", "--format", "guava", "--funnel", g.case.funnel, "-n", g.case.n,
                    "-p", repr(g.case.fpp), "-o", out, "-q", g.insert_file)
        builds[name] = (out, r)
    return builds


@dataclass
class RoundTrip:
    """A stream bloomery wrote for a case, and Guava's reading of it (GuavaOracle read)."""
    stream: bytes | None  # None: bloomery could not write it (see problem)
    problem: str | None
    probes: list  # what Guava was asked: the case's probes (and, for MITZ_32, the extras)
    guava_answers: list[bool] | None = None
    guava_error: str | None = None
    guava_stats: tuple[int | None, float] | None = None


@pytest.fixture(scope="module")
def roundtrip(oracle, guava, cli_builds, bloomery, tmp_path_factory) -> dict[str, RoundTrip]:
    """Each case's stream as bloomery writes it, read back by Guava: for MITZ_64 the CLI's
    build output, for MITZ_32 Guava's stream extended by EXTRA_KEYS keys in Python."""
    work = tmp_path_factory.mktemp("roundtrip")
    trips, rows = {}, []
    for name, g in guava.items():
        stream, problem, probes = None, None, g.probes
        if g.case.strategy == 64:
            out, r = cli_builds[name]
            if r.returncode == 0 and out.is_file():
                stream = out.read_bytes()
            else:
                problem = (f"the CLI build exited {r.returncode}: "
                           f"{r.stderr.decode(errors='replace')}")
        else:
            probes = g.probes + g.extras
            try:
                f = bloomery.GuavaBloomFilter.from_bytes(g.stream, funnel=g.case.funnel)
                for key in g.extras:
                    f.add(key)
                stream = f.to_bytes()
            except Exception as e:  # reported by the test of this case
                problem = f"Python could not extend Guava's stream: {e!r}"
        trips[name] = RoundTrip(stream, problem, probes)
        if stream is None:
            continue
        (work / f"{name}.bloomery").write_bytes(stream)
        probe_file = work / f"{name}.read-probes"
        probe_file.write_bytes(key_lines(probes))
        rows.append(f"{name}\t{g.case.funnel}\t{g.case.strategy}\t{g.case.n}\t{g.case.fpp!r}\t"
                    f"{g.insert_file}\t{probe_file}\n")
    cases_file = work / "read-cases.tsv"
    cases_file.write_text("".join(rows), encoding="utf-8")
    oracle.run("read", cases_file, work)
    for name, trip in trips.items():
        if trip.stream is None:
            continue
        error = work / f"{name}.bloomery.error"
        if error.exists():
            trip.guava_error = error.read_text()
        else:
            trip.guava_answers = read_answers(work / f"{name}.bloomery.answers")
            trip.guava_stats = read_stats(work / f"{name}.bloomery.stats")
    return trips


@pytest.fixture(scope="module")
def damaged(oracle, guava, tmp_path_factory) -> dict[str, tuple[Path, str | None]]:
    """Each damage of DAMAGED_BASE's Guava stream: (its file, Guava's readFrom error or None)."""
    work = tmp_path_factory.mktemp("damaged")
    base = guava[DAMAGED_BASE]
    rows = []
    for kind, damage in DAMAGES.items():
        (work / f"{kind}.bloomery").write_bytes(damage(base.stream))
        rows.append(f"{kind}\t{base.case.funnel}\t64\t0\t0.5\t{base.insert_file}\t"
                    f"{base.probe_file}\n")
    cases_file = work / "damaged.tsv"
    cases_file.write_text("".join(rows), encoding="utf-8")
    oracle.run("read", cases_file, work)
    result = {}
    for kind in DAMAGES:
        error = work / f"{kind}.bloomery.error"
        result[kind] = (work / f"{kind}.bloomery", error.read_text() if error.exists() else None)
    return result


@pytest.fixture(scope="module")
def shapes(oracle, tmp_path_factory) -> list[tuple[int, float, tuple[int, int] | str]]:
    """Guava's (k, words) of create(stringFunnel, n, fpp) over the grid, or its refusal text."""
    work = tmp_path_factory.mktemp("shapes")
    grid = [(n, p) for n in SHAPE_NS for p in SHAPE_FPPS] + SHAPE_REFUSED
    by_text = {(str(n), java_text(p)): (n, p) for n, p in grid}
    grid_file, out_file = work / "grid.tsv", work / "shapes.tsv"
    grid_file.write_text("".join(f"{n}\t{java_text(p)}\n" for n, p in grid), encoding="utf-8")
    oracle.run("shapes", grid_file, out_file)
    rows = []
    for line in out_file.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        n, p = by_text[(fields[0], fields[1])]
        if fields[2] == "error":
            rows.append((n, p, "refused: " + fields[3]))
        else:
            rows.append((n, p, (int(fields[2]), int(fields[3]))))
    assert len(rows) == len(grid), f"GuavaOracle shapes gave {len(rows)} rows for {len(grid)}"
    return rows


# ---------------------------------------------------------------------------------------------
# a. Python reads Guava's streams and answers as mightContain


@pytest.mark.parametrize("name", ALL_CASES)
def test_python_answers_guava_streams(name, guava, bloomery):
    g = guava[name]
    f = bloomery.GuavaBloomFilter.from_bytes(g.stream, funnel=g.case.funnel)
    answers = [key in f for key in g.probes]
    expect_same_answers(answers, g.answers, g.probes, f"{name}: Python `in` against Guava")
    if g.case.funnel == "string":  # bytes keys are the UTF-8 text's bytes
        as_bytes = [key.encode("utf-8") in f for key in g.probes]
        expect_same_answers(as_bytes, g.answers, g.probes, f"{name}: bytes keys against Guava")
    missing = [k for k in g.inserted if k not in f]
    assert not missing, f"{name}: {len(missing)} of {len(g.inserted)} inserted keys answer False"

    ordinal, k, words = stream_header(g.stream)
    assert f.funnel == g.case.funnel
    assert f.strategy == STRATEGY_NAMES[ordinal], name
    assert (f.hashes, f.bits) == (k, words * 64), name
    if g.approximate_count is not None:
        assert f.approximate_count == g.approximate_count, (
            f"{name}: approximate_count {f.approximate_count}, Guava's {g.approximate_count}")
    assert math.isclose(f.estimated_fpr, g.expected_fpp, rel_tol=1e-12), (
        f"{name}: estimated_fpr {f.estimated_fpr!r}, Guava's expectedFpp {g.expected_fpp!r}")
    again = f.to_bytes()
    assert again == g.stream, (
        f"{name}: from_bytes then to_bytes: {first_difference(again, g.stream)}")


# ---------------------------------------------------------------------------------------------
# b. The CLI's query reads Guava's streams and answers as mightContain


@pytest.mark.parametrize("name", ALL_CASES)
def test_cli_query_answers_guava_streams(name, guava, cli):
    g = guava[name]
    lines = [str(k) for k in g.probes]
    positive = [line for line, a in zip(lines, g.answers) if a]
    negative = [line for line, a in zip(lines, g.answers) if not a]
    base = ["query", "--format", "guava", "--funnel", g.case.funnel, "-q"]
    for flags, want in (([], positive), (["-v"], negative)):
        what = f"{name}: query {' '.join(flags)} of {len(lines)} probes"
        r = run_cli(cli, *base, *flags, g.stream_file, g.probe_file)
        assert r.returncode == (0 if want else 1), (
            f"{what} exited {r.returncode} for {len(want)} lines: "
            f"{r.stderr.decode(errors='replace')}")
        got = output_lines(r.stdout)
        if got != want:
            at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
                      min(len(got), len(want)))
            pytest.fail(f"{what}: printed {len(got)} lines, Guava's answers give {len(want)}; "
                        f"first difference at line {at + 1}: "
                        f"{got[at] if at < len(got) else None!r} against "
                        f"{want[at] if at < len(want) else None!r}")
        r = run_cli(cli, *base, "-c", *flags, g.stream_file, g.probe_file)
        assert r.returncode == (0 if want else 1), f"{what} -c exited {r.returncode}"
        assert r.stdout.decode().strip() == str(len(want)), (
            f"{what} -c printed {r.stdout!r}, Guava's answers give {len(want)}")


# ---------------------------------------------------------------------------------------------
# c. bloomery creates filters byte-identical to Guava's (MITZ_64, the only one Guava creates)


@pytest.mark.parametrize("name", MITZ64_CASES)
def test_python_creates_guava_bytes(name, guava, bloomery):
    g = guava[name]
    f = bloomery.GuavaBloomFilter(g.case.n, g.case.fpp, funnel=g.case.funnel)
    added = [f.add(key) for key in g.inserted]
    expect_same_answers(added, g.puts, g.inserted, f"{name}: add() against Guava's put()")
    stream = f.to_bytes()
    assert stream == g.stream, f"{name}: Python's stream: {first_difference(stream, g.stream)}"


@pytest.mark.parametrize("name", MITZ64_CASES)
def test_cli_builds_guava_bytes(name, guava, cli_builds):
    g = guava[name]
    out, r = cli_builds[name]
    assert r.returncode == 0, (
        f"{name}: build exited {r.returncode}: {r.stderr.decode(errors='replace')}")
    stream = out.read_bytes()
    assert stream == g.stream, (
        f"{name}: the CLI's stream of {len(g.inserted)} keys: {first_difference(stream, g.stream)}")


# ---------------------------------------------------------------------------------------------
# d. Guava reads what bloomery writes and answers as bloomery does


@pytest.mark.parametrize("name", ALL_CASES)
def test_guava_reads_bloomery_streams(name, guava, roundtrip, bloomery):
    g, trip = guava[name], roundtrip[name]
    assert trip.problem is None, f"{name}: {trip.problem}"
    assert trip.guava_error is None, (
        f"{name}: Guava's readFrom refused bloomery's stream: {trip.guava_error}")
    f = bloomery.GuavaBloomFilter.from_bytes(trip.stream, funnel=g.case.funnel)
    ours = [key in f for key in trip.probes]
    expect_same_answers(trip.guava_answers, ours, trip.probes,
                        f"{name}: Guava on bloomery's stream against Python `in`")
    count, fpp = trip.guava_stats
    if count is not None:
        assert f.approximate_count == count, (
            f"{name}: approximate_count {f.approximate_count}, Guava's {count} on bloomery's "
            "stream")
    assert math.isclose(f.estimated_fpr, fpp, rel_tol=1e-12), f"{name}: expectedFpp {fpp!r}"

    if g.case.strategy == 64:
        if trip.stream == g.stream:  # unchanged: Guava answers on it as on its own
            expect_same_answers(trip.guava_answers, g.answers, g.probes,
                                f"{name}: Guava on the CLI's stream against Guava's own")
    else:
        # The MITZ_32 stream bloomery extended: the extra keys are there for Guava, and nothing
        # Guava found before was lost.
        probed = len(g.probes)
        extras = trip.guava_answers[probed:]
        assert all(extras), (
            f"{name}: Guava misses {extras.count(False)} of the {len(extras)} keys bloomery added")
        lost = [k for k, before, after in zip(g.probes, g.answers, trip.guava_answers)
                if before and not after]
        assert not lost, (
            f"{name}: {len(lost)} of {probed} probes no longer answer 1, e.g. {lost[:3]!r}")


# ---------------------------------------------------------------------------------------------
# e. Sizing: bloomery's shape of (n, fpp) is Guava's, refusals included


def test_shapes_match_guava(shapes, bloomery):
    mismatches, built = [], 0
    for n, p, want in shapes:
        try:
            got = tuple(bloomery.guava_shape(n, p))
        except ValueError as e:
            got = f"ValueError: {e}"
        if isinstance(want, str):  # Guava refused
            if not isinstance(got, str):
                mismatches.append(f"n={n} p={p!r}: Guava {want}, bloomery (words, k) = {got}")
                continue
            try:
                bloomery.GuavaBloomFilter(n, p)
                mismatches.append(f"n={n} p={p!r}: GuavaBloomFilter accepted what Guava refused")
            except ValueError:
                pass
            continue
        k, words = want
        if got != (words, k):
            mismatches.append(f"n={n} p={p!r}: Guava (words, k) = {(words, k)}, bloomery {got}")
            continue
        if words * 8 <= MAX_ALLOCATED_BYTES:
            f = bloomery.GuavaBloomFilter(n, p)
            built += 1
            if (f.hashes, f.bits) != (k, words * 64):
                mismatches.append(f"n={n} p={p!r}: GuavaBloomFilter has k={f.hashes} "
                                  f"bits={f.bits}, Guava k={k} bits={words * 64}")
            del f
    assert not mismatches, (f"{len(mismatches)} of {len(shapes)} grid points differ from Guava "
                            f"({built} filters built):\n" + "\n".join(mismatches[:25]))


# ---------------------------------------------------------------------------------------------
# f. `info --format guava --json` describes a Guava stream as Guava does


@pytest.mark.parametrize("name", ALL_CASES)
def test_cli_info_matches_guava(name, guava, cli):
    g = guava[name]
    r = run_cli(cli, "info", "--format", "guava", "--json", g.stream_file)
    assert r.returncode == 0, (
        f"{name}: info exited {r.returncode}: {r.stderr.decode(errors='replace')}")
    info = json.loads(r.stdout)
    ordinal, k, words = stream_header(g.stream)
    assert info["format"] == "guava", name
    assert info["strategy"] == STRATEGY_NAMES[ordinal], name
    assert (info["hashes"], info["bits"]) == (k, words * 64), name
    assert info["bits_set"] == bits_set(g.stream), name
    if g.approximate_count is not None:
        assert info["approximate_count"] == g.approximate_count, (
            f"{name}: approximate_count {info['approximate_count']}, Guava's {g.approximate_count}")
    assert math.isclose(info["estimated_fpr"], g.expected_fpp, rel_tol=1e-12), (
        f"{name}: estimated_fpr {info['estimated_fpr']!r}, Guava's expectedFpp "
        f"{g.expected_fpp!r} (the JSON needs 17 significant digits)")


# ---------------------------------------------------------------------------------------------
# g. Damaged streams are refused: by Guava (but trailing bytes), by Python and by the CLI


@pytest.mark.parametrize("kind", GUAVA_REFUSES)
def test_guava_refuses_damaged_streams(kind, damaged):
    _, error = damaged[kind]
    assert error is not None, f"Guava's readFrom accepted the damaged stream {kind!r}"


@pytest.mark.parametrize("kind", list(DAMAGES))
def test_python_refuses_damaged_streams(kind, damaged, bloomery):
    path, _ = damaged[kind]
    with pytest.raises(bloomery.FormatError):
        bloomery.GuavaBloomFilter.from_bytes(path.read_bytes(), funnel="string")


@pytest.mark.parametrize("kind", list(DAMAGES))
def test_cli_refuses_damaged_streams(kind, damaged, guava, cli):
    path, _ = damaged[kind]
    r = run_cli(cli, "query", "--format", "guava", "--funnel", "string", "-q", path,
                guava[DAMAGED_BASE].probe_file)
    stderr = r.stderr.decode(errors="replace")
    assert r.returncode == 2, f"{kind}: query exited {r.returncode} (stderr: {stderr!r})"
    assert path.name in stderr, f"{kind}: stderr does not name {path.name}: {stderr!r}"
