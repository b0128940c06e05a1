"""RDB files written by earlier versions of the module still load and answer as they did.

data/rdb-encoding-1.rdb was saved by bloomery 0.1.0's module (RDB encoding 1, the payload as one
string; the module now writes encoding 2, the payload in 16 MiB strings): a scaling and a
NONSCALING BF key, a CF key with a deletion, and a BF and a CF key each half-way through a
LOADCHUNK restore. data/rdb-encoding-1.json holds that module's INFO and MEXISTS replies."""

import json
import os
import shutil

import pytest
import redis

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
ITEMS = ["item:%d" % i for i in range(500)]
PROBES = ["probe:%d" % i for i in range(500)]
KINDS = {"bf-scaling": "BF", "bf-nonscaling": "BF", "cf": "CF"}


def answers(c):
    out = {}
    for key, kind in KINDS.items():
        info = [x.decode() if isinstance(x, bytes) else x
                for x in c.execute_command(kind + ".INFO", key)]
        out[key] = {"info": info, "items": c.execute_command(kind + ".MEXISTS", key, *ITEMS),
                    "probes": c.execute_command(kind + ".MEXISTS", key, *PROBES)}
    return out


def without_sizes(a):
    """The replies less INFO's Size, which counts the module's own bookkeeping too (its size may
    change between versions; the filters' bits do not)."""
    out = {}
    for key, replies in a.items():
        at = replies["info"].index("Size")
        info = replies["info"][:at] + replies["info"][at + 2:]
        out[key] = dict(replies, info=info)
    return out


def test_an_rdb_of_encoding_1_loads_and_answers_as_before(make_server, tmp_path):
    shutil.copy(os.path.join(DATA, "rdb-encoding-1.rdb"), tmp_path / "dump.rdb")
    with open(os.path.join(DATA, "rdb-encoding-1.json")) as f:
        recorded = json.load(f)
    server = make_server(directory=str(tmp_path))
    c = server.client()
    assert without_sizes(answers(c)) == without_sizes(recorded)
    for key, kind in (("bf-restoring", "BF"), ("cf-restoring", "CF")):
        with pytest.raises(redis.ResponseError, match="being restored"):
            c.execute_command(kind + ".EXISTS", key, "x")
    # Saved again in the current encoding, and loaded back.
    assert c.save()
    server.restart()
    assert without_sizes(answers(server.client())) == without_sizes(recorded)
