"""Every BF and CF write reaches a replica, LOADCHUNK chunks included (RedisBloom lost them),
whether the replica follows the command stream or starts from a full sync; and SCANDUMP/LOADCHUNK
copy a filter from one server to another."""

import pytest
import redis

from filter_data import finish_restores, populate, snapshot, without_memory_usage
from redis_helpers import (in_sync, loadchunks, make_master, reply_or_error, scandump,
                           start_replica)


def same_answers(kind, master, replica):
    mine, theirs = snapshot(master.client(), kind), snapshot(replica.client(), kind)
    # MEMORY USAGE aside: the replica's key objects may be allocated differently.
    assert without_memory_usage(kind, mine) == without_memory_usage(kind, theirs)
    return mine


def test_replica_follows_every_write(make_server, kind):
    master = make_master(make_server)
    replica = start_replica(make_server, master)
    pending = populate(master.client(), kind)
    in_sync(master, replica)
    s = same_answers(kind, master, replica)
    assert s["half"][0] == kind.RESTORING and "damaged" not in s
    # A restore finished on the master is finished on the replica.
    restored, sources = finish_restores(master.client(), kind, pending)
    assert restored == sources
    in_sync(master, replica)
    same_answers(kind, master, replica)
    kind.more_writes(master.client())
    in_sync(master, replica)
    same_answers(kind, master, replica)
    with pytest.raises(redis.ResponseError) as e:
        replica.client().execute_command(kind.NAME + ".ADD", "auto", "z")
    assert str(e.value).startswith("READONLY")


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_replica_from_a_full_sync(make_server, kind, diskless):
    master = make_master(make_server, "--repl-diskless-sync", diskless)
    pending = populate(master.client(), kind)
    replica = start_replica(make_server, master)  # the RDB the master sends holds every key
    in_sync(master, replica)
    same_answers(kind, master, replica)
    finish_restores(master.client(), kind, pending)
    in_sync(master, replica)
    same_answers(kind, master, replica)


def test_scandump_loadchunk_between_servers(make_server, kind):
    a, b = make_server(), make_server()
    ra, rb = a.client(), b.client()
    pending = populate(ra, kind)
    finish_restores(ra, kind, pending)
    for key in kind.COMPLETE:
        chunks = scandump(ra, key, kind.NAME)
        assert set(loadchunks(rb, key, chunks, kind.NAME)) == {b"OK"}
    sa = without_memory_usage(kind, snapshot(ra, kind))
    sb = without_memory_usage(kind, snapshot(rb, kind))
    assert sorted(sb) == sorted(k for k in sa if k not in ("header-only", "half"))
    for key in sb:
        assert sb[key] == sa[key]
    # The copies take writes like the originals.
    keys, commands = kind.COPY_WRITES
    for key in keys:
        for command in commands:
            assert (reply_or_error(rb, command[0], key, *command[1:]) ==
                    reply_or_error(ra, command[0], key, *command[1:]))
    assert scandump(ra, "grown", kind.NAME) == scandump(rb, "grown", kind.NAME)
