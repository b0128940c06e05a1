"""What the module's tests do alike: reading replies and errors, copying a key by SCANDUMP and
LOADCHUNK, waiting for an AOF rewrite, starting a replica and waiting for it to catch up."""

import glob
import os
import time

import pytest
import redis

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
# The kind of filter each of the module's types holds, by the name TYPE replies.
KIND_OF_TYPE = {"bloomr-BF": "BF", "bloomr-CF": "CF"}


def error_of(r, *args):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command(*args)
    return str(e.value)


def arity(command):
    return f"ERR wrong number of arguments for '{command}' command"


def items(prefix, n):
    return [f"{prefix}{i}" for i in range(n)]


def info(r, key):
    """BF.INFO or CF.INFO of `key` (whichever its type answers) as a dict."""
    kind = KIND_OF_TYPE[r.type(key).decode()]
    reply = r.execute_command(kind + ".INFO", key)
    return {reply[i].decode(): reply[i + 1] for i in range(0, len(reply), 2)}


def scandump(client, key, kind):
    """All of BF.SCANDUMP's (or CF.SCANDUMP's, `kind` "CF") (iter, chunk) pairs for `key`, as a
    client copying it would read them."""
    chunks, it = [], 0
    while True:
        it, data = client.execute_command(kind + ".SCANDUMP", key, it)
        if it == 0:
            return chunks
        chunks.append((it, data))


def loadchunks(client, key, chunks, kind):
    return [client.execute_command(kind + ".LOADCHUNK", key, it, data) for it, data in chunks]


def wait_until(what, done, seconds=60):
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def wait_for_rewrite(r):
    def finished():
        p = r.info("persistence")
        return not p["aof_rewrite_in_progress"] and not p["aof_rewrite_scheduled"]
    wait_until("the AOF rewrite did not finish", finished)
    assert r.info("persistence")["aof_last_bgrewrite_status"] == "ok"


def aof_files(server, suffix):
    return glob.glob(os.path.join(server.dir, "appendonlydir", "*" + suffix))


def make_master(make_server, *extra):
    # A full sync waits 5 s by default for more replicas to share a diskless transfer.
    return make_server("--repl-diskless-sync-delay", "0", *extra)


def start_replica(make_server, master, **limits):
    """A replica of `master`, connected and done loading what the full sync sent."""
    replica = make_server("--replicaof", "127.0.0.1", str(master.port), **limits)
    r = replica.client()
    wait_until("the replica did not sync",
               lambda: r.info("replication")["master_link_status"] == "up"
               and not r.info("persistence")["loading"])
    return replica


def in_sync(master, replica):
    """Waits until `replica` has applied everything `master` has sent."""
    m = master.client()
    assert m.execute_command("WAIT", 1, 20000) == 1
    offset = m.info("replication")["master_repl_offset"]
    wait_until("the replica did not catch up",
               lambda: replica.client().info("replication")["slave_repl_offset"] >= offset)


def reply_or_error(r, *args):
    """What `args` replies: the reply, or the error's text (also for errors inside an array)."""
    try:
        reply = r.execute_command(*args)
    except redis.ResponseError as e:
        return str(e)
    if isinstance(reply, list):
        return [str(x) if isinstance(x, redis.ResponseError) else x for x in reply]
    return reply
