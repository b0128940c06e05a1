"""Paired ratios for the summarizers: with interleaved repetitions (bench/run.sh's default) every
benchmark runs once per round, in random order, so two benchmarks' times from the same round were
measured seconds apart. The ratio of each round's pair cancels drift that is slower than a round,
which the ratio of two medians does not."""
import json
import statistics


def load_rounds(paths):
    """{benchmark name: {(file, repetition): CPU seconds per key}} over every repetition."""
    rounds = {}
    for i, path in enumerate(paths):
        with open(path) as f:
            doc = json.load(f)
        for b in doc["benchmarks"]:
            if b.get("run_type") != "iteration" or b.get("error_occurred") or "per_key" not in b:
                continue
            name = b.get("run_name", b["name"])
            rounds.setdefault(name, {})[(i, b.get("repetition_index", 0))] = b["per_key"]
    return rounds


def paired(rounds, num, den):
    """' (paired per round: median M, range A-B over N rounds)', or '' with fewer than 3 pairs."""
    a, b = rounds.get(num, {}), rounds.get(den, {})
    ratios = [a[r] / b[r] for r in a.keys() & b.keys() if b[r] > 0]
    if len(ratios) < 3:
        return ""
    return (f" (paired per round: median {statistics.median(ratios):.2f}x, range "
            f"{min(ratios):.2f}-{max(ratios):.2f}x over {len(ratios)} rounds)")
