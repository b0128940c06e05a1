"""The library's kind table (include/bloomery/kinds.hpp) and Python agree: every kind has its
class, exported, stubbed and loaded back as itself, and the CLI knows the same kinds. A kind added
to the table without its Python class fails the import itself (register_kind_table)."""

import os
import pathlib
import re
import subprocess

import pytest

import bloomery
from bloomery import _bloomery

STUB = pathlib.Path(bloomery.__file__).with_name("__init__.pyi").read_text()
KINDS = _bloomery._kind_classes


def make(cls, keys):
    if cls is bloomery.StaticFilter:
        return cls.build(keys, 0.01)
    f = cls(1000, 0.01)
    f.update(keys)
    return f


def test_the_table_has_every_kind():
    assert set(KINDS) == {"bloom", "blocked", "counting", "cuckoo", "scalable", "static",
                          "scalable-cuckoo"}


@pytest.mark.parametrize("name", sorted(KINDS))
def test_each_kind_has_an_exported_stubbed_class_that_loads_back(name, tmp_path):
    cls = KINDS[name]
    assert getattr(bloomery, cls.__name__) is cls
    assert cls.__name__ in bloomery.__all__
    assert issubclass(cls, bloomery.Filter)
    assert re.search(rf"^class {cls.__name__}\(", STUB, re.M), f"{cls.__name__} has no stub"
    keys = [f"k{i}" for i in range(200)]
    f = make(cls, keys)
    assert f.kind == name
    assert repr(f).startswith(f"<bloomery.{cls.__name__} ")
    path = tmp_path / "f.bin"
    f.save(str(path))
    g = bloomery.load(str(path))
    assert type(g) is cls and g == f
    assert type(bloomery.loads(bytes(f))) is cls
    with bloomery.open(str(path)) as m:
        assert m.kind == name
        assert all(k in m for k in keys)


@pytest.mark.skipif(not os.environ.get("BLOOMERY_CLI"), reason="the CLI is not built")
def test_the_cli_knows_the_same_kinds():
    out = subprocess.run([os.environ["BLOOMERY_CLI"], "build", "--help"], capture_output=True,
                         text=True, check=True).stdout
    listed = re.search(r"--kind TEXT:\{([^}]*)\}", out).group(1).split(",")
    assert set(listed) == set(KINDS)
