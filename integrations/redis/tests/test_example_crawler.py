"""examples/crawler's --redis mode: two bloomery-crawler processes crawl one synthetic web and
share their visited set through the module, each crawling the pages whose BF.ADD replied 1.

What is exactly assertable: BF.ADD adds a URL once, so it replies 1 to one caller at most and no
page is crawled by both; the server's count of items inserted is the number of pages crawled; each
URL was checked once per link on a page crawled plus once from a worker's share of the sitemap;
no URL crawled is missing from the filter. Which pages go uncrawled (the false positives) depends
on the interleaving, so only their number is bounded."""

import json
import math
import os
import subprocess

import pytest

CRAWLER = os.path.join(os.environ.get("BLOOMERY_EXAMPLES_DIR", ""), "crawler", "bloomery-crawler")
KEY = "crawl:visited"
PAGES, LINKS, FPR = 10000, 8, 0.01


def test_two_crawlers_share_one_visited_set(make_server, tmp_path):
    if not os.access(CRAWLER, os.X_OK):
        pytest.skip(f"{CRAWLER} is not built (examples need CLI11; --redis needs hiredis)")
    server = make_server()
    logs = [tmp_path / f"crawled.{w}" for w in (0, 1)]
    procs = [subprocess.Popen(
        [CRAWLER, "--json", "--redis", f"127.0.0.1:{server.port}", "--key", KEY,
         "--pages", str(PAGES), "--links", str(LINKS), "--fpr", str(FPR),
         "--initial-capacity", "1000", "--workers", "2", "--worker", str(w),
         "--crawled-log", str(tmp_path / "crawled")],  # worker w writes crawled.w
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in (0, 1)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err
    results = [json.loads(out)["results"][f"worker {w}"] for w, (out, _) in enumerate(outs)]
    crawled = [log.read_text().splitlines() for log in logs]

    for w in (0, 1):
        assert len(crawled[w]) == results[w]["pages_crawled"]
        assert len(set(crawled[w])) == len(crawled[w]), f"worker {w} crawled a page twice"
    assert not set(crawled[0]) & set(crawled[1]), "a page was crawled by both workers"
    union = set(crawled[0]) | set(crawled[1])

    client = server.client()
    assert client.execute_command("BF.CARD", KEY) == len(union)
    assert all(client.execute_command("BF.MEXISTS", KEY, *union))
    assert sum(r["urls_checked"] for r in results) == LINKS * len(union) + PAGES

    # Every page is found, so a page goes uncrawled only if the filter answered "visited" for its
    # URL before anyone had added it: a false positive, at most Binomial(PAGES, FPR) of them (the
    # filter's compound rate stays under its target). 5 standard deviations bound that.
    bound = PAGES * FPR + 5 * math.sqrt(PAGES * FPR * (1 - FPR))
    assert PAGES - len(union) <= bound
