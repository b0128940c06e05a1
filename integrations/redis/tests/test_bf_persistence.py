"""A restarted server answers exactly as before: BF keys through RDB, through the AOF (the write
commands themselves, then the AOF rewrite's BF.LOADCHUNK chunks), and through an AOF with an RDB
preamble."""

import glob
import os
import time

from bf_data import RESTORING, finish_restores, populate, snapshot


def wait_for_rewrite(r):
    deadline = time.monotonic() + 60
    while True:
        p = r.info("persistence")
        if not p["aof_rewrite_in_progress"] and not p["aof_rewrite_scheduled"]:
            assert p["aof_last_bgrewrite_status"] == "ok"
            return
        assert time.monotonic() < deadline, "the AOF rewrite did not finish"
        time.sleep(0.05)


def aof_files(server, suffix):
    return glob.glob(os.path.join(server.dir, "appendonlydir", "*" + suffix))


def check_restart(server, before, pending):
    server.restart()
    r = server.client()
    assert snapshot(r) == before
    assert before["header-only"][0] == before["half"][0] == RESTORING
    assert "damaged" not in before
    restored, sources = finish_restores(r, pending)
    assert restored == sources


def test_rdb_restart(make_server):
    server = make_server()
    r = server.client()
    pending = populate(r)
    before = snapshot(r)
    assert r.save()
    check_restart(server, before, pending)


def test_aof_restart_replays_the_commands_then_the_rewrite(make_server):
    server = make_server("--appendonly", "yes", "--aof-use-rdb-preamble", "no",
                         "--appendfsync", "always")
    r = server.client()
    pending = populate(r)
    before = snapshot(r)
    server.restart()
    assert snapshot(server.client()) == before

    r = server.client()
    r.bgrewriteaof()
    wait_for_rewrite(r)
    (base,) = aof_files(server, ".base.aof")
    with open(base, "rb") as f:
        text = f.read()
    # The rewrite rebuilds every key from chunks; the write commands are gone.
    assert b"BF.LOADCHUNK" in text and b"BF.MADD" not in text and b"BF.RESERVE" not in text
    check_restart(server, before, pending)


def test_aof_with_rdb_preamble(make_server):
    server = make_server("--appendonly", "yes", "--aof-use-rdb-preamble", "yes",
                         "--appendfsync", "always")
    r = server.client()
    pending = populate(r)
    before = snapshot(r)
    r.bgrewriteaof()
    wait_for_rewrite(r)
    assert aof_files(server, ".base.rdb")
    check_restart(server, before, pending)
