"""Files cross between the CLI and Python in both directions and answer alike, false positives
included: a str key is its UTF-8 bytes, exactly the CLI's line."""

import json
import subprocess

import pytest

import bloomery
from conftest import KIND_NAMES, ALL_KINDS, kind_id, make_filter

KEYS = [f"https://example.com/page/{i}" for i in range(3000)] + ["café", "naïve ☕", "日本語"]
# Absent candidates, enough for a few dozen false positives at 1%: they must match exactly.
CANDIDATES = KEYS[::7] + [f"https://example.org/other/{i}" for i in range(5000)] + ["cafe"]


def run(cli, *args, stdin=None):
    return subprocess.run([cli, *map(str, args)], input=stdin, capture_output=True, check=False)


def cli_positives(cli, path, tmp_path):
    """The keys of CANDIDATES the CLI answers "possibly present" for."""
    query = tmp_path / "candidates.txt"
    query.write_text("\n".join(CANDIDATES) + "\n", encoding="utf-8")
    r = run(cli, "query", path, query)
    assert r.returncode in (0, 1), r.stderr.decode()
    return r.stdout.decode("utf-8").splitlines()


def python_positives(f):
    return [k for k, hit in zip(CANDIDATES, f.contains_many(CANDIDATES)) if hit]


@pytest.mark.parametrize("cls", ALL_KINDS, ids=kind_id)
@pytest.mark.parametrize("seed", [None, "42", "random"], ids=["default-seed", "seed", "keyed"])
def test_cli_file_answers_the_same_in_python(cli, cls, seed, tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_text("\n".join(KEYS) + "\n", encoding="utf-8")
    path = tmp_path / "cli.filter"
    args = ["build", "-q", "-n", 4000, "-p", 0.01, "--kind", KIND_NAMES[cls], "-o", path, keys]
    if seed:
        args[1:1] = ["--seed", seed]
    r = run(cli, *args)
    assert r.returncode == 0, r.stderr.decode()
    f = bloomery.load(path)
    assert type(f) is cls
    assert f.keyed == (seed == "random")
    if seed == "42":
        assert f.seed == 42
    assert all(f.contains_many(KEYS))
    positives = python_positives(f)
    assert positives == cli_positives(cli, path, tmp_path)
    if seed != "random":  # seeded: the same false positives every run, and some were compared
        assert len(positives) > len(KEYS[::7])
    with bloomery.open(path) as mapped:
        assert python_positives(mapped) == positives
    # info() carries the CLI's `info --json` fields with the same values.
    r = run(cli, "info", "--json", path)
    assert r.returncode == 0, r.stderr.decode()
    expected = json.loads(r.stdout)
    got = f.info()
    for name, value in expected.items():
        if isinstance(value, float):
            assert got[name] == pytest.approx(value, rel=1e-5), name  # the CLI prints 6 digits
        else:
            assert got[name] == value, name


@pytest.mark.parametrize("cls", ALL_KINDS, ids=kind_id)
def test_python_file_answers_the_same_in_the_cli(cli, cls, tmp_path):
    f = make_filter(cls, KEYS, capacity=4000)
    path = tmp_path / "py.filter"
    f.save(path)
    assert cli_positives(cli, path, tmp_path) == python_positives(f)
    # The CLI adds keys to the Python file, and Python finds them.
    if cls is not bloomery.StaticFilter:
        more = tmp_path / "more.txt"
        more.write_text("added-by-the-cli\nencore-ü\n", encoding="utf-8")
        r = run(cli, "add", "-q", path, more)
        assert r.returncode == 0, r.stderr.decode()
        g = bloomery.load(path)
        assert "added-by-the-cli" in g and "encore-ü" in g and all(g.contains_many(KEYS))


def test_integer_keys_match_the_cpp_integer_of_that_value(cli, tmp_path):
    """The CLI reads lines (bytes), so an int key differs from its decimal string: the same
    filter answers both, each as its own key."""
    f = bloomery.BloomFilter(1000, 1e-6)
    f.add(12345)
    assert 12345 in f and "12345" not in f
    path = tmp_path / "ints.bloom"
    f.save(path)
    r = run(cli, "query", "-c", path, stdin=b"12345\n")
    assert r.stdout.strip() == b"0"  # the CLI's key is the string "12345"
