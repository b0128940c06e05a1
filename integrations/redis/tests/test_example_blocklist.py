"""bloomery-blocklist --redis against a real redis-server: the example fills a Redis set per list
(bloomery:blocklist:urls, bloomery:blocklist:senders) and asks SISMEMBER only when its filter
says "possibly". No blocked entry may be let through, and the remote calls are exactly the
filter's positives."""

import json
import os
import subprocess

import pytest

BINARY = os.path.join(os.environ.get("BLOOMERY_EXAMPLES_DIR", ""), "blocklist",
                      "bloomery-blocklist")


def test_blocklist_asks_redis_only_on_possibly(make_server):
    if not os.path.exists(BINARY):
        pytest.skip(f"{BINARY} is not built (set BLOOMERY_EXAMPLES_DIR to the examples' build dir)")
    server = make_server()
    address = f"127.0.0.1:{server.port}"
    run = subprocess.run([BINARY, "--json", "--redis", address, "--urls", "20000", "--senders",
                          "10000", "--queries", "40000", "--baseline", "500", "--updates", "1"],
                         capture_output=True, text=True, timeout=120)
    if run.returncode == 2 and "needs hiredis" in run.stderr:
        pytest.skip("bloomery-blocklist was built without hiredis")
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["params"]["list"] == "redis " + address
    client = server.client()
    for name, r in out["results"].items():
        assert r["blocked_missed"] == 0, name
        assert r["swap_missed"] == 0 and r["torn_snapshots"] == 0, name
        assert r["remote_calls"] == r["filter_positives"], name
        assert 0 < r["remote_calls"] < r["clean_queries"], name
        # The set the example asked is the whole list.
        assert client.scard("bloomery:blocklist:" + name) == r["entries"], name
