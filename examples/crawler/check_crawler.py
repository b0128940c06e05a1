#!/usr/bin/env python3
"""Runs bloomery-crawler on a small crawl and a small URL log and checks what it claims, from its
--json: no URL is ever reported new twice (zero false negatives), every URL wrongly skipped as
visited is a page found and never crawled, the scalable filter grew and its measured
false-positive rate is under the target within 5 standard deviations. The URL log's truth comes
from here (the distinct lines), and the crawled log must list each of them at most once. Then bad
arguments: status 2, one line on standard error.

usage: check_crawler.py PATH/TO/bloomery-crawler"""

import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "common"))
from check_support import check, check_bad_arguments, check_binomial, finish, run_json


def crawl(binary, args, stdin=None):
    out = run_json(binary, args, stdin)
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
    check_binomial(f"{what}: false positives in new URLs", f["false_positives"],
                   exact["distinct_urls"], target, at_most=True)
    check(f["memory_bytes"] < exact["memory_bytes"] / 10,
          f"{what}: filter {f['memory_bytes']} B against the set's {exact['memory_bytes']} B")


def main():
    binary = sys.argv[1]
    params, exact, f = crawl(binary, ["--pages", "10000", "--initial-capacity", "500"])
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
        params, exact, f = crawl(binary, ["--stdin", "--fpr", "0.05", "--initial-capacity", "300",
                                          "--crawled-log", log], "\n".join(lines) + "\n")
        with open(log) as fh:
            crawled = fh.read().splitlines()
    check_filter("log", exact, f, 0.05)
    check(exact["urls_checked"] == len(lines), f"log: {exact['urls_checked']} lines checked")
    check(exact["distinct_urls"] == len(urls), f"log: {exact['distinct_urls']} distinct URLs")
    check(len(crawled) == f["pages_crawled"], f"log: {len(crawled)} URLs in the crawled log")
    check(len(set(crawled)) == len(crawled), "log: a URL was crawled twice")
    check(set(crawled) <= set(urls), "log: a URL crawled that the log does not have")

    check_bad_arguments(binary, ["--pages", "0"], "--pages")
    check_bad_arguments(binary, ["--fpr", "1.5"], "--fpr")
    check_bad_arguments(binary, ["--workers", "2"], "--workers")

    finish(f"the log's {len(urls)} URLs: {f['pages_crawled']} crawled, "
           f"{f['false_positives']} wrongly skipped")


if __name__ == "__main__":
    main()
