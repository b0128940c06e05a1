"""An independent model of RedisBloom 2.4's two filters, for checking the module's writes.

Written only from the facts page redisbloom-format.md (its §3 and §4, numbered as in
docs/redisbloom-format.md and cited below as §n): the Bloom chain of `MBbloom--` keys (§3) and
the cuckoo filter of `MBbloomCF` keys (§4), with the replies the BF.* / CF.* commands give. It
shares nothing with the C++ code on purpose: it is a second implementation, proved against the
real RedisBloom by test_redisbloom_model.py (the golden data). Standard library only.

    key = replay(golden_key_record)        # a ModelKey, built by the key's recorded commands
    apply(key, ["CF.ADD", "k", "x"])        # -> 1, 0, "OK", [..], None or {"error": "..."}

Replies are as answers.json records them: ints, "OK", lists, None for nil and
{"error": "<full text>"} for an error reply (also as an element of an array)."""

import math
import struct

MASK = (1 << 64) - 1
M64 = 0xc6a4a7935bd1e995  # MurmurHash64A's multiplier, also the first Bloom hash's seed (§3.4)
FP_MUL = 0x5bd1e995  # the cuckoo fingerprint's multiplier for the alternate bucket (§4.2)
LN2_SQUARED = 0.480453013918201  # §3.2 step 1
LN2 = 0.693147180559945  # the truncated ln 2 of §3.2 step 5

BF_DEFAULTS = {"capacity": 100, "error": 0.01, "expansion": 2}  # §1 load-time defaults
CF_DEFAULTS = {"capacity": 1024, "bucket_size": 2, "max_iterations": 20, "expansion": 1}  # §4.1
CF_MAX_FILTERS = 32  # CF_MAX_EXPANSIONS (§4.1)


class ModelError(Exception):
    """A command or case the format document does not describe (so the model does not guess)."""


def murmur64a(data, seed):
    """MurmurHash64A of `data` (bytes) with a 64-bit seed (§3.4)."""
    n = len(data)
    h = (seed ^ (n * M64)) & MASK
    end = n & ~7
    for (k,) in struct.iter_unpack("<Q", data[:end]):
        k = (k * M64) & MASK
        k = ((k ^ (k >> 47)) * M64) & MASK
        h = ((h ^ k) * M64) & MASK
    if n & 7:
        h = ((h ^ int.from_bytes(data[end:], "little")) * M64) & MASK
    h = ((h ^ (h >> 47)) * M64) & MASK
    return h ^ (h >> 47)


def as_bytes(item):
    # The golden items are JSON strings; Redis received their UTF-8 bytes (README).
    return item if isinstance(item, bytes) else item.encode()


# --- Bloom chain (§3) ---------------------------------------------------------------------------

class BloomLink:
    """One sub-filter of the chain, sized by §3.2 from its own capacity and rate."""

    def __init__(self, entries, error):
        self.entries, self.error = entries, error
        self.bpe = abs(-(math.log(error) / LN2_SQUARED))
        raw = int(entries * self.bpe) or 1  # truncated toward zero, at least 1 (step 2)
        self.bytes = (raw // 64 + 1) * 8 if raw % 64 else raw // 8  # whole 64-bit words (step 3)
        self.bits = self.bytes * 8  # the rounded count is the modulus (step 4)
        self.hashes = math.ceil(LN2 * self.bpe)
        self.size = 0
        self.array = bytearray(self.bytes)

    def positions(self, a, b):
        bits = self.bits
        return [((a + j * b) & MASK) % bits for j in range(self.hashes)]

    def has(self, a, b):
        array = self.array
        for x in self.positions(a, b):
            if not array[x >> 3] >> (x & 7) & 1:
                return False
        return True

    def set(self, a, b):
        for x in self.positions(a, b):
            self.array[x >> 3] |= 1 << (x & 7)  # least significant bit first (§3.4)


class BloomChain:
    """A `MBbloom--` value: links oldest first (§3.1, §3.3)."""

    def __init__(self, capacity, error, expansion, nonscaling):
        self.growth = expansion & 0xFFFFFFFF  # stored as unsigned 32-bit (§3.3 quirk)
        self.nonscaling = nonscaling
        self.size = 0
        # Link 0 is tightened by 0.5 unless NONSCALING (§3.3).
        self.links = [BloomLink(capacity, error if nonscaling else error * 0.5)]

    @staticmethod
    def hash(item):
        data = as_bytes(item)
        a = murmur64a(data, M64)
        return a, murmur64a(data, a)  # (a, b) serve every link (§3.4)

    def check(self, item):
        a, b = self.hash(item)
        return int(any(link.has(a, b) for link in reversed(self.links)))

    def add(self, item):
        """1, 0, or an error reply (§3.3 Add)."""
        a, b = self.hash(item)
        if any(link.has(a, b) for link in reversed(self.links)):
            return 0  # already there: uses no capacity
        newest = self.links[-1]
        if newest.size >= newest.entries:
            if self.nonscaling:
                return {"error": "ERR non scaling filter is full"}
            entries = (newest.entries * self.growth) & MASK
            if entries == 0:
                return 1  # EXPANSION 0: no link can be made, yet the reply is 1 (§3.3 quirk)
            newest = BloomLink(entries, newest.error * 0.5)
            self.links.append(newest)
        newest.set(a, b)
        newest.size += 1
        self.size += 1
        return 1

    def info(self):
        return ["Capacity", sum(link.entries for link in self.links),
                "Size", 32 + sum(64 + link.bytes for link in self.links),  # §3.7
                "Number of filters", len(self.links),
                "Number of items inserted", self.size,
                "Expansion rate", None if self.nonscaling else self.growth]

    def debug(self):
        return ["size:%d" % self.size] + [
            "bytes:%d bits:%d hashes:%d hashwidth:64 capacity:%d size:%d ratio:%g"
            % (x.bytes, x.bits, x.hashes, x.entries, x.size, x.error) for x in self.links]

    def arrays(self):
        return [bytes(link.array) for link in self.links]


# --- cuckoo filter (§4) -------------------------------------------------------------------------

def next_pow2(n):
    return 0 if n == 0 else 1 << (n - 1).bit_length()  # 0 stays 0 (§4.1)


def cf_hash(item):
    """(fp, i1, i2) of an item (§4.2); the same triple serves every sub-filter."""
    h = murmur64a(as_bytes(item), 0)
    fp = h % 255 + 1
    return fp, h, h ^ (fp * FP_MUL)


class Cuckoo:
    """A `MBbloomCF` value: sub-filters oldest first, each a bytearray of one-byte slots (§4.1).
    Bucket counts are powers of two, so `i mod n` is `i & (n - 1)`; the 32-bit truncation of the
    slot offset (§4.2) only matters past 2^32 slots and is left out."""

    def __init__(self, capacity, bucket_size, max_iterations, expansion):
        self.bucket_size, self.max_iterations = bucket_size, max_iterations
        self.num_buckets = max(1, next_pow2(capacity // bucket_size))
        self.expansion = next_pow2(expansion)  # stored rounded up to a power of two (§4.1)
        self.num_items = self.num_deletes = 0
        self.filters = [bytearray(self.num_buckets * bucket_size)]

    def _grow(self):
        buckets = self.num_buckets * self.expansion ** len(self.filters)
        self.filters.append(bytearray(buckets * self.bucket_size))

    def _buckets(self, array, i1, i2):
        """The first slot of each of the item's two buckets in `array`."""
        mask = len(array) // self.bucket_size - 1
        return (i1 & mask) * self.bucket_size, (i2 & mask) * self.bucket_size

    def _place(self, fp, i1, i2):
        """§4.3 step 1: an empty slot of bucket i1, else i2, sub-filters newest first."""
        bs = self.bucket_size
        for array in reversed(self.filters):
            for start in self._buckets(array, i1, i2):
                slot = array.find(0, start, start + bs)
                if slot >= 0:
                    array[slot] = fp
                    return True
        return False

    def _kick(self, fp, i1):
        """§4.3 steps 2-3: kick-outs in the newest sub-filter only, undone when they fail."""
        array, bs = self.filters[-1], self.bucket_size
        mask = len(array) // bs - 1
        b, v, carried = i1 & mask, 0, fp
        for _ in range(self.max_iterations):
            pos = b * bs + v
            array[pos], carried = carried, array[pos]
            b = (b ^ (carried * FP_MUL)) & mask
            slot = array.find(0, b * bs, b * bs + bs)
            if slot >= 0:
                array[slot] = carried
                return True
            v = (v + 1) % bs
        for _ in range(self.max_iterations):  # walk back, putting every victim where it was
            v = (v + bs - 1) % bs
            b = (b ^ (carried * FP_MUL)) & mask
            pos = b * bs + v
            array[pos], carried = carried, array[pos]
        return False

    def insert(self, item, nx=False):
        """1 stored, 0 (nx: may be present), None: full with EXPANSION 0 (§4.3)."""
        if nx and self.check(item):
            return 0
        fp, i1, i2 = cf_hash(item)
        while not (self._place(fp, i1, i2) or self._kick(fp, i1)):
            if self.expansion == 0:
                return None
            self._grow()  # then step 1 again: it lands in the new, empty sub-filter
        self.num_items += 1
        return 1

    def check(self, item):
        fp, i1, i2 = cf_hash(item)
        bs = self.bucket_size
        return int(any(array.find(fp, s, s + bs) >= 0
                       for array in self.filters for s in self._buckets(array, i1, i2)))

    def count(self, item):
        # Both buckets are counted even when they are the same one (§4.4 COUNT).
        fp, i1, i2 = cf_hash(item)
        bs = self.bucket_size
        return sum(array.count(fp, s, s + bs)
                   for array in self.filters for s in self._buckets(array, i1, i2))

    def delete(self, item):
        """§4.4 DEL: one matching fingerprint, whoever's, newest sub-filter first."""
        fp, i1, i2 = cf_hash(item)
        bs = self.bucket_size
        for array in reversed(self.filters):
            for start in self._buckets(array, i1, i2):
                slot = array.find(fp, start, start + bs)
                if slot >= 0:
                    array[slot] = 0
                    self.num_items -= 1
                    self.num_deletes += 1
                    if len(self.filters) > 1 and self.num_deletes > self.num_items * 0.10:
                        self.compact(cont=False)
                    return 1
        return 0

    def compact(self, cont):
        """§4.4 Compaction: move fingerprints down into older sub-filters, newest first."""
        bs = self.bucket_size
        for s in range(len(self.filters) - 1, 0, -1):
            array = self.filters[s]
            all_moved = True
            for pos, fp in enumerate(array):  # buckets ascending, slots ascending
                if not fp:
                    continue
                if self._move_down(fp, pos // bs, s):
                    array[pos] = 0
                else:
                    all_moved = False
            if all_moved and s == len(self.filters) - 1:
                self.filters.pop()
            elif not all_moved and not cont:
                break
        self.num_deletes = 0

    def _move_down(self, fp, j, s):
        bs = self.bucket_size
        for array in self.filters[:s]:
            mask = len(array) // bs - 1
            for b in (j & mask, (j ^ (fp * FP_MUL)) & mask):
                slot = array.find(0, b * bs, b * bs + bs)
                if slot >= 0:
                    array[slot] = fp
                    return True
        return False

    def info(self):
        return ["Size", 40 + 16 * len(self.filters) + sum(map(len, self.filters)),  # §4.7
                "Number of buckets", self.num_buckets,
                "Number of filters", len(self.filters),
                "Number of items inserted", self.num_items,
                "Number of items deleted", self.num_deletes,
                "Bucket size", self.bucket_size,
                "Expansion rate", self.expansion,
                "Max iterations", self.max_iterations]

    def debug(self):
        return ("bktsize:%d buckets:%d items:%d deletes:%d filters:%d max_iterations:%d "
                "expansion:%d" % (self.bucket_size, self.num_buckets, self.num_items,
                                  self.num_deletes, len(self.filters), self.max_iterations,
                                  self.expansion))

    def arrays(self):
        return [bytes(array) for array in self.filters]


# --- commands -----------------------------------------------------------------------------------

class ModelKey:
    """One Redis key: `value` is None (missing), a BloomChain or a Cuckoo."""

    def __init__(self, value=None):
        self.value = value


def _options(args, flags=(), valued=()):
    """Keyword options (case-insensitive) up to ITEMS: ({name: value or True}, items)."""
    found, i = {}, 0
    while i < len(args):
        word = args[i].upper()
        if word == "ITEMS":
            return found, args[i + 1:]
        if word in flags:
            found[word] = True
        elif word in valued and i + 1 < len(args):
            found[word] = args[i + 1]
            i += 1
        else:
            raise ModelError("option not modelled: %r" % args[i])
        i += 1
    return found, None


def _bf(key, argv):
    name, args = argv[0].upper(), argv[2:]
    chain = key.value
    if name == "BF.RESERVE":
        if chain is not None:
            raise ModelError("BF.RESERVE of an existing key")
        opts, _ = _options(args[2:], flags=("NONSCALING",), valued=("EXPANSION",))
        key.value = BloomChain(int(args[1]), float(args[0]),
                               int(opts.get("EXPANSION", BF_DEFAULTS["expansion"])),
                               "NONSCALING" in opts)
        return "OK"
    if name in ("BF.ADD", "BF.MADD", "BF.INSERT"):
        items = args
        if name == "BF.INSERT":
            opts, items = _options(args, flags=("NONSCALING", "NOCREATE"),
                                   valued=("CAPACITY", "ERROR", "EXPANSION"))
            if chain is None and "NOCREATE" in opts:
                raise ModelError("BF.INSERT NOCREATE of a missing key")
        else:
            opts = {}
        if chain is None:  # BF.ADD / BF.MADD / BF.INSERT create the key (§1 defaults)
            chain = key.value = BloomChain(
                int(opts.get("CAPACITY", BF_DEFAULTS["capacity"])),
                float(opts.get("ERROR", BF_DEFAULTS["error"])),
                int(opts.get("EXPANSION", BF_DEFAULTS["expansion"])), "NONSCALING" in opts)
        if name == "BF.ADD":
            return chain.add(items[0])
        replies = []
        for item in items:
            replies.append(chain.add(item))
            if isinstance(replies[-1], dict):
                break  # the array stops at the first error (§3.3)
        return replies
    if name == "BF.EXISTS":
        return chain.check(args[0]) if chain else 0
    if name == "BF.MEXISTS":
        return [chain.check(x) if chain else 0 for x in args]
    if chain is None:
        raise ModelError("%s of a missing key" % name)
    if name == "BF.CARD":
        return chain.size
    if name == "BF.INFO":
        return chain.info()
    if name == "BF.DEBUG":
        return chain.debug()
    raise ModelError("command not modelled: " + argv[0])


def _cf(key, argv):
    name, args = argv[0].upper(), argv[2:]
    cf = key.value
    if name == "CF.RESERVE":
        if cf is not None:
            raise ModelError("CF.RESERVE of an existing key")
        opts, _ = _options(args[1:], valued=("BUCKETSIZE", "MAXITERATIONS", "EXPANSION"))
        key.value = Cuckoo(int(args[0]),
                           int(opts.get("BUCKETSIZE", CF_DEFAULTS["bucket_size"])),
                           int(opts.get("MAXITERATIONS", CF_DEFAULTS["max_iterations"])),
                           int(opts.get("EXPANSION", CF_DEFAULTS["expansion"])))
        return "OK"
    if name in ("CF.ADD", "CF.ADDNX", "CF.INSERT", "CF.INSERTNX"):
        nx = name.endswith("NX")
        items, opts = args, {}
        if name.startswith("CF.INSERT"):
            opts, items = _options(args, flags=("NOCREATE",), valued=("CAPACITY",))
            if cf is None and "NOCREATE" in opts:
                raise ModelError("CF.INSERT NOCREATE of a missing key")
        if cf is None:  # created with CF.INSERT's CAPACITY or 1024 and the defaults (§4.1)
            cf = key.value = Cuckoo(int(opts.get("CAPACITY", CF_DEFAULTS["capacity"])),
                                    CF_DEFAULTS["bucket_size"], CF_DEFAULTS["max_iterations"],
                                    CF_DEFAULTS["expansion"])
        if len(cf.filters) >= CF_MAX_FILTERS:  # checked once, before any item (§4.1)
            return {"error": "Maximum expansions reached"}
        if name.startswith("CF.ADD"):
            reply = cf.insert(items[0], nx)
            return {"error": "Filter is full"} if reply is None else reply
        return [-1 if r is None else r for r in (cf.insert(x, nx) for x in items)]
    if name == "CF.EXISTS":
        return cf.check(args[0]) if cf else 0
    if name == "CF.MEXISTS":
        return [cf.check(x) if cf else 0 for x in args]
    if name == "CF.COUNT":
        return cf.count(args[0]) if cf else 0
    if cf is None:
        raise ModelError("%s of a missing key" % name)
    if name == "CF.DEL":
        return cf.delete(args[0])
    if name == "CF.COMPACT":
        cf.compact(cont=True)
        return "OK"
    if name == "CF.INFO":
        return cf.info()
    if name == "CF.DEBUG":
        return cf.debug()
    raise ModelError("command not modelled: " + argv[0])


def apply(key, argv):
    """Applies one BF.* / CF.* command (argv: the command name, the key's name, arguments) to
    `key` (a ModelKey) and returns its reply as answers.json would record it."""
    kind = argv[0].upper()[:3]
    handler, value_type = {"BF.": (_bf, BloomChain), "CF.": (_cf, Cuckoo)}[kind]
    if key.value is not None and not isinstance(key.value, value_type):
        raise ModelError("WRONGTYPE is not modelled")
    return handler(key, argv)


def replay(key_record):
    """A ModelKey built by a golden key's recorded creation commands (`commands[i]["argv"]`)."""
    key = ModelKey()
    for command in key_record["commands"]:
        apply(key, command["argv"])
    return key
