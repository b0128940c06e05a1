"""Writes to keys restored from RedisBloom data keep RedisBloom's behaviour: the module against
the Python model of RedisBloom 2.4 (redisbloom_model.py, proved against the real RedisBloom by
test_redisbloom_model.py), for each of the 28 keys of tests/data/redisbloom-golden.

Each key is loaded into the server with `RESTORE key 0 <dump/<key>.bin>` (a `MBbloom--` or
`MBbloomCF` value written by RedisBloom v2.4.23); the model is built by replaying the key's
recorded creation commands. Then the same writes go to both (chosen by driving the model, so
they reach the cases below), and every reply must be equal:

- BF keys: re-adds of stored items (0), new items by BF.ADD / BF.MADD / BF.INSERT until the
  chain grows a new sub-filter (every key that can scale), and on the full NONSCALING keys adds
  that fail with `ERR non scaling filter is full` (the BF.MADD / BF.INSERT arrays stop there).
- CF keys: new items by CF.ADD / CF.ADDNX / CF.INSERT / CF.INSERTNX until the filter grows a
  sub-filter (or a budget runs out), `Filter is full` / -1 on the full EXPANSION 0 key,
  `Maximum expansions reached` on the 32-filter key; a second copy of a stored item and the NX
  forms on stored items; CF.DEL of a never-added item whose fingerprint another item stored
  (it removes that item's copy), of an absent item (0), and of stored items until a deletion
  compacts the chain (dropping sub-filters where RedisBloom does); CF.COUNT along the way;
  and adds after all that.

Right after RESTORE: TYPE and INFO as RedisBloom recorded them. After the writes: TYPE
(`MBbloom--` / `MBbloomCF`), BF.INFO / CF.INFO (every field, Size included), BF.CARD, EXISTS
(and CF.COUNT) of every golden probe item, and of every new item (EXISTS by MEXISTS in arrays
of 1,000, CF.COUNT one by one). A difference is reported as (item, command, module reply, model
reply); for INFO the item is the field.

test_the_writes_reach_every_case checks, on the model alone, that the writes do reach growth,
the error replies, shared-fingerprint deletions and compactions."""

import copy
import functools
import itertools
import json
import os

import pytest
import redis

import redisbloom_model as model

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "..", "..", "..", "tests", "data", "redisbloom-golden")

with open(os.path.join(GOLDEN, "answers.json")) as f:
    KEYS = json.load(f)["keys"]
RECORDS = {k["key"]: k for k in KEYS}


# --- the writes, chosen with the model ----------------------------------------------------------

class Plan:
    """A key's writes, applied to the model as they are chosen; `replies` are the model's."""

    def __init__(self, record):
        self.name = record["key"]
        self.tag = self.name.split("-")[0]
        self.key = model.replay(record)
        probes = record["probes"]
        self.stored = [x for x, k in zip(probes["items"], probes["kind"]) if k == "added"]
        self.never = [x for x, k in zip(probes["items"], probes["kind"]) if k == "never"]
        self.commands, self.replies, self.new_items = [], [], []
        # What the writes reached, for test_the_writes_reach_every_case.
        self.stats = {"grew": 0, "errors": set(), "failed": 0, "compactions": 0, "dropped": 0,
                      "victims": []}
        self._serial = itertools.count()

    def do(self, command, *args):
        argv = [command, self.name, *args]
        reply = model.apply(self.key, argv)
        self.commands.append(argv)
        self.replies.append(reply)
        for r in reply if isinstance(reply, list) else [reply]:
            if isinstance(r, dict) or r == -1:
                self.stats["errors"].add(r["error"] if isinstance(r, dict) else "-1")
                self.stats["failed"] += 1
        return reply

    def fresh(self, n):
        """n items never used before on this key."""
        items = ["%s:new:%d" % (self.tag, next(self._serial)) for _ in range(n)]
        self.new_items += items
        return items


def bf_writes(p):
    chain = p.key.value
    start = len(chain.links)
    if p.stored:  # already there: 0, no capacity used
        p.do("BF.ADD", p.stored[0])
        p.do("BF.MADD", *p.stored[1:4])
        p.do("BF.INSERT", "ITEMS", *p.stored[4:6])
    if chain.nonscaling:
        for x in p.fresh(5):
            p.do("BF.ADD", x)
        p.do("BF.MADD", *p.stored[:2], *p.fresh(3), *p.stored[2:4])
        p.do("BF.INSERT", "NOCREATE", "ITEMS", *p.fresh(2))
        p.do("BF.INSERT", "ITEMS", *p.stored[4:6], *p.fresh(2), *p.stored[6:8])
        return
    for x in p.fresh(10):
        p.do("BF.ADD", x)
    batch = max(10, min(1000, chain.links[-1].entries // 10))
    forms = itertools.cycle([("BF.MADD",), ("BF.INSERT", "ITEMS")])
    while len(chain.links) == start:
        p.do(*next(forms), *p.fresh(batch))
    p.do("BF.MADD", *p.fresh(50))  # some items in the new link too
    p.stats["grew"] = len(chain.links) - start
    p.do("BF.MADD", *p.new_items[:5], *p.stored[:2])  # re-adds of new items: 0


def cf_writes(p):
    cf = p.key.value
    start = len(cf.filters)
    # Adds until the chain grows a sub-filter, or the budget is spent, or they keep failing.
    slots = sum(map(len, cf.filters))
    batch = max(10, min(1000, slots // 20))
    budget = 2 * slots  # far more than any filter holds
    forms = itertools.cycle(["CF.ADD", "CF.INSERT", "CF.ADDNX", "CF.INSERTNX"])
    while len(p.new_items) < budget and p.stats["failed"] < 8:
        form = next(forms)
        if form.startswith("CF.INSERT"):
            p.do(form, "ITEMS", *p.fresh(batch))
        else:
            p.do(form, *p.fresh(1))
        if len(cf.filters) > start:
            p.stats["grew"] = 1
            p.do("CF.INSERT", "ITEMS", *p.fresh(20))
            break
    # Copies and the NX forms of stored items.
    if p.stored:
        p.do("CF.ADD", p.stored[0])
        p.do("CF.ADD", p.stored[0])
        p.do("CF.COUNT", p.stored[0])
        p.do("CF.ADDNX", p.stored[1])
        p.do("CF.INSERTNX", "ITEMS", p.stored[2], *p.fresh(1))
        p.do("CF.INSERT", "ITEMS", p.stored[3])
    # A never-added item that the filter answers 1 for shares a stored item's fingerprint and
    # bucket: deleting it removes that item's copy. Take the first (the golden probes' false
    # positives, then made-up names) whose deletion, tried on a copy, hits an item we know.
    mates = {}
    for x in p.stored + p.new_items:
        mates.setdefault(model.cf_hash(x)[0], []).append(x)

    def victims_of(y):
        trial, same = copy.deepcopy(cf), mates.get(model.cf_hash(y)[0], [])
        before = [trial.count(x) for x in same]
        trial.delete(y)
        return [x for x, n in zip(same, before) if trial.count(x) < n]

    names = itertools.chain(p.never, ("%s:twin:%d" % (p.tag, j) for j in range(20000)))
    twin = next(y for y in names if cf.check(y) and victims_of(y))
    p.stats["victims"] = victims_of(twin)
    p.do("CF.DEL", twin)
    p.do("CF.COUNT", twin)
    for x in p.stats["victims"][:3]:
        p.do("CF.COUNT", x)
    absent = next(x for x in ("%s:gone:%d" % (p.tag, j) for j in itertools.count())
                  if not cf.check(x))
    p.do("CF.DEL", absent)
    p.new_items += [twin, absent]
    # Deletes of stored items until one compacts the chain (then a few more).
    doomed = [x for x in p.stored + p.new_items if x not in (twin, absent)]
    limit = len(doomed) // 2 if len(cf.filters) > 1 else 20
    after = None
    for i, x in enumerate(doomed[:limit]):
        filters, deleted = len(cf.filters), cf.num_deletes
        if p.do("CF.DEL", x) == 1 and cf.num_deletes < deleted + 1:
            p.stats["compactions"] += 1
            p.stats["dropped"] += filters - len(cf.filters)
            after = i if after is None else after
        if i % 7 == 0:
            p.do("CF.COUNT", x)
        if after is not None and i >= after + 5:
            break
    p.do("CF.DEL", doomed[0])  # deleted already: 0, or another copy of its fingerprint
    for x in p.fresh(5):
        p.do("CF.ADD", x)
    p.do("CF.INSERT", "ITEMS", *p.fresh(10))


@functools.lru_cache(maxsize=None)
def plan(name):
    p = Plan(RECORDS[name])
    (bf_writes if RECORDS[name]["type"] == "bf" else cf_writes)(p)
    return p


# --- talking to the server ----------------------------------------------------------------------

def as_recorded(reply):
    """A redis-py reply as answers.json records replies."""
    if isinstance(reply, redis.ResponseError):
        return {"error": str(reply)}
    if isinstance(reply, bytes):
        return reply.decode()
    if isinstance(reply, list):
        return [as_recorded(x) for x in reply]
    return reply


def send(r, commands, chunk=2000):
    replies = []
    for i in range(0, len(commands), chunk):
        pipe = r.pipeline(transaction=False)
        for argv in commands[i:i + chunk]:
            pipe.execute_command(*argv)
        replies += pipe.execute(raise_on_error=False)
    return [as_recorded(x) for x in replies]


def differences(commands, got, want):
    """(item, command, module reply, model reply) for every reply that differs: an array reply
    of a multi-item command item by item, an INFO reply field by field (the field as item)."""
    assert len(got) == len(want)
    out = []
    for argv, g, w in zip(commands, got, want):
        if g == w:
            continue
        items = argv[argv.index("ITEMS") + 1:] if "ITEMS" in argv else argv[2:]
        if argv[0].endswith(".INFO") and isinstance(g, list):
            items, g, w = w[::2], dict(zip(g[::2], g[1::2])), w[1::2]
            g = [g.get(field, "(none)") for field in items]
        if isinstance(g, list) and isinstance(w, list):
            for j in range(max(len(g), len(w))):
                gj = g[j] if j < len(g) else "(none)"
                wj = w[j] if j < len(w) else "(none)"
                if gj != wj:
                    out.append((items[j] if j < len(items) else None, argv[0], gj, wj))
        else:
            out.append((items[0] if items else None, argv[0], g, w))
    return out


def assert_same(commands, got, want):
    diffs = differences(commands, got, want)
    assert not diffs, "%d differences (item, command, module, model), first 20: %r" % (
        len(diffs), diffs[:20])


@pytest.mark.parametrize("name", list(RECORDS))
def test_writes_to_a_restored_key_answer_as_redisbloom(r, name):
    record, p = RECORDS[name], plan(name)
    kind = record["type"].upper()
    with open(os.path.join(GOLDEN, record["dump"]["file"]), "rb") as f:
        assert r.execute_command("RESTORE", name, 0, f.read()) == b"OK"
    assert r.type(name).decode() == record["redis_type"]
    info = [kind + ".INFO", name]
    assert_same([info], send(r, [info]), [record["info"]])  # as RedisBloom left it
    assert_same(p.commands, send(r, p.commands), p.replies)
    assert r.type(name).decode() == record["redis_type"]
    reads = [info] + ([["BF.CARD", name]] if kind == "BF" else [])
    for x in record["probes"]["items"]:
        reads.append([kind + ".EXISTS", name, x])
        if kind == "CF":
            reads.append(["CF.COUNT", name, x])
    # The new items (up to 92,000 on a key) by MEXISTS, which answers as EXISTS item by item.
    for i in range(0, len(p.new_items), 1000):
        reads.append([kind + ".MEXISTS", name, *p.new_items[i:i + 1000]])
    if kind == "CF":
        reads += [["CF.COUNT", name, x] for x in p.new_items]
    assert_same(reads, send(r, reads), [model.apply(p.key, argv) for argv in reads])


def test_the_writes_reach_every_case():
    plans = [plan(name) for name in RECORDS]
    bf = [p for p in plans if isinstance(p.key.value, model.BloomChain)]
    cf = [p for p in plans if isinstance(p.key.value, model.Cuckoo)]
    assert len(bf) == 13 and len(cf) == 15
    # Every scaling Bloom key grew a sub-filter; the full NONSCALING ones refused new items.
    assert all(p.stats["grew"] for p in bf if not p.key.value.nonscaling)
    full = [p.name for p in bf if "ERR non scaling filter is full" in p.stats["errors"]]
    assert full == ["a06-bf-e0.001-c1000-nonscaling", "a08-bf-insert-e0.01-c300-nonscaling"]
    # Cuckoo keys grew, were full, reached the 32-filter limit, compacted (dropping filters),
    # and lost a stored item's copy to the deletion of another item with its fingerprint.
    assert sum(p.stats["grew"] for p in cf) >= 10
    errors = set().union(*(p.stats["errors"] for p in cf))
    assert errors >= {"Filter is full", "-1", "Maximum expansions reached"}
    assert sum(p.stats["compactions"] for p in cf) >= 5
    assert sum(p.stats["dropped"] for p in cf) >= 1
    assert all(p.stats["victims"] for p in cf if p.key.value.num_items)
