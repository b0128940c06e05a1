"""A 3-master Redis Cluster on loopback ports with the module loaded in every node: filters on keys
spread over the hash slots, used through `redis-cli -c` and through redis-py's cluster client.
This is how bloomery scales past one machine (docs/redis.md, "Redis Cluster")."""

import subprocess

import pytest
import redis
from redis.cluster import ClusterNode, RedisCluster

from conftest import CLI

KEYS = [f"visited:{i}" for i in range(24)]  # spread over the slots (and so over the masters)


def cli_c(node, *args):
    """redis-cli -c: follows MOVED redirections, as a user of the cluster would run it."""
    out = subprocess.run([CLI, "-c", "-h", "127.0.0.1", "-p", str(node.port), *args],
                         check=True, capture_output=True, timeout=60)
    return out.stdout.decode().strip()


def owner(nodes, key):
    """The master whose slot range holds `key`, by CLUSTER SLOTS."""
    slot = nodes[0].client().execute_command("CLUSTER", "KEYSLOT", key)
    for start, end, master, *_ in nodes[0].client().execute_command("CLUSTER", "SLOTS"):
        if start <= slot <= end:
            return next(n for n in nodes if n.port == master[1])
    raise AssertionError(f"no node owns slot {slot}")


def test_filters_spread_over_three_masters_through_redis_cli(cluster):
    first = cluster[0]
    for i, key in enumerate(KEYS):
        assert cli_c(first, "BF.RESERVE", key, "0.01", "1000") == "OK"
        assert cli_c(first, "BF.MADD", key, f"a{i}", f"b{i}").split() == ["1", "1"]
        assert cli_c(first, "CF.RESERVE", "cf:" + key, "1000") == "OK"
        assert cli_c(first, "CF.ADD", "cf:" + key, f"a{i}") == "1"
    # Every key answers through any entry node, and lives on the master owning its slot.
    for i, key in enumerate(KEYS):
        for entry in cluster:
            assert cli_c(entry, "BF.EXISTS", key, f"a{i}") == "1"
            assert cli_c(entry, "BF.MEXISTS", key, f"a{i}", f"b{i}").split() == ["1", "1"]
            assert cli_c(entry, "CF.EXISTS", "cf:" + key, f"a{i}") == "1"
        assert owner(cluster, key).client().execute_command("BF.CARD", key) == 2
    sizes = [n.client().dbsize() for n in cluster]
    assert sum(sizes) == 2 * len(KEYS)
    assert all(size > 0 for size in sizes), f"keys per master {sizes}: all three should hold some"


def test_cluster_client_reads_back_every_item(cluster):
    rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", n.port) for n in cluster])
    try:
        items = {key: [f"{key}/item{j}" for j in range(50)] for key in KEYS}
        for key, values in items.items():
            assert rc.execute_command("BF.MADD", key, *values) == [1] * len(values)
        for key, values in items.items():  # no false negative, on whichever master holds the key
            assert rc.execute_command("BF.MEXISTS", key, *values) == [1] * len(values)
            assert rc.execute_command("BF.CARD", key) == len(values)
        # A missing key replies 0 wherever its slot lives.
        assert rc.execute_command("BF.EXISTS", "never-reserved", "x") == 0
    finally:
        rc.close()


def test_a_command_sent_to_the_wrong_master_is_redirected(cluster):
    key = KEYS[0]
    home = owner(cluster, key)
    other = next(n for n in cluster if n is not home)
    with pytest.raises(redis.ResponseError) as e:
        other.client().execute_command("BF.ADD", key, "x")
    assert str(e.value).startswith("MOVED ")  # the module declared its key position
    assert home.client().execute_command("BF.ADD", key, "x") == 1
