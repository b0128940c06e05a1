#!/usr/bin/env python3
"""Peak memory of the Redis module's operations, as a multiple of the filter's size.

Starts a redis-server with the module on a free 127.0.0.1 port, builds one BF and one CF key of
about --mb megabytes each, and for every operation reads the server's peak resident memory
(VmHWM, reset before the operation through /proc/PID/clear_refs) above what it held before:
(peak - before) / filter bytes. 1.00 means the operation touched one filter's worth of new memory;
0.00 that it touched none. Restart and replica loads are measured on the new process against a
fresh server's footprint. docs/reliability.md reports the figures.

  python3 bench/redis/memory.py --module build/integrations/redis/bloomery-redis.so [--mb 200]
"""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import redis


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, module, directory, *extra):
        self.port = free_port()
        self.dir = directory
        log = open(os.path.join(directory, "redis-%d.log" % self.port), "ab")
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", directory,
             "--loadmodule", module, "--save", "", "--appendonly", "no", "--daemonize", "no",
             "--protected-mode", "no", "--enable-debug-command", "yes", *extra], stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.client = redis.Redis(port=self.port, socket_timeout=600)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if self.client.ping() and self.client.info("persistence")["loading"] == 0:
                    return
            except (redis.ConnectionError, redis.ResponseError):
                pass
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def status(self, field):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
        raise KeyError(field)

    def reset_peak(self):
        with open("/proc/%d/clear_refs" % self.proc.pid, "w") as f:
            f.write("5")

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def measure(server, what, filter_bytes, op, rows):
    server.reset_peak()
    before = server.status("VmRSS")
    op()
    peak = server.status("VmHWM")
    rows.append((what, (peak - before) / filter_bytes))


def scandump(c, kind, key):
    chunks, it = [], 0
    while True:
        it, data = c.execute_command(kind + ".SCANDUMP", key, it)
        if it == 0:
            return chunks
        chunks.append((it, data))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--module", required=True)
    ap.add_argument("--mb", type=int, default=200, help="size of each filter (default 200)")
    args = ap.parse_args()
    module = os.path.abspath(args.module)
    directory = tempfile.mkdtemp(prefix="bloomery-memory-")
    servers = []
    try:
        fresh = Server(module, directory)
        servers.append(fresh)
        baseline = fresh.status("VmRSS")
        fresh.stop()
        servers.remove(fresh)

        s = Server(module, directory)
        servers.append(s)
        c = s.client
        rows = []
        # 9.6 bits per key at 1% (one sub-filter); a CF of 8-bit fingerprints, 4 per bucket.
        bf_capacity = args.mb * 8_000_000 // 96 * 10
        cf_capacity = args.mb * 1_000_000
        for kind, key, create in (
                ("BF", "bf", lambda: c.execute_command("BF.RESERVE", "bf", 0.01, bf_capacity,
                                                       "NONSCALING")),
                ("CF", "cf", lambda: c.execute_command("CF.RESERVE", "cf", cf_capacity))):
            rss = s.status("VmRSS")
            s.reset_peak()
            create()
            size = s.status("VmRSS") - rss
            rows.append((kind + ".RESERVE (%.0f MB)" % (size / 1e6),
                         (s.status("VmHWM") - rss) / size))
            c.execute_command(kind + ".ADD", key, "x")
            measure(s, kind + ".SCANDUMP key 0", size,
                    lambda: c.execute_command(kind + ".SCANDUMP", key, 0), rows)
            chunks = []
            measure(s, kind + ".SCANDUMP, every chunk", size,
                    lambda: chunks.extend(scandump(c, kind, key)), rows)
            copy = key + "-restored"

            def restore():
                for it, data in chunks:
                    c.execute_command(kind + ".LOADCHUNK", copy, it, data)

            measure(s, kind + ".LOADCHUNK, every chunk", size, restore, rows)
            chunks.clear()
            c.delete(copy)
            measure(s, "COPY of a " + kind + " key", size, lambda: c.copy(key, copy), rows)
            c.delete(copy)
        size = (s.status("VmRSS") - baseline) / 2  # the two filters
        measure(s, "SAVE (both keys)", size, lambda: c.save(), rows)
        measure(s, "DEBUG RELOAD (both keys)", size,
                lambda: c.execute_command("DEBUG", "RELOAD"), rows)
        shutil.copy(os.path.join(directory, "dump.rdb"), os.path.join(directory, "keep.rdb"))
        s.stop()
        servers.remove(s)
        t = Server(module, directory, "--dbfilename", "keep.rdb")
        servers.append(t)
        rows.append(("restart: load the RDB (both keys)", (t.status("VmHWM") - baseline) / 2 / size))
        r = Server(module, tempfile.mkdtemp(dir=directory), "--replicaof", "127.0.0.1",
                   str(t.port))
        servers.append(r)
        deadline = time.monotonic() + 300
        while r.client.info("replication").get("master_link_status") != "up" or \
                r.client.info("persistence")["loading"]:
            if time.monotonic() > deadline:
                raise RuntimeError("replica did not sync")
            time.sleep(0.1)
        rows.append(("replica: full sync (both keys)", (r.status("VmHWM") - baseline) / 2 / size))
        width = max(len(w) for w, _ in rows)
        print("peak memory above the server's before each operation, in filter sizes")
        for what, ratio in rows:
            print("  %-*s  %5.2f" % (width, what, ratio))
    finally:
        for srv in servers:
            srv.stop()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
