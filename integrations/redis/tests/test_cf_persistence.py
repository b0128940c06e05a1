"""A restarted server answers exactly as before: CF keys through RDB, through the AOF (the write
commands themselves, LOADCHUNK data chunks included, then the AOF rewrite's CF.LOADCHUNK chunks),
and through an AOF with an RDB preamble; a filter keeps its fingerprint width across a restart
with another CF_FINGERPRINT_BITS."""

from cf_data import PROBES, RESTORING, dump, finish_restores, items, populate, snapshot
from test_bf_persistence import aof_files, wait_for_rewrite


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
    (incr,) = aof_files(server, ".incr.aof")
    with open(incr, "rb") as f:
        text = f.read()
    # Every chunk accepted reached the AOF (RedisBloom 2.4 logs only the header chunk): "restored"
    # (2 chunks), "header-only" (1), "half" (2), "damaged" (the header); the damaged last chunk
    # reached it as its effect, the key's deletion, so replaying it fails nothing.
    assert text.count(b"CF.LOADCHUNK") == 2 + 1 + 2 + 1
    assert text.count(b"$3\r\nDEL\r\n$7\r\ndamaged\r\n") == 1
    server.restart()
    assert snapshot(server.client()) == before

    r = server.client()
    r.bgrewriteaof()
    wait_for_rewrite(r)
    (base,) = aof_files(server, ".base.aof")
    with open(base, "rb") as f:
        text = f.read()
    # The rewrite rebuilds every key from chunks; the write commands are gone.
    assert b"CF.LOADCHUNK" in text and b"CF.INSERT" not in text and b"CF.DEL" not in text
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


def test_a_filter_keeps_its_fingerprint_width_across_restarts(make_server):
    server = make_server(module_args=["CF_FINGERPRINT_BITS", "16"])
    r = server.client()
    r.execute_command("CF.RESERVE", "wide", 5000)
    r.execute_command("CF.INSERT", "wide", "ITEMS", *items("w", 4000))
    before = (r.execute_command("CF.INFO", "wide"), dump(r, "wide"),
              r.execute_command("CF.MEXISTS", "wide", *PROBES))
    assert r.save()
    server.module_args = ["CF_FINGERPRINT_BITS", "4"]
    server.restart()
    r = server.client()
    assert (r.execute_command("CF.INFO", "wide"), dump(r, "wide"),
            r.execute_command("CF.MEXISTS", "wide", *PROBES)) == before
    # New filters take the new width: 12 bits per bucket instead of 60.
    r.execute_command("CF.RESERVE", "narrow", 5000)
    assert r.execute_command("CF.INFO", "narrow")[1] * 3 < r.execute_command("CF.INFO", "wide")[1]
