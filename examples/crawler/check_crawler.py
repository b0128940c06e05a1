#!/usr/bin/env python3
"""Runs bloomery-crawler on a small crawl and a small URL log and checks what it claims, from its
--json: no URL is ever reported new twice (zero false negatives), every URL wrongly skipped as
visited is a page found and never crawled, the scalable filter grew and its measured
false-positive rate is under the target within 5 standard deviations. The URL log's truth comes
from here (the distinct lines), and the crawled log must list each of them at most once. Then bad
arguments: status 2, one line on standard error.

usage: check_crawler.py PATH/TO/bloomery-crawler"""

import json
import math
import os
import random
import subprocess
import sys
import tempfile

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def run(binary, args, stdin=None):
    r = subprocess.run([binary, "--json"] + args, input=stdin, capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        sys.exit(f"bloomery-crawler {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}")
    out = json.loads(r.stdout)
    return out["params"], out["results"]["unordered_set"], out["results"]["scalable bloom"]


def check_filter(what, exact, f, target):
    check(f["false_negatives"] == 0, f"{what}: {f['false_negatives']} URLs reported new twice")
    check(f["never_crawled"] == f["false_positives"],
          f"{what}: {f['never_crawled']} pages never crawled, {f['false_positives']} skipped")
    check(f["pages_crawled"] + f["false_positives"] == exact["distinct_urls"],
          f"{what}: crawled {f['pages_crawled']} + skipped {f['false_positives']} != "
          f"{exact['distinct_urls']} distinct URLs")
    # Each truly new URL is a false positive with a chance below the filter's current compound
    # rate, itself below the target: the count is at most Binomial(new, target), so 5 standard
    # deviations above its mean bound it (a false alarm less than once in 10^6 runs).
    n, fp = exact["distinct_urls"], f["false_positives"]
    bound = n * target + 5 * math.sqrt(n * target * (1 - target))
    check(fp <= bound, f"{what}: {fp} false positives in {n} new URLs; at most {bound:.0f}")
    check(f["memory_bytes"] < exact["memory_bytes"] / 10,
          f"{what}: filter {f['memory_bytes']} B against the set's {exact['memory_bytes']} B")


def main():
    binary = sys.argv[1]
    params, exact, f = run(binary, ["--pages", "10000", "--initial-capacity", "500"])
    check_filter("crawl", exact, f, params["target fpr"])
    check(f["sub_filters"] >= 4, f"crawl: the filter has {f['sub_filters']} sub-filters")
    # Every page is found (from a link, or the sitemap when the frontier runs dry), and its URL is
    # checked once as a sitemap entry and once per link on a page crawled.
    check(exact["distinct_urls"] == params["pages"],
          f"crawl: {exact['distinct_urls']} of {params['pages']} pages found")
    check(exact["urls_checked"] == 8 * f["pages_crawled"] + params["pages"],
          f"crawl: {exact['urls_checked']} URLs checked for {f['pages_crawled']} pages")

    # A URL log with repeats: 3000 distinct URLs, each 1 to 4 times, shuffled.
    rng = random.Random(7)
    urls = [f"https://site{rng.randrange(50)}.example/p/{i}?q={rng.randrange(10**6)}"
            for i in range(3000)]
    lines = [u for u in urls for _ in range(rng.randint(1, 4))]
    rng.shuffle(lines)
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "crawled.txt")
        params, exact, f = run(binary, ["--stdin", "--fpr", "0.05", "--initial-capacity", "300",
                                        "--crawled-log", log], "\n".join(lines) + "\n")
        with open(log) as fh:
            crawled = fh.read().splitlines()
    check_filter("log", exact, f, 0.05)
    check(exact["urls_checked"] == len(lines), f"log: {exact['urls_checked']} lines checked")
    check(exact["distinct_urls"] == len(urls), f"log: {exact['distinct_urls']} distinct URLs")
    check(len(crawled) == f["pages_crawled"], f"log: {len(crawled)} URLs in the crawled log")
    check(len(set(crawled)) == len(crawled), "log: a URL was crawled twice")
    check(set(crawled) <= set(urls), "log: a URL crawled that the log does not have")

    for args, start in ((["--pages", "0"], "--pages"), (["--fpr", "1.5"], "--fpr"),
                        (["--workers", "2"], "--workers")):
        bad = subprocess.run([binary] + args, capture_output=True, text=True, timeout=60)
        check(bad.returncode == 2, f"{args} exited {bad.returncode}, not 2")
        check(bad.stdout == "" and len(bad.stderr.splitlines()) == 1
              and bad.stderr.startswith("bloomery-crawler: error: " + start),
              f"{args} printed {bad.stdout!r} and {bad.stderr!r}")

    for what in failures:
        print("FAILED:", what)
    if failures:
        sys.exit(1)
    print(f"ok: the log's {len(urls)} URLs: {f['pages_crawled']} crawled, "
          f"{f['false_positives']} wrongly skipped")


if __name__ == "__main__":
    main()
