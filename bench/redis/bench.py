#!/usr/bin/env python3
"""The Redis module's throughput and memory (BENCHMARKS.md, "Redis module").

Starts one redis-server with bloomery-redis.so on a free 127.0.0.1 port, then:
- throughput: redis-benchmark runs BF.ADD and BF.EXISTS beside the plain SET and EXISTS of the
  same random items, at pipeline depth 1 and 16, in interleaved rounds; the median of each is
  reported with the filter/baseline ratio (the target is >= 0.80);
- memory: MEMORY USAGE of a filter holding a million items at 1% and 0.1%, scaling and
  NONSCALING, beside RedisBloom 2.4's own sizing for the same filter (its BF.INFO Size:
  ceil(n * -ln(e) / ln(2)^2 / 64) * 8 bytes for a sub-filter of n items at error e, whose first
  sub-filter gets e / 2 when the filter may scale).

usage: bench.py MODULE [--requests N] [--rounds R]
"""

import argparse
import math
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import redis


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(module, directory):
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", directory,
         "--loadmodule", module, "--save", "", "--appendonly", "no", "--protected-mode", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    client = redis.Redis(host="127.0.0.1", port=port)
    deadline = time.monotonic() + 20
    while True:
        try:
            client.ping()
            return proc, port, client
        except redis.ConnectionError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise SystemExit("bench.py: redis-server did not start")
            time.sleep(0.05)


def throughput(port, requests, pipeline, command):
    """Requests per second of one redis-benchmark run of `command` (a list of words)."""
    out = subprocess.run(
        ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-n", str(requests), "-c", "50",
         "-P", str(pipeline), "-r", "1000000", "--csv", *command],
        check=True, capture_output=True, text=True, timeout=600).stdout
    rows = [line for line in out.splitlines() if line and not line.startswith('"test"')]
    return float(rows[-1].split(",")[1].strip('"'))


def redisbloom_bytes(items, error, scaling):
    """RedisBloom 2.4's filter bytes for `items` items in its first sub-filter (bloom.c's
    NOROUND sizing, rounded up to 64-bit words)."""
    e = error / 2 if scaling else error
    bits = int(items * (-math.log(e) / 0.480453013918201))
    return (bits + 63) // 64 * 8


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("module")
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    if shutil.which("redis-benchmark") is None:
        raise SystemExit("bench.py: redis-benchmark not found (Debian: redis-tools)")

    directory = tempfile.mkdtemp(prefix="bloomery-redis-bench-")
    proc, port, r = start_server(os.path.abspath(args.module), directory)
    try:
        cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                    if l.startswith("model name")), "?")
        load = open("/proc/loadavg").read().split()[0]
        print(f"## Redis module: throughput and memory (bench/redis/bench.py)\n")
        print(f"{cpu}, redis-server {r.info()['redis_version']}, 1-minute load {load} at start. "
              f"{args.requests} requests per run, 50 clients, random items from a space of "
              f"10^6, median of {args.rounds} interleaved rounds.\n")

        r.execute_command("BF.RESERVE", "bench:bf", 0.01, 2000000)
        pairs = {
            "add": (["BF.ADD", "bench:bf", "item:__rand_int__"],
                    ["SET", "item:__rand_int__", "1"]),
            "exists": (["BF.EXISTS", "bench:bf", "item:__rand_int__"],
                       ["EXISTS", "item:__rand_int__"]),
        }
        results = {}
        for rnd in range(args.rounds):
            for pipeline in (1, 16):
                for name, (filt, base) in pairs.items():
                    order = [("filter", filt), ("baseline", base)]
                    if rnd % 2:
                        order.reverse()
                    for side, cmd in order:
                        rps = throughput(port, args.requests, pipeline, cmd)
                        results.setdefault((name, pipeline, side), []).append(rps)

        print("| command (baseline) | pipeline | filter req/s | baseline req/s | ratio |")
        print("|---|---|---|---|---|")
        labels = {"add": "BF.ADD (SET)", "exists": "BF.EXISTS (EXISTS)"}
        for name in pairs:
            for pipeline in (1, 16):
                f = statistics.median(results[(name, pipeline, "filter")])
                b = statistics.median(results[(name, pipeline, "baseline")])
                print(f"| {labels[name]} | {pipeline} | {f:,.0f} | {b:,.0f} | **{f / b:.2f}** |")

        print("\n| filter of 10^6 items | MEMORY USAGE | RedisBloom 2.4's sizing | ratio |")
        print("|---|---|---|---|")
        million = 1000000
        for error in (0.01, 0.001):
            for scaling in (True, False):
                key = f"mem:{error}:{scaling}"
                extra = [] if scaling else ["NONSCALING"]
                r.execute_command("BF.RESERVE", key, error, million, *extra)
                pipe = r.pipeline(transaction=False)
                for start in range(0, million, 10000):
                    pipe.execute_command("BF.MADD", key,
                                         *[f"m{i}" for i in range(start, start + 10000)])
                pipe.execute()
                used = r.execute_command("MEMORY", "USAGE", key)
                theirs = redisbloom_bytes(million, error, scaling)
                label = f"{error:g}, {'scaling' if scaling else 'NONSCALING'}"
                print(f"| {label} | {used:,} B | {theirs:,} B | **{used / theirs:.2f}** |")
                r.delete(key)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
