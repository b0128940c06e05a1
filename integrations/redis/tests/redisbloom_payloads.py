"""RedisBloom 2.4's data as Redis stores it, for the tests of the module's `MBbloom--` and
`MBbloomCF` types (test_redisbloom_data.py): the golden data set written by the real RedisBloom
(tests/data/redisbloom-golden), Redis's container around a module value (RDB lengths and strings,
LZF, CRC-64, DUMP payloads, a minimal RDB file), RedisBloom's field lists per encoding version,
its SCANDUMP headers, and a model of its Bloom filter's bit positions (for the answers of old
encodings that the golden data does not record).

Everything here follows docs/redisbloom-format.md (§ numbers below refer to it); nothing is taken
from RedisBloom's or Redis's code."""

import functools
import json
import math
import os
import struct

import redis

GOLDEN = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                       "..", "tests", "data", "redisbloom-golden"))
BF_TYPE = "MBbloom--"
CF_TYPE = "MBbloomCF"
ENCODING = 4  # the encoding version RedisBloom 2.4 writes for both types (§1)
RDB_VERSION = 10  # Redis 7.0's, in the golden DUMP payloads' footers (§2)

# Field opcodes of a module value (§2): each saved field is (opcode, value).
OP_EOF, OP_SINT, OP_UINT, OP_FLOAT, OP_DOUBLE, OP_STRING = 0, 1, 2, 3, 4, 5
RDB_TYPE_MODULE_2 = 7

# RedisBloom's Bloom options bits (§3.1).
NOROUND, ENTS_IS_BITS, FORCE64, NO_SCALING = 1, 2, 4, 8
LN2 = 0.693147180559945  # the truncated ln 2 of RedisBloom's k = ceil(LN2 * bpe) (§3.2)

MASK64 = (1 << 64) - 1


# --- the golden data ----------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def answers():
    with open(os.path.join(GOLDEN, "answers.json"), encoding="utf-8") as f:
        return json.load(f)


def golden_keys():
    """answers.json's per-key records, in its order."""
    return answers()["keys"]


def golden_file(name):
    with open(os.path.join(GOLDEN, name), "rb") as f:
        return f.read()


@functools.lru_cache(maxsize=None)
def golden_dump(key):
    """The DUMP payload RedisBloom wrote for `key`."""
    return golden_file(os.path.join("dump", key + ".bin"))


@functools.lru_cache(maxsize=None)
def golden_chunks(key):
    """`key`'s SCANDUMP sequence as (iter, bytes) pairs, header first; () for an empty cuckoo
    filter (RedisBloom replies [0, nil] at once, so it has no chunks)."""
    return tuple((c["iter"], golden_file(c["file"]))
                 for c in answers_of(key)["scandump"])


def answers_of(key):
    for k in golden_keys():
        if k["key"] == key:
            return k
    raise KeyError(key)


def golden_rdb_path():
    return os.path.join(GOLDEN, "dump.rdb")


def utf8(items):
    return [s.encode("utf-8") for s in items]


# --- CRC-64 (Jones, reflected, initial 0, no final XOR: §2) ------------------------------------

def _crc64_table():
    poly = 0
    for i in range(64):  # the reflected form of 0xad93d23594c935a9
        if 0xad93d23594c935a9 >> i & 1:
            poly |= 1 << (63 - i)
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC64 = _crc64_table()


def crc64(data, crc=0):
    table = _CRC64
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


# --- RDB lengths and strings (§2) ---------------------------------------------------------------

def rdb_length(n):
    """n in Redis's RDB length encoding, the shortest form."""
    if n < 0 or n > MASK64:
        raise ValueError(n)
    if n < 1 << 6:
        return bytes([n])
    if n < 1 << 14:
        return bytes([0x40 | n >> 8, n & 0xFF])
    if n < 1 << 32:
        return b"\x80" + n.to_bytes(4, "big")
    return b"\x81" + n.to_bytes(8, "big")


def read_length(buf, pos):
    """(value, is_special_string_encoding, next position) of the RDB length at buf[pos]."""
    first = buf[pos]
    kind = first >> 6
    if kind == 0:
        return first & 0x3F, False, pos + 1
    if kind == 1:
        return (first & 0x3F) << 8 | buf[pos + 1], False, pos + 2
    if kind == 3:
        return first & 0x3F, True, pos + 1
    if first == 0x80:
        return int.from_bytes(_take(buf, pos + 1, 4), "big"), False, pos + 5
    if first == 0x81:
        return int.from_bytes(_take(buf, pos + 1, 8), "big"), False, pos + 9
    raise ValueError("bad RDB length byte 0x%02x at %d" % (first, pos))


def _take(buf, pos, n):
    if pos + n > len(buf):
        raise ValueError("cut short: %d bytes wanted at %d of %d" % (n, pos, len(buf)))
    return bytes(buf[pos:pos + n])


def lzf_decompress(data, length):
    """LZF's format: a control byte below 32 copies that many plus one literal bytes; otherwise
    its top 3 bits (7: plus the next byte) plus 2 are a length to copy from a back reference
    (its low 5 bits and the next byte, plus 1, back from the end of the output)."""
    out = bytearray()
    i = 0
    while i < len(data):
        ctrl = data[i]
        i += 1
        if ctrl < 32:
            out += data[i:i + ctrl + 1]
            i += ctrl + 1
            continue
        n = ctrl >> 5
        if n == 7:
            n += data[i]
            i += 1
        ref = len(out) - ((ctrl & 0x1F) << 8) - data[i] - 1
        i += 1
        n += 2
        if ref < 0:
            raise ValueError("LZF back reference before the start")
        if ref + n <= len(out):
            out += out[ref:ref + n]
        else:  # overlapping: byte by byte
            for k in range(n):
                out.append(out[ref + k])
    if len(out) != length:
        raise ValueError("LZF gave %d bytes, %d announced" % (len(out), length))
    return bytes(out)


class EncodedString(bytes):
    """A string field's bytes together with the exact RDB encoding they were read from (plain,
    integer or LZF), so that an unchanged field is written back byte for byte. Any operation that
    makes new bytes (slicing, +) gives plain bytes, which build_value writes uncompressed."""

    def __new__(cls, value, encoding=None):
        s = super().__new__(cls, value)
        s.encoding = encoding
        return s


def read_string(buf, pos):
    """(EncodedString, next position) of the RDB string at buf[pos]."""
    start = pos
    n, special, pos = read_length(buf, pos)
    if not special:
        value = _take(buf, pos, n)
        pos += n
    elif n in (0, 1, 2):
        size = 1 << n
        value = str(int.from_bytes(_take(buf, pos, size), "little", signed=True)).encode()
        pos += size
    elif n == 3:
        clen, _, pos = read_length(buf, pos)
        ulen, _, pos = read_length(buf, pos)
        value = lzf_decompress(_take(buf, pos, clen), ulen)
        pos += clen
    else:
        raise ValueError("unknown RDB string encoding %d" % n)
    return EncodedString(value, bytes(buf[start:pos])), pos


def rdb_string(value):
    if isinstance(value, EncodedString) and value.encoding is not None:
        return value.encoding
    if isinstance(value, str):
        value = value.encode("utf-8")
    return rdb_length(len(value)) + bytes(value)


# --- module type ids (§1) -----------------------------------------------------------------------

_NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def module_type_id(name, encver):
    assert len(name) == 9 and 0 <= encver < 1024
    n = 0
    for ch in name:
        n = n << 6 | _NAME_CHARS.index(ch)
    return n << 10 | encver


def split_module_type_id(type_id):
    """(type name, encoding version) of a module type id."""
    n = type_id >> 10
    name = "".join(_NAME_CHARS[n >> (6 * (8 - i)) & 63] for i in range(9))
    return name, type_id & 1023


# --- module values and DUMP payloads (§2) -------------------------------------------------------

def U(v):
    return (OP_UINT, v)


def D(v):
    return (OP_DOUBLE, v)


def S(v):
    return (OP_STRING, v)


def read_fields(buf, pos):
    """The (opcode, value) fields from buf[pos] up to the EOF opcode; (fields, next position)."""
    fields = []
    while True:
        op, special, pos = read_length(buf, pos)
        if special:
            raise ValueError("bad opcode at %d" % pos)
        if op == OP_EOF:
            return fields, pos
        if op in (OP_UINT, OP_SINT):
            v, special, pos = read_length(buf, pos)
            if special:
                raise ValueError("bad integer at %d" % pos)
            if op == OP_SINT:
                v = v - (1 << 64) if v >> 63 else v
        elif op == OP_FLOAT:
            (v,) = struct.unpack("<f", _take(buf, pos, 4))
            pos += 4
        elif op == OP_DOUBLE:
            (v,) = struct.unpack("<d", _take(buf, pos, 8))
            pos += 8
        elif op == OP_STRING:
            v, pos = read_string(buf, pos)
        else:
            raise ValueError("unknown opcode %d" % op)
        fields.append((op, v))


def field_bytes(fields):
    out = bytearray()
    for op, v in fields:
        out += rdb_length(op)
        if op == OP_UINT:
            out += rdb_length(v)
        elif op == OP_SINT:
            out += rdb_length(v & MASK64)
        elif op == OP_FLOAT:
            out += struct.pack("<f", v)
        elif op == OP_DOUBLE:
            out += struct.pack("<d", v)
        elif op == OP_STRING:
            out += rdb_string(v)
        else:
            raise ValueError(op)
    return bytes(out)


def value_body(type_name, encver, fields):
    """A module value as it follows its key in an RDB file: the module type id, the fields, EOF
    (without the type byte)."""
    return rdb_length(module_type_id(type_name, encver)) + field_bytes(fields) + b"\x00"


def parse_value_body(buf, pos):
    """(type name, encoding version, fields, next position) of the value body at buf[pos]."""
    type_id, special, pos = read_length(buf, pos)
    if special:
        raise ValueError("bad module type id")
    name, encver = split_module_type_id(type_id)
    fields, pos = read_fields(buf, pos)
    return name, encver, fields, pos


def with_footer(value, rdb_version=RDB_VERSION):
    """A DUMP payload: `value` (type byte included), the RDB version, the CRC-64 of both."""
    body = bytes(value) + struct.pack("<H", rdb_version)
    return body + struct.pack("<Q", crc64(body))


def build_dump(type_name, encver, fields, rdb_version=RDB_VERSION):
    return with_footer(bytes([RDB_TYPE_MODULE_2]) + value_body(type_name, encver, fields),
                       rdb_version)


def parse_dump(payload):
    """(type name, encoding version, fields) of a module-value DUMP payload; checks its footer
    (RDB version 10, CRC-64) and that nothing follows the value."""
    body, footer = payload[:-10], payload[-10:]
    version, crc = struct.unpack("<HQ", footer)
    if version != RDB_VERSION or crc != crc64(payload[:-8]):
        raise ValueError("bad footer: RDB version %d, CRC %#x" % (version, crc))
    if body[0] != RDB_TYPE_MODULE_2:
        raise ValueError("not a module value: type %d" % body[0])
    name, encver, fields, pos = parse_value_body(body, 1)
    if pos != len(body):
        raise ValueError("%d bytes after the value" % (len(body) - pos))
    return name, encver, fields


def field_spans(payload):
    """For a DUMP payload: [(start, end of the opcode, end)] of each field and of the EOF opcode,
    as offsets into the payload (for cutting it at chosen places)."""
    _, _, pos = read_length(payload, 1)
    spans = []
    while True:
        op, _, after_op = read_length(payload, pos)
        if op == OP_EOF:
            spans.append((pos, after_op, after_op))
            return spans
        end = _field_end(payload, pos)
        spans.append((pos, after_op, end))
        pos = end


def _field_end(buf, pos):
    op, _, pos = read_length(buf, pos)
    if op in (OP_UINT, OP_SINT):
        return read_length(buf, pos)[2]
    if op == OP_FLOAT:
        return pos + 4
    if op == OP_DOUBLE:
        return pos + 8
    if op == OP_STRING:
        return read_string(buf, pos)[1]
    raise ValueError("unknown opcode %d" % op)


def opcodes(fields):
    return [op for op, _ in fields]


def truncated_payloads(payload, cuts):
    """{cut: payload} for each cut: the value's first `cut` bytes with a new, valid footer (so
    Redis hands the cut value to the module). One CRC pass for all the cuts."""
    value = payload[:-10]
    version = struct.pack("<H", RDB_VERSION)
    out, crc, at = {}, 0, 0
    for cut in sorted(cuts):
        assert 0 < cut < len(value)
        crc = crc64(value[at:cut], crc)
        at = cut
        out[cut] = value[:cut] + version + struct.pack("<Q", crc64(version, crc))
    return out


def footer_completes(payload, fields):
    """Whether a cut payload's value, read on into its footer bytes (as Redis reads it), still
    gives the same field types up to an EOF opcode (e.g. a cut after the last field's opcode:
    the footer's first byte, 10, becomes that field's value and its second, 0, the EOF)."""
    try:
        _, _, got, _ = parse_value_body(payload, 1)
    except (ValueError, IndexError):
        return False
    return opcodes(got) == opcodes(fields)


# --- RDB files (§2) -----------------------------------------------------------------------------

def build_rdb(keys, rdb_version=RDB_VERSION):
    """A minimal RDB file: the header, one AUX field, db 0 holding `keys` — (key, type name,
    encoding version, fields) each, all module values — then EOF and the CRC-64."""
    out = bytearray(b"REDIS%04d" % rdb_version)
    out += b"\xfa" + rdb_string(b"redis-ver") + rdb_string(b"7.0.15")
    out += b"\xfe" + rdb_length(0)
    out += b"\xfb" + rdb_length(len(keys)) + rdb_length(0)
    for key, type_name, encver, fields in keys:
        out += bytes([RDB_TYPE_MODULE_2]) + rdb_string(key) + value_body(type_name, encver, fields)
    out += b"\xff"
    return bytes(out) + struct.pack("<Q", crc64(out))


def parse_rdb(data):
    """{key: (type name, encoding version, fields)} of an RDB file holding only module values
    (and AUX fields, db selectors, size hints, expiry times); checks its CRC-64."""
    if data[:5] != b"REDIS":
        raise ValueError("not an RDB file")
    (crc,) = struct.unpack("<Q", data[-8:])
    if crc != crc64(data[:-8]):
        raise ValueError("bad RDB CRC")
    keys = {}
    pos = 9
    while True:
        op = data[pos]
        pos += 1
        if op == 0xFF:
            if pos != len(data) - 8:
                raise ValueError("bytes after EOF")
            return keys
        if op == 0xFA:
            _, pos = read_string(data, pos)
            _, pos = read_string(data, pos)
        elif op == 0xFE:
            _, _, pos = read_length(data, pos)
        elif op == 0xFB:
            _, _, pos = read_length(data, pos)
            _, _, pos = read_length(data, pos)
        elif op == 0xFC:
            pos += 8
        elif op == 0xFD:
            pos += 4
        elif op == RDB_TYPE_MODULE_2:
            key, pos = read_string(data, pos)
            name, encver, fields, pos = parse_value_body(data, pos)
            keys[bytes(key).decode()] = (name, encver, fields)
        else:
            raise ValueError("RDB opcode/type %d not expected here" % op)


# --- RedisBloom's fields per encoding version (§3.5, §4.5) --------------------------------------

def _values(fields, ops):
    assert opcodes(fields) == ops, (opcodes(fields), ops)
    return [v for _, v in fields]


def bf_chain(fields, encver=ENCODING):
    """A Bloom value's fields as a dict: size, nfilters, options, growth (the defaults 0 and 2
    where the encoding lacks them), links: [{entries, error, hashes, bpe, bits, n2, array,
    size}] (bits = int(entries * bpe) and n2 = 0 in encoding 0, as RedisBloom computes them)."""
    head = [OP_UINT, OP_UINT] + [OP_UINT] * (encver >= 2) + [OP_UINT] * (encver >= 4)
    link_ops = [OP_UINT, OP_DOUBLE, OP_UINT, OP_DOUBLE] + [OP_UINT, OP_UINT] * (encver >= 1) + \
        [OP_STRING, OP_UINT]
    values = _values(fields[:len(head)], head)
    chain = {"size": values[0], "nfilters": values[1],
             "options": values[2] if encver >= 2 else 0,
             "growth": values[-1] if encver >= 4 else 2, "links": []}
    rest = fields[len(head):]
    assert len(rest) == len(link_ops) * chain["nfilters"]
    for i in range(chain["nfilters"]):
        v = _values(rest[i * len(link_ops):(i + 1) * len(link_ops)], link_ops)
        link = {"entries": v[0], "error": v[1], "hashes": v[2], "bpe": v[3]}
        if encver >= 1:
            link.update(bits=v[4], n2=v[5])
        else:
            link.update(bits=int(float(v[0]) * v[3]), n2=0)
        link.update(array=v[-2], size=v[-1])
        chain["links"].append(link)
    return chain


def bf_fields(chain, encver=ENCODING):
    """The fields RedisBloom's encoding `encver` stores for `chain` (bf_chain's dict)."""
    fields = [U(chain["size"]), U(chain["nfilters"])]
    if encver >= 2:
        fields.append(U(chain["options"]))
    if encver >= 4:
        fields.append(U(chain["growth"]))
    for link in chain["links"]:
        fields += [U(link["entries"]), D(link["error"]), U(link["hashes"]), D(link["bpe"])]
        if encver >= 1:
            fields += [U(link["bits"]), U(link["n2"])]
        fields += [S(link["array"]), U(link["size"])]
    return fields


CF_HEAD = ["numFilters", "numBuckets", "numItems", "numDeletes", "bucketSize", "maxIterations",
           "expansion"]
CF_OLD_DEFAULTS = {"numDeletes": 0, "bucketSize": 2, "maxIterations": 20, "expansion": 1}


def cf_filter(fields, encver=ENCODING):
    """A cuckoo value's fields as a dict: CF_HEAD's names (CF_OLD_DEFAULTS where encodings 0-3
    lack them) and filters: [(buckets, slots)] (every sub-filter numBuckets buckets before 4)."""
    names = CF_HEAD if encver >= 4 else CF_HEAD[:3]
    head = _values(fields[:len(names)], [OP_UINT] * len(names))
    f = dict(CF_OLD_DEFAULTS)
    f.update(zip(names, head))
    per = [OP_UINT, OP_STRING] if encver >= 4 else [OP_STRING]
    rest = fields[len(names):]
    assert len(rest) == len(per) * f["numFilters"]
    f["filters"] = []
    for i in range(f["numFilters"]):
        v = _values(rest[i * len(per):(i + 1) * len(per)], per)
        f["filters"].append((v[0] if encver >= 4 else f["numBuckets"], v[-1]))
    return f


def cf_fields(f, encver=ENCODING):
    names = CF_HEAD if encver >= 4 else CF_HEAD[:3]
    fields = [U(f[n]) for n in names]
    for buckets, slots in f["filters"]:
        if encver >= 4:
            fields.append(U(buckets))
        fields.append(S(slots))
    return fields


def copy_chain(chain, **changes):
    """A copy of a bf_chain dict (its links copied too), with `changes`."""
    return dict(chain, links=[dict(link) for link in chain["links"]], **changes)


def bf_encoding0_compatible(chain):
    """The chain with each link's bpe moved to the smallest double for which RedisBloom's
    encoding-0 bit count, int(entries * bpe), is the array's 8 * bytes (what its integrity check
    demands of every link), and hashes = ceil(LN2 * bpe) for that bpe: a value encoding 0 can
    hold. (2.4's links round the bit count up to whole words, so entries * bpe rarely is it.)"""
    out = copy_chain(chain)
    for link in out["links"]:
        bits = 8 * len(link["array"])
        bpe = bits / link["entries"]
        while int(float(link["entries"]) * bpe) < bits:
            bpe = math.nextafter(bpe, math.inf)
        while bpe > 0 and int(float(link["entries"]) * math.nextafter(bpe, 0)) == bits:
            bpe = math.nextafter(bpe, 0)
        assert int(float(link["entries"]) * bpe) == bits
        link.update(bpe=bpe, hashes=bf_hashes_for(bpe), bits=bits, n2=0)
    return out


def cf_old_encoding_fits(f):
    """Whether encodings 0-3 can hold this filter: they imply bucket size 2 and numBuckets
    buckets in every sub-filter (§4.5); otherwise the slots' length contradicts them."""
    return f["bucketSize"] == 2 and all(b == f["numBuckets"] for b, _ in f["filters"])


def old_encoding_fields(type_name, fields, encver):
    """A version-4 value's fields as encoding `encver` (0-3) would have stored them: BF without
    growth (v < 4), options (v < 2), bits and n2 (v 0); CF without numDeletes, bucketSize,
    maxIterations, expansion and the per-sub-filter bucket counts (v < 4)."""
    if type_name == BF_TYPE:
        return bf_fields(bf_chain(fields), encver)
    return cf_fields(cf_filter(fields), encver)


def old_encoding_payload(type_name, fields, encver):
    return build_dump(type_name, encver, old_encoding_fields(type_name, fields, encver))


# --- SCANDUMP headers (§3.6, §4.6) --------------------------------------------------------------

_BF_HEAD = struct.Struct("<QIII")
_BF_LINK = struct.Struct("<QQQddIQB")
_CF_HEAD = struct.Struct("<QQQQHHH")
BF_LINK_FIELDS = ["bytes", "bits", "size", "error", "bpe", "hashes", "entries", "n2"]


def bf_header(data):
    size, nfilters, options, growth = _BF_HEAD.unpack_from(data)
    assert len(data) == _BF_HEAD.size + _BF_LINK.size * nfilters
    links = [dict(zip(BF_LINK_FIELDS,
                      _BF_LINK.unpack_from(data, _BF_HEAD.size + i * _BF_LINK.size)))
             for i in range(nfilters)]
    return {"size": size, "nfilters": nfilters, "options": options, "growth": growth,
            "links": links}


def bf_header_bytes(h):
    out = _BF_HEAD.pack(h["size"], h["nfilters"], h["options"], h["growth"])
    for link in h["links"]:
        out += _BF_LINK.pack(*(link[n] for n in BF_LINK_FIELDS))
    return out


def cf_header(data):
    return dict(zip(["numItems", "numBuckets", "numDeletes", "numFilters", "bucketSize",
                     "maxIterations", "expansion"], _CF_HEAD.unpack(data)))


def cf_header_bytes(h):
    return _CF_HEAD.pack(h["numItems"], h["numBuckets"], h["numDeletes"], h["numFilters"],
                         h["bucketSize"], h["maxIterations"], h["expansion"])


# --- a model of RedisBloom's Bloom lookups (§3.4) -----------------------------------------------

def murmur64a(data, seed):
    """MurmurHash64A (Austin Appleby's 64-bit MurmurHash2)."""
    m, r = 0xC6A4A7935BD1E995, 47
    h = (seed ^ (len(data) * m)) & MASK64
    n = len(data) // 8 * 8
    for i in range(0, n, 8):
        k = int.from_bytes(data[i:i + 8], "little")
        k = k * m & MASK64
        k ^= k >> r
        k = k * m & MASK64
        h ^= k
        h = h * m & MASK64
    tail = data[n:]
    if tail:
        h ^= int.from_bytes(tail, "little")
        h = h * m & MASK64
    h ^= h >> r
    h = h * m & MASK64
    h ^= h >> r
    return h


def murmur2(data, seed):
    """MurmurHash2, 32-bit (Austin Appleby)."""
    m, mask = 0x5BD1E995, 0xFFFFFFFF
    h = (seed ^ len(data)) & mask
    n = len(data) // 4 * 4
    for i in range(0, n, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = k * m & mask
        k ^= k >> 24
        k = k * m & mask
        h = h * m & mask
        h ^= k
    tail = data[n:]
    if tail:
        h ^= int.from_bytes(tail, "little")
        h = h * m & mask
    h ^= h >> 13
    h = h * m & mask
    h ^= h >> 15
    return h


def bf_hash_pair(item, options):
    """(a, b) of `item` for a chain with `options`: 64-bit hashing with FORCE64, else 32-bit."""
    if options & FORCE64:
        a = murmur64a(item, 0xC6A4A7935BD1E995)
        return a, murmur64a(item, a)
    a = murmur2(item, 0x9747B28C)
    return a, murmur2(item, a)


def bf_link_has(link, a, b):
    modulus = 1 << link["n2"] if link["n2"] else link["bits"]
    array = link["array"]
    for j in range(link["hashes"]):
        x = (a + j * b) % (1 << 64) % modulus
        if not array[x >> 3] >> (x & 7) & 1:
            return False
    return True


def bf_exists(chain, item):
    """What RedisBloom's BF.EXISTS answers for `item` (bytes) on `chain` (bf_chain's dict)."""
    a, b = bf_hash_pair(item, chain["options"])
    return int(any(bf_link_has(link, a, b) for link in chain["links"]))


def bf_hashes_for(bpe):
    """k for bpe as RedisBloom computes and checks it (§3.2, §3.5); None when it is no k."""
    if not math.isfinite(bpe):
        return None
    return math.ceil(LN2 * bpe)


# --- replies ------------------------------------------------------------------------------------

# Items per MEXISTS when a test asks about thousands.
MEXISTS_BATCH = 500


def plain(reply):
    """A redis-py reply as answers.json and the model write replies: text for strings,
    {"error": text} for an error (also inside an array)."""
    if isinstance(reply, redis.ResponseError):
        return {"error": str(reply)}
    if isinstance(reply, bytes):
        return reply.decode("utf-8", "surrogateescape")
    if isinstance(reply, list):
        return [plain(x) for x in reply]
    return reply


def probe_replies(c, key, kind, items, counts=False, each=True):
    """What server `c` answers for `items` of `key`, plain: EXISTS of each item (each=True, else
    None), MEXISTS of all in batches of MEXISTS_BATCH as one list (a batch that fails gives its
    error for each of its items), CF.COUNT of each item (counts=True, else None)."""
    p = c.pipeline(transaction=False)
    if each:
        for item in items:
            p.execute_command(kind + ".EXISTS", key, item)
    starts = range(0, len(items), MEXISTS_BATCH)
    for at in starts:
        p.execute_command(kind + ".MEXISTS", key, *items[at:at + MEXISTS_BATCH])
    if counts:
        for item in items:
            p.execute_command("CF.COUNT", key, item)
    replies = [plain(x) for x in p.execute(raise_on_error=False)]
    n = len(items) if each else 0
    mexists = []
    for at, reply in zip(starts, replies[n:n + len(starts)]):
        size = len(items[at:at + MEXISTS_BATCH])
        mexists += reply if isinstance(reply, list) and len(reply) == size else [reply] * size
    return (replies[:n] if each else None, mexists,
            replies[n + len(starts):] if counts else None)
