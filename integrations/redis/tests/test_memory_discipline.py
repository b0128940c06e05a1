"""The module's memory discipline on small machines, simulated rather than allocated: a server
under an address-space limit (`ulimit -v`), or one that sees a machine of a few hundred MB
(fake_meminfo.cpp). Each test is the regression test of a defect of docs/reliability.md:
  D1  a dump (SCANDUMP 0, SAVE, BGSAVE, AOF rewrite) copied the whole filter;
  D2  loading held about three filters: a filter of 40% of memory could not be loaded back;
  D3  parallel LOADCHUNK restores all passed the memory check;
  D4  a replica with less memory refused its master's BF.RESERVE and answered from a default
      filter;
and a damaged last LOADCHUNK chunk reached replicas as a failing command."""

import os

import pytest
import redis

from conftest import SANITIZED
from redis_helpers import in_sync, loadchunks, scandump, start_replica, wait_until

# AddressSanitizer needs terabytes of address space, and its runtime must come first in
# LD_PRELOAD: the limits these tests set cannot apply to a sanitized server.
pytestmark = pytest.mark.skipif(SANITIZED, reason="memory limits do not apply under ASan")

MB = 1 << 20
F = 128 * MB  # the size of the filters these tests build, about
BF_CAPACITY = F * 8 * 100 // 959  # 9.59 bits per item at 1%: one sub-filter of about F
CF_CAPACITY = F  # 8-bit fingerprints, four per bucket: one byte per item
DEBUG = ("--enable-debug-command", "yes")
PROBES = ["probe:%d" % i for i in range(3000)]
ITEMS = ["item:%d" % i for i in range(3000)]


def status(server, field):
    with open("/proc/%d/status" % server.proc.pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field)


@pytest.fixture(scope="module")
def base_size(tmp_path_factory):
    """The address space of an idle server with the module loaded (about 60 MB)."""
    from conftest import Server
    s = Server(str(tmp_path_factory.mktemp("base")))
    try:
        return status(s, "VmSize")
    finally:
        s.stop()


def create(c, kind, key):
    if kind == "BF":
        assert c.execute_command("BF.RESERVE", key, 0.01, BF_CAPACITY, "NONSCALING") == b"OK"
        c.execute_command("BF.MADD", key, *ITEMS)
    else:
        assert c.execute_command("CF.RESERVE", key, CF_CAPACITY) == b"OK"
        c.execute_command("CF.INSERT", key, "ITEMS", *ITEMS)


def answers(c, kind, key):
    return (c.execute_command(kind + ".INFO", key),
            c.execute_command(kind + ".MEXISTS", key, *ITEMS),
            c.execute_command(kind + ".MEXISTS", key, *PROBES))


@pytest.mark.parametrize("kind", ["BF", "CF"])
def test_dumps_need_no_copy_of_the_filter(make_server, base_size, kind):
    # Room for the filter and half of it again: a second copy of the filter does not fit.
    server = make_server(address_space=base_size + F * 3 // 2 + 64 * MB)
    c = server.client()
    create(c, kind, "k")
    before = answers(c, kind, "k")
    it, header = c.execute_command(kind + ".SCANDUMP", "k", 0)
    assert it == 1 and len(header) < 8192
    chunks = scandump(c, "k", kind)
    assert sum(len(d) for _, d in chunks) >= F * 9 // 10
    del chunks
    assert c.save()
    assert c.bgsave()
    wait_until("BGSAVE did not finish", lambda: not c.info("persistence")["rdb_bgsave_in_progress"])
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    assert c.config_set("appendonly", "yes")  # starts an AOF rewrite
    wait_until("the AOF rewrite did not finish",
               lambda: not c.info("persistence")["aof_rewrite_in_progress"]
               and not c.info("persistence")["aof_rewrite_scheduled"])
    assert c.info("persistence")["aof_last_bgrewrite_status"] == "ok"
    assert answers(c, kind, "k") == before


@pytest.mark.parametrize("kind", ["BF", "CF"])
def test_a_filter_of_40_percent_of_memory_loads_back(make_server, base_size, kind):
    limit = base_size + F * 5 // 2  # the filter is 40% of what the server may map
    server = make_server(*DEBUG, "--repl-diskless-sync-delay", "0", address_space=limit)
    c = server.client()
    create(c, kind, "k")
    before = answers(c, kind, "k")
    assert c.execute_command("DEBUG", "RELOAD") == b"OK"
    assert answers(c, kind, "k") == before
    assert c.save()
    server.restart()  # a server that could not load its RDB would not start
    c = server.client()
    assert answers(c, kind, "k") == before
    # A new replica of the same size loads the master's RDB in its full sync.
    replica = start_replica(make_server, server, address_space=limit)
    assert answers(replica.client(), kind, "k") == before


@pytest.mark.parametrize("kind", ["BF", "CF"])
def test_parallel_restores_are_admitted_only_while_they_fit(make_server, kind):
    source = make_server().client()
    create(source, kind, "k")
    chunks = scandump(source, "k", kind)
    before = answers(source, kind, "k")
    # A machine with room for a little over two filters: two restores fit, a third does not.
    target = make_server(fake_memory=F * 12 // 5 + 64 * MB)
    c = target.client()
    header = chunks[:1]
    assert loadchunks(c, "r1", header, kind) == [b"OK"]
    assert loadchunks(c, "r2", header, kind) == [b"OK"]
    with pytest.raises(redis.ResponseError, match="Insufficient memory"):
        loadchunks(c, "r3", header, kind)
    assert not c.exists("r3")
    for key in ("r1", "r2"):
        assert loadchunks(c, key, chunks[1:], kind) == [b"OK"] * (len(chunks) - 1)
        assert answers(c, kind, key) == before
    # What was admitted fits the simulated machine.
    assert status(target, "VmRSS") < F * 12 // 5 + 64 * MB


def test_memory_headroom_is_a_load_argument(make_server):
    # About 156 MB available: a 128 MB filter leaves less than 20% (the default) free, but more
    # than 10%.
    small = dict(fake_memory=F * 9 // 8 + 24 * MB)
    c = make_server(**small).client()
    with pytest.raises(redis.ResponseError, match="Insufficient memory"):
        c.execute_command("BF.RESERVE", "k", 0.01, BF_CAPACITY, "NONSCALING")
    c = make_server(module_args=["MEMORY_HEADROOM", "0.1"], **small).client()
    assert c.execute_command("BF.RESERVE", "k", 0.01, BF_CAPACITY, "NONSCALING") == b"OK"


@pytest.mark.parametrize("value", ["-0.1", "0.95", "x", None])
def test_memory_headroom_errors(make_server, tmp_path, value):
    args = ["MEMORY_HEADROOM"] + ([value] if value is not None else [])
    with pytest.raises(RuntimeError, match="did not start"):
        make_server(directory=str(tmp_path), module_args=args)
    with open(tmp_path / "redis.log", errors="replace") as f:
        assert "MEMORY_HEADROOM must be a fraction from 0 to 0.9" in f.read()


def test_a_replica_with_less_memory_applies_what_its_master_applied(make_server):
    master = make_server("--repl-diskless-sync-delay", "0")
    m = master.client()
    m.execute_command("BF.ADD", "early", "x")  # a key for the full sync below
    # Too small for the module's own admission check (half a filter), large enough for the
    # filters themselves, which is all a replica needs.
    small = dict(fake_memory=F // 2 + 64 * MB)
    replica = start_replica(make_server, master, **small)
    create(m, "BF", "big-bf")
    create(m, "CF", "big-cf")
    in_sync(master, replica)
    r = replica.client()
    for kind, key in (("BF", "big-bf"), ("CF", "big-cf")):
        assert answers(r, kind, key) == answers(m, kind, key)
    # A second small replica gets both filters by a full sync (RDB load: no admission check).
    late = start_replica(make_server, master, **small)
    for kind, key in (("BF", "big-bf"), ("CF", "big-cf")):
        assert answers(late.client(), kind, key) == answers(m, kind, key)


def test_a_replica_that_cannot_hold_its_masters_filter_stops(make_server, base_size):
    master = make_server("--repl-diskless-sync-delay", "0")
    replica = start_replica(make_server, master, address_space=base_size + F // 2)
    master.client().execute_command("BF.RESERVE", "big", 0.01, BF_CAPACITY, "NONSCALING")
    # Loudly, rather than answer from another filter (or from none) than its master's.
    replica.proc.wait(timeout=30)
    with open(os.path.join(replica.dir, "redis.log"), errors="replace") as f:
        log = f.read()
    assert "cannot apply a BF filter's creation to key 'big' as its master did" in log
    assert master.client().execute_command("BF.INFO", "big", "CAPACITY") == [BF_CAPACITY]


@pytest.mark.parametrize("kind", ["BF", "CF"])
def test_a_damaged_last_chunk_reaches_replicas_as_its_effect(make_server, kind):
    master = make_server("--repl-diskless-sync-delay", "0")
    m = master.client()
    m.execute_command(kind + ".ADD", "src", "x")
    chunks = scandump(m, "src", kind)
    replica = start_replica(make_server, master)
    loadchunks(m, "copy", chunks[:-1], kind)
    it, data = chunks[-1]
    with pytest.raises(redis.ResponseError):
        m.execute_command(kind + ".LOADCHUNK", "copy", it, data[:-1] + bytes([data[-1] ^ 1]))
    in_sync(master, replica)
    assert not m.exists("copy") and not replica.client().exists("copy")
    with open(os.path.join(replica.dir, "redis.log"), errors="replace") as f:
        assert "sending an error to its master" not in f.read()
