#!/usr/bin/env python3
"""Turns bloomery-bench-family JSON output into the markdown tables of BENCHMARKS.md.

usage: summarize_family.py RESULT.json [MORE.json ...]
       summarize_family.py --per-run RESULT.json [MORE.json ...]

Times are CPU ns per key (the `per_key` counter): the median over a benchmark's repetitions, pooled
over every file given that holds it (give several runs to pool them). The blocked filter's ratios
against LevelDB and the classic filter are ratios of those medians. --per-run prints one line per
file instead: those ratios for that run alone, and their median over the runs.
"""
import json
import statistics
import sys

from paired import load_rounds, paired
from phase import latency_note, latency_ns

FILTERS = ["bloom", "blocked", "blocked-portable", "blocked-shared", "counting", "cuckoo", "scalable", "static", "static8",
           "static16", "leveldb", "bloom-10b", "blocked-10b"]
NOTES = {
    "bloom": "classic, target 1%",
    "blocked": "target 1%, AVX2 probes",
    "blocked-portable": "same filter, `force_portable_simd(true)`",
    "blocked-shared": "same filter, `share_for_concurrent_inserts()`",
    "counting": "4-bit counters, target 1%",
    "cuckoo": "target 1%",
    "scalable": "target 1%, one sub-filter at n",
    "static": "binary fuse from 1%: 7-bit, four slots: delivers 2^-7 = 0.78%",
    "static8": "binary fuse, 8-bit: delivers 2^-8 = 0.39%",
    "static16": "binary fuse, 16-bit: 2^-16",
    "leveldb": "`NewBloomFilterPolicy(10)`",
    "bloom-10b": "classic, m = 10n, k = 7",
    "blocked-10b": "m = floor(10n/512)·512, k = 6",
}
SIZES = [1_000_000, 10_000_000, 100_000_000]


def load(paths):
    """Rows by benchmark name. When several files hold the same benchmark (repeated runs), their
    repetitions are pooled: per_key is the median over all of them and cv their spread."""
    reps, singles, context = {}, {}, {}
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        context.setdefault("files", []).append(doc.get("context", {}))
        for k, v in doc.get("context", {}).items():
            context.setdefault(k, v)
        for b in doc["benchmarks"]:
            name = b.get("run_name", b["name"])
            if b.get("error_occurred"):
                print(f"warning: {name}: {b.get('error_message')}", file=sys.stderr)
                continue
            if b.get("run_type", "iteration") != "iteration":
                continue
            singles.setdefault(name, b)
            reps.setdefault(name, []).append(b["per_key"])
    rows = {}
    for name, b in singles.items():
        row = dict(b)
        values = reps[name]
        row["per_key"] = statistics.median(values)
        row["reps"] = len(values)
        if len(values) > 1:
            row["cv"] = statistics.stdev(values) / statistics.mean(values)
        rows[name] = row
    return rows, context


def ns(row):
    return row["per_key"] * 1e9 if row and "per_key" in row else None


def fmt(x, spec=".1f"):
    return "—" if x is None else format(x, spec)


def pct(x):
    if x is None:
        return "—"
    return f"{x * 100:.3f}%" if x >= 1e-4 else f"{x * 100:.5f}%"


def size_name(n):
    return {1_000_000: "10^6", 10_000_000: "10^7", 100_000_000: "10^8"}[n]


def main(paths):
    rows, ctx = load(paths)
    rounds = load_rounds(paths)
    get = lambda op, f, n: rows.get(f"{op}/{f}/{n}")
    out = []
    loads = ", ".join(f"{c['load_avg'][0]:.2f}" if c.get("load_avg") else "?"
                      for c in ctx.get("files", []))
    out.append(f"Host: {ctx.get('host_name', '?')}, {ctx.get('num_cpus', '?')} CPUs at "
               f"{ctx.get('mhz_per_cpu', '?')} MHz; {len(ctx.get('files', []))} run(s), 1-minute "
               f"load average at start: {loads}; AVX2 "
               f"{'yes' if ctx.get('bloomery.avx2') == '1' else 'no'}; filters built: "
               f"{ctx.get('bloomery.family', '?')}")
    if latency_note(rows):
        out.append(latency_note(rows))
    out.append("")

    for n in SIZES:
        present = [f for f in FILTERS if any(get(op, f, n) for op in ["absent", "insert", "build"])]
        if not present:
            continue
        out.append(f"### {size_name(n)} uint64 keys (CPU ns per key, median of repetitions)")
        out.append("")
        out.append("| filter | | bits/key | FPR measured | FPR estimated | insert (build) | present | "
                   "present batched | absent | absent batched |")
        out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for f in present:
            q = get("absent", f, n) or get("present", f, n)
            ins, build = get("insert", f, n), get("build", f, n)
            ins_cell = fmt(ns(ins)) if ins else (f"({fmt(ns(build))})" if build else "—")
            bits = q["bits_per_key"] if q else (ins or build or {}).get("bits_per_key")
            out.append(
                f"| {f} | {NOTES.get(f, '')} | {fmt(bits, '.2f')} | {pct(q.get('fpr') if q else None)} | "
                f"{pct(q.get('est_fpr') if q else None)} | {ins_cell} | "
                f"{fmt(ns(get('present', f, n)))} | {fmt(ns(get('present_many', f, n)))} | "
                f"{fmt(ns(get('absent', f, n)))} | {fmt(ns(get('absent_many', f, n)))} |")
        out.append("")

    # The blocked filter against LevelDB and the classic filter: ratios of medians, 10 bits/key.
    for n in SIZES:
        b1, bm = get("absent", "blocked-10b", n), get("absent_many", "blocked-10b", n)
        ld, cm = get("absent", "leveldb", n), get("absent_many", "bloom-10b", n)
        if not (b1 and bm):
            continue
        out.append(f"### Blocked filter against LevelDB and the classic filter, {size_name(n)} keys, "
                   "10 bits/key, absent keys")
        out.append("")
        if len(ctx.get("files", [])) > 1:
            out.append(f"(Medians pooled over {len(ctx['files'])} runs; ratios from one run at a "
                       "time: see `--per-run`.)")
            out.append("")
        out.append("| ratio | numerator (ns) | blocked-10b (ns) | ratio |")
        out.append("|---|---:|---:|---:|")

        def line(label, num, den, num_name, den_name):
            if not (num and den):
                return
            r = ns(num) / ns(den)
            cv = lambda row: f" ±{row['cv'] * 100:.0f}%" if row.get("cv") is not None else ""
            out.append(f"| {label} | {ns(num):.1f}{cv(num)} | {ns(den):.1f}{cv(den)} | "
                       f"{r:.2f}x{paired(rounds, num_name, den_name)} |")

        name = lambda op, f: f"{op}/{f}/{n}"
        line("one-at-a-time: LevelDB `KeyMayMatch` / blocked `may_contain`", ld, b1,
             name("absent", "leveldb"), name("absent", "blocked-10b"))
        line("batched: LevelDB `KeyMayMatch` / blocked `may_contain_many`", ld, bm,
             name("absent", "leveldb"), name("absent_many", "blocked-10b"))
        line("batched: classic `may_contain_many` / blocked `may_contain_many`", cm, bm,
             name("absent_many", "bloom-10b"), name("absent_many", "blocked-10b"))
        out.append("")
        if any(r and r.get("cv") is not None for r in (b1, bm, ld, cm)):
            out.append("(± is the coefficient of variation across repetitions.)")
            out.append("")
    print("\n".join(out))


def per_run(paths):
    n = 10_000_000
    out = ["| run | load at start | memory latency, 12 MB | LevelDB | classic batched | blocked single | blocked batched | "
           "LevelDB / blocked single | LevelDB / blocked batched | classic / blocked batched |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    ratios = [[], [], []]
    for path in paths:
        rows, ctx = load([path])
        get = lambda op, f: ns(rows.get(f"{op}/{f}/{n}"))
        ld, cm = get("absent", "leveldb"), get("absent_many", "bloom-10b")
        b1, bm = get("absent", "blocked-10b"), get("absent_many", "blocked-10b")
        if None in (ld, cm, b1, bm):
            continue
        rs = [ld / b1, ld / bm, cm / bm]
        for i, r in enumerate(rs):
            ratios[i].append(r)
        load_avg = ctx.get("load_avg") or ["?"]
        stamp = path.rsplit("/", 1)[-1].replace("-main.json", "").replace("family-", "")
        lat = latency_ns(rows)
        out.append(f"| {stamp} | {load_avg[0]:.2f} | {fmt(lat, '.0f')} | {ld:.1f} | {cm:.1f} | {b1:.1f} | {bm:.1f} | "
                   + " | ".join(f"{r:.2f}x" for r in rs) + " |")
    if ratios[0]:
        med = [statistics.median(r) for r in ratios]
        out.append(f"| **median of {len(ratios[0])} runs** | | | | | | | "
                   + " | ".join(f"**{m:.2f}x**" for m in med) + " |")
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--per-run":
        per_run(sys.argv[2:])
    else:
        main(sys.argv[1:])
