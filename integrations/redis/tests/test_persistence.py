"""A restarted server answers exactly as before, for BF and CF keys alike: through RDB, through
the AOF (the write commands themselves, LOADCHUNK data chunks included, then the AOF rewrite's
LOADCHUNK chunks), and through an AOF with an RDB preamble; a cuckoo filter keeps its fingerprint
width across a restart with another CF_FINGERPRINT_BITS."""

from filter_data import CUCKOO, finish_restores, populate, snapshot
from redis_helpers import aof_files, items, scandump, wait_for_rewrite


def check_restart(server, kind, before, pending):
    server.restart()
    r = server.client()
    assert snapshot(r, kind) == before
    assert before["header-only"][0] == before["half"][0] == kind.RESTORING
    assert "damaged" not in before
    restored, sources = finish_restores(r, kind, pending)
    assert restored == sources


def test_rdb_restart(make_server, kind):
    server = make_server()
    r = server.client()
    pending = populate(r, kind)
    before = snapshot(r, kind)
    assert r.save()
    check_restart(server, kind, before, pending)


def test_aof_restart_replays_the_commands_then_the_rewrite(make_server, kind):
    server = make_server("--appendonly", "yes", "--aof-use-rdb-preamble", "no",
                         "--appendfsync", "always")
    r = server.client()
    pending = populate(r, kind)
    before = snapshot(r, kind)
    (incr,) = aof_files(server, ".incr.aof")
    with open(incr, "rb") as f:
        text = f.read()
    # Every chunk accepted reached the AOF (RedisBloom 2.4's CF.LOADCHUNK logs only the header
    # chunk): "restored" (2 chunks), "header-only" (1), "half" (2), "damaged" (the header); the
    # damaged last chunk reached it as its effect, the key's deletion, so replaying it fails
    # nothing.
    assert text.count(kind.NAME.encode() + b".LOADCHUNK") == 2 + 1 + 2 + 1
    assert text.count(b"$3\r\nDEL\r\n$7\r\ndamaged\r\n") == 1
    server.restart()
    assert snapshot(server.client(), kind) == before

    r = server.client()
    r.bgrewriteaof()
    wait_for_rewrite(r)
    (base,) = aof_files(server, ".base.aof")
    with open(base, "rb") as f:
        text = f.read()
    # The rewrite rebuilds every key from chunks; the write commands are gone.
    assert kind.NAME.encode() + b".LOADCHUNK" in text
    for command in kind.WRITES:
        assert command not in text
    check_restart(server, kind, before, pending)


def test_aof_with_rdb_preamble(make_server, kind):
    server = make_server("--appendonly", "yes", "--aof-use-rdb-preamble", "yes",
                         "--appendfsync", "always")
    r = server.client()
    pending = populate(r, kind)
    before = snapshot(r, kind)
    r.bgrewriteaof()
    wait_for_rewrite(r)
    assert aof_files(server, ".base.rdb")
    check_restart(server, kind, before, pending)


def test_a_filter_keeps_its_fingerprint_width_across_restarts(make_server):
    server = make_server(module_args=["CF_FINGERPRINT_BITS", "16"])
    r = server.client()
    r.execute_command("CF.RESERVE", "wide", 5000)
    r.execute_command("CF.INSERT", "wide", "ITEMS", *items("w", 4000))
    before = (r.execute_command("CF.INFO", "wide"), scandump(r, "wide", "CF"),
              r.execute_command("CF.MEXISTS", "wide", *CUCKOO.PROBES))
    assert r.save()
    server.module_args = ["CF_FINGERPRINT_BITS", "4"]
    server.restart()
    r = server.client()
    assert (r.execute_command("CF.INFO", "wide"), scandump(r, "wide", "CF"),
            r.execute_command("CF.MEXISTS", "wide", *CUCKOO.PROBES)) == before
    # New filters take the new width: 12 bits per bucket instead of 60.
    r.execute_command("CF.RESERVE", "narrow", 5000)
    assert r.execute_command("CF.INFO", "narrow")[1] * 3 < r.execute_command("CF.INFO", "wide")[1]
