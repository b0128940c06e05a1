#!/usr/bin/env python3
"""Turns bloomery-bench JSON output into the markdown tables of BENCHMARKS.md.

usage: summarize.py RESULT.json [MORE.json ...]

Uses the median aggregate of each benchmark when repetitions were run, else its single run.
Times are CPU ns per key (the `per_key` counter).
"""
import json
import sys

from paired import load_rounds, paired
from phase import latency_note, latency_ns

OPS = ["insert", "build", "present", "absent", "present_many", "absent_many"]
IMPLS = ["bloomery", "libbloom", "leveldb"]
SIZES = [10_000, 1_000_000, 10_000_000, 100_000_000]


def load(paths):
    rows, context = {}, {}
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        context.update(doc.get("context", {}))
        singles, medians, spread = {}, {}, {}
        for b in doc["benchmarks"]:
            name = b.get("run_name", b["name"])
            if b.get("error_occurred"):
                print(f"warning: {name}: {b.get('error_message')}", file=sys.stderr)
                continue
            if b.get("run_type") == "aggregate":
                if b.get("aggregate_name") == "median":
                    medians[name] = b
                elif b.get("aggregate_name") == "cv":
                    spread[name] = b
            else:
                singles.setdefault(name, b)
        for name, b in singles.items():
            rows[name] = dict(medians.get(name, b))
            if name in spread:
                rows[name]["cv"] = spread[name].get("per_key")
    return rows, context


def key(op, impl, keys, n):
    return f"{op}/{impl}/{keys}/{n}"


def ns(row):
    return row["per_key"] * 1e9 if row and "per_key" in row else None


def fmt(x, spec=".1f"):
    return "—" if x is None else format(x, spec)


def size_name(n):
    return {10_000: "10^4", 1_000_000: "10^6", 10_000_000: "10^7", 100_000_000: "10^8"}[n]


def main(paths):
    rows, ctx = load(paths)
    rounds = load_rounds(paths)
    out = []
    out.append(f"Host: {ctx.get('host_name', '?')}, {ctx.get('num_cpus', '?')} CPUs at "
               f"{ctx.get('mhz_per_cpu', '?')} MHz, load average at start "
               f"{ctx.get('load_avg', '?')}; library build type: {ctx.get('library_build_type', '?')}")
    if latency_note(rows):
        out.append(latency_note(rows))
    out.append("")

    # Target (a): absent-key lookups at 10^7 uint64 keys.
    n = 10_000_000
    b = rows.get(key("absent", "bloomery", "u64", n))
    if b:
        out.append("### Absent-key `may_contain`, 10^7 uint64 keys, 1% target")
        out.append("")
        out.append("| implementation | bits/key | k | ns/key (median) | CV of reps | time vs bloomery | measured FPR | theory FPR | measured / theory |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for impl in IMPLS:
            r = rows.get(key("absent", impl, "u64", n))
            if not r:
                continue
            cv = fmt(r["cv"] * 100, ".0f") + "%" if r.get("cv") is not None else "—"
            out.append(f"| {impl} | {r['bits_per_key']:.3f} | {r['k']:.0f} | {ns(r):.1f} | {cv} | "
                       f"{ns(r) / ns(b):.2f}x | {r['fpr'] * 100:.3f}% | {r['fpr_theory'] * 100:.3f}% | "
                       f"{r['fpr'] / r['fpr_theory']:.3f} |")
        out.append("")

    for keys in ["u64", "str16"]:
        sizes = [s for s in SIZES if any(key(op, "bloomery", keys, s) in rows for op in OPS)]
        if not sizes:
            continue
        out.append(f"### ns per key, {keys} keys (CPU time, median of repetitions)")
        out.append("")
        out.append("| operation | implementation | " + " | ".join(size_name(s) for s in sizes) + " |")
        out.append("|---|---|" + "---|" * len(sizes))
        for op in OPS:
            for impl in IMPLS:
                cells = [rows.get(key(op, impl, keys, s)) for s in sizes]
                if not any(cells):
                    continue
                out.append(f"| {op} | {impl} | " + " | ".join(fmt(ns(c)) for c in cells) + " |")
        out.append("")
        out.append(f"Batched vs one-at-a-time (bloomery, {keys}): one-at-a-time ns / batched ns")
        out.append("")
        out.append("| keys | " + " | ".join(size_name(s) for s in sizes) + " |")
        out.append("|---|" + "---|" * len(sizes))
        for kind in ["present", "absent"]:
            cells = []
            for s in sizes:
                one, many = rows.get(key(kind, "bloomery", keys, s)), rows.get(
                    key(kind + "_many", "bloomery", keys, s))
                cells.append(fmt(ns(one) / ns(many), ".2f") + "x" if one and many else "—")
            out.append(f"| {kind} | " + " | ".join(cells) + " |")
        out.append("")

    # Measured false-positive rates (one value per filter; taken from its absent-key benchmark).
    out.append("### Measured FPR (theory in parentheses), over 4,194,304 absent keys per filter")
    out.append("")
    sizes = [s for s in SIZES if any(key("absent", i, k, s) in rows for i in IMPLS for k in ["u64", "str16"])]
    out.append("| keys | implementation | " + " | ".join(size_name(s) for s in sizes) + " |")
    out.append("|---|---|" + "---|" * len(sizes))
    for keys in ["u64", "str16"]:
        for impl in IMPLS:
            cells = [rows.get(key("absent", impl, keys, s)) for s in sizes]
            if not any(cells):
                continue
            out.append(f"| {keys} | {impl} | " + " | ".join(
                f"{c['fpr'] * 100:.3f}% ({c['fpr_theory'] * 100:.3f}%)" if c else "—" for c in cells) + " |")
    out.append("")

    # The ratios the summary is read for.
    out.append("### Ratios")
    out.append("")
    ours = key("absent", "bloomery", "u64", 10_000_000)
    b = rows.get(ours)
    for impl, label in [("libbloom", "libbloom"), ("leveldb", "LevelDB")]:
        peer = key("absent", impl, "u64", 10_000_000)
        if b and rows.get(peer):
            r = ns(rows[peer]) / ns(b)
            out.append(f"- absent may_contain, 10^7 u64: {label} / bloomery = {r:.2f}x"
                       + paired(rounds, peer, ours))
    if b:
        dev = b["fpr"] / b["fpr_theory"] - 1
        out.append(f"- bloomery FPR {b['fpr'] * 100:.4f}% vs theory {b['fpr_theory'] * 100:.4f}%: "
                   f"{dev * 100:+.2f}%")
    for kind in ["absent", "present"]:
        one = rows.get(key(kind, "bloomery", "u64", 100_000_000))
        many = rows.get(key(kind + "_many", "bloomery", "u64", 100_000_000))
        if one and many:
            r = ns(one) / ns(many)
            out.append(f"- {kind} keys, 10^8 u64: one-at-a-time / may_contain_many = {r:.2f}x"
                       + paired(rounds, key(kind, "bloomery", "u64", 100_000_000),
                                key(kind + "_many", "bloomery", "u64", 100_000_000)))
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
