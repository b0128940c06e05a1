"""The memory phase of a run, for the summarizers: the `memory_latency/BYTES` benchmarks time a
chain of dependent loads over random 64-byte lines (bench_report.hpp). On a VM whose memory latency
swings, ratios between latency-bound and throughput-bound lookups swing with it, so every summary
says what the latency was."""

SIZES = [12_000_000, 120_000_000]


def latency_ns(rows, size=12_000_000):
    """ns per dependent load at `size` bytes, or None when the run did not measure it."""
    row = rows.get(f"memory_latency/{size}")
    return row["per_key"] * 1e9 if row and "per_key" in row else None


def latency_note(rows):
    """'Memory latency during the run: ...' or '' when no latency was measured."""
    parts = [f"{latency_ns(rows, s):.0f} ns over {s // 1_000_000} MB" for s in SIZES
             if latency_ns(rows, s) is not None]
    if not parts:
        return ""
    return ("Memory latency during the run (`memory_latency`: dependent loads of random 64-byte "
            "lines): " + ", ".join(parts) + ".")
