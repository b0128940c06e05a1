"""Every CF write reaches a replica, LOADCHUNK chunks included (RedisBloom lost them), whether
the replica follows the command stream or starts from a full sync; and SCANDUMP/LOADCHUNK copy a
filter from one server to another."""

import pytest
import redis

from cf_data import RESTORING, dump, finish_restores, load, populate, snapshot
from test_bf_replication import in_sync, make_master, start_replica


def same_answers(master, replica):
    mine, theirs = snapshot(master.client()), snapshot(replica.client())
    # MEMORY USAGE aside: the replica's key objects may be allocated differently.
    assert {k: v[:4] for k, v in mine.items()} == {k: v[:4] for k, v in theirs.items()}
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
    # More writes after the restore: adds, deletes, an add that does not fit.
    m = master.client()
    m.execute_command("CF.INSERT", "half", "ITEMS", "after", "restore")
    assert m.execute_command("CF.DEL", "half", "after") == 1
    assert m.execute_command("CF.DEL", "grown", "g5") == 1
    assert m.execute_command("CF.DEL", "grown", "never-added-here") == 0  # nothing to replicate
    with pytest.raises(redis.ResponseError):
        m.execute_command("CF.ADD", "full", "no room")  # an error: nothing to replicate
    m.delete("deleted")
    in_sync(master, replica)
    same_answers(master, replica)
    with pytest.raises(redis.ResponseError) as e:
        replica.client().execute_command("CF.ADD", "auto", "z")
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
    for key in ["grown", "deleted", "full", "empty", "auto", "nx", "restored", "big"]:
        assert set(load(rb, key, dump(ra, key))) == {b"OK"}
    sa, sb = snapshot(ra), snapshot(rb)
    assert sorted(sb) == sorted(k for k in sa if k not in ("header-only", "half"))
    for key in sb:
        assert sb[key][:4] == sa[key][:4]
    # The copies take writes like the originals.
    for key in ["grown", "empty", "full"]:
        for command in [("CF.ADDNX", "new"), ("CF.DEL", "g7"), ("CF.INSERT", "ITEMS", "z")]:
            try:
                expected = ra.execute_command(command[0], key, *command[1:])
            except redis.ResponseError as e:
                expected = str(e)
            try:
                got = rb.execute_command(command[0], key, *command[1:])
            except redis.ResponseError as e:
                got = str(e)
            assert got == expected
    assert dump(ra, "grown") == dump(rb, "grown")
