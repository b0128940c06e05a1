"""Every BF write reaches a replica, LOADCHUNK chunks included (RedisBloom lost them), whether
the replica follows the command stream or starts from a full sync; and SCANDUMP/LOADCHUNK copy a
filter from one server to another."""

import time

import pytest
import redis

from bf_data import RESTORING, finish_restores, populate, snapshot
from conftest import loadchunks, scandump


def make_master(make_server, *extra):
    # A full sync waits 5 s by default for more replicas to share a diskless transfer.
    return make_server("--repl-diskless-sync-delay", "0", *extra)


def start_replica(make_server, master):
    replica = make_server("--replicaof", "127.0.0.1", str(master.port))
    deadline = time.monotonic() + 30
    while replica.client().info("replication")["master_link_status"] != "up":
        assert time.monotonic() < deadline, "the replica did not connect"
        time.sleep(0.05)
    return replica


def in_sync(master, replica):
    m = master.client()
    assert m.execute_command("WAIT", 1, 10000) == 1
    offset = m.info("replication")["master_repl_offset"]
    deadline = time.monotonic() + 30
    while replica.client().info("replication")["slave_repl_offset"] < offset:
        assert time.monotonic() < deadline, "the replica did not catch up"
        time.sleep(0.02)


def same_answers(master, replica):
    mine, theirs = snapshot(master.client()), snapshot(replica.client())
    # MEMORY USAGE aside: the replica's key objects may be allocated differently.
    assert {k: v[:3] for k, v in mine.items()} == {k: v[:3] for k, v in theirs.items()}
    return mine


def test_replica_follows_every_write(make_server):
    master = make_master(make_server)
    replica = start_replica(make_server, master)
    pending = populate(master.client())
    in_sync(master, replica)
    s = same_answers(master, replica)
    assert s["half"][0] == RESTORING and "damaged" not in s
    # A restore finished on the master is finished on the replica.
    restored, sources = finish_restores(master.client(), pending)
    assert restored == sources
    in_sync(master, replica)
    same_answers(master, replica)
    # More writes after the restore.
    m = master.client()
    m.execute_command("BF.MADD", "half", "after", "restore")
    with pytest.raises(redis.ResponseError):
        m.execute_command("BF.ADD", "full", "no room")  # an error: nothing to replicate
    m.delete("grown")
    in_sync(master, replica)
    same_answers(master, replica)
    with pytest.raises(redis.ResponseError) as e:
        replica.client().execute_command("BF.ADD", "auto", "z")
    assert str(e.value).startswith("READONLY")


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_replica_from_a_full_sync(make_server, diskless):
    master = make_master(make_server, "--repl-diskless-sync", diskless)
    pending = populate(master.client())
    replica = start_replica(make_server, master)  # the RDB the master sends holds every key
    in_sync(master, replica)
    same_answers(master, replica)
    finish_restores(master.client(), pending)
    in_sync(master, replica)
    same_answers(master, replica)


def test_scandump_loadchunk_between_servers(make_server):
    a, b = make_server(), make_server()
    ra, rb = a.client(), b.client()
    pending = populate(ra)
    finish_restores(ra, pending)
    for key in ["grown", "full", "empty", "auto", "inserted", "restored", "big"]:
        assert set(loadchunks(rb, key, scandump(ra, key))) == {b"OK"}
    sa, sb = snapshot(ra), snapshot(rb)
    for key in sb:
        assert sb[key][:3] == sa[key][:3]
