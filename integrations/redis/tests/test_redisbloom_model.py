"""The Python model of RedisBloom 2.4 (redisbloom_model.py) against the real RedisBloom: no
server, only the golden data in tests/data/redisbloom-golden (written by RedisBloom v2.4.23).

For each of the 28 golden keys the model replays the recorded creation commands, and then must
give: every command's recorded reply, the recorded BF.INFO / CF.INFO (every field, Size
included), BF.DEBUG / CF.DEBUG, BF.CARD, every probe's EXISTS (and CF.COUNT), and bit / bucket
arrays equal to the key's SCANDUMP data chunks byte for byte. So the model is a trustworthy
oracle for writes to restored RedisBloom keys (test_redisbloom_writes.py)."""

import json
import os

import pytest

import redisbloom_model as model

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "..", "..", "..", "tests", "data", "redisbloom-golden")

with open(os.path.join(GOLDEN, "answers.json")) as f:
    KEYS = json.load(f)["keys"]


def test_the_golden_data_has_every_key():
    assert len(KEYS) == 28
    assert sorted({k["type"] for k in KEYS}) == ["bf", "cf"]


@pytest.mark.parametrize("record", KEYS, ids=[k["key"] for k in KEYS])
def test_the_model_reproduces_redisbloom(record):
    key = model.ModelKey()
    name, kind = record["key"], record["type"].upper()
    for i, command in enumerate(record["commands"]):
        reply = model.apply(key, command["argv"])
        assert reply == command["reply"], (i, command["argv"][:3])
    assert model.apply(key, [kind + ".INFO", name]) == record["info"]
    assert model.apply(key, [kind + ".DEBUG", name]) == record["debug"]
    if kind == "BF":
        assert model.apply(key, ["BF.CARD", name]) == record["card"]
    probes = record["probes"]
    exists = [model.apply(key, [kind + ".EXISTS", name, x]) for x in probes["items"]]
    assert exists == probes["exists"]
    if kind == "CF":
        counts = [model.apply(key, ["CF.COUNT", name, x]) for x in probes["items"]]
        assert counts == probes["count"]
    # Chunk 0 is the header; then one chunk per sub-filter (all of them are under 16 MiB).
    chunks = []
    for chunk in record["scandump"][1:]:
        with open(os.path.join(GOLDEN, chunk["file"]), "rb") as f:
            chunks.append(f.read())
    if kind == "CF" and key.value.num_items == 0:
        assert record["scandump"] == []  # RedisBloom does not dump an empty cuckoo filter
    else:
        assert key.value.arrays() == chunks


def test_replay_builds_the_same_key():
    for record in KEYS:
        key = model.replay(record)
        kind = record["type"].upper()
        assert model.apply(key, [kind + ".INFO", record["key"]]) == record["info"]
