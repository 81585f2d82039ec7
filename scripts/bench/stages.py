#!/usr/bin/env python3
"""Where the scans' time went: per stage, the median and 90th percentile of each picture's
milliseconds and calls, and the pictures' totals, from `capture-cli scan --json --timings` lines.

    python3 scripts/bench/stages.py .devsets/cards-dev-both.jsonl
"""
import json
import sys

STAGES = ["decode", "locate", "find_rows", "detect", "read_digits", "read_text", "tesseract"]


def percentile(values, share):
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def median(values):
    ordered = sorted(values)
    if not ordered:
        return 0.0
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def main(path):
    scans = [json.loads(line) for line in open(path) if line.strip()]
    scans = [scan for scan in scans if "timings" in scan]
    if not scans:
        print(f"{path}: no lines with timings (scan --json --timings)")
        return
    total = sum(scan["ms"] for scan in scans)
    print(f"{'stage':12} {'median ms':>10} {'p90 ms':>8} {'median calls':>13} {'share':>6}")
    rows = [(stage, [scan["timings"].get(stage, {}) for scan in scans]) for stage in STAGES]
    rows.append(("other", [{"ms": scan["otherMs"], "calls": 0} for scan in scans]))
    for stage, entries in rows:
        ms = [entry.get("ms", 0.0) for entry in entries]
        calls = [entry.get("calls", 0) for entry in entries]
        print(f"{stage:12} {median(ms):10.1f} {percentile(ms, 0.9):8.1f} {median(calls):13g} {sum(ms) / total:6.0%}")
    ms = [scan["ms"] for scan in scans]
    print(f"{'scan':12} {median(ms):10.1f} {percentile(ms, 0.9):8.1f} {'':13} {len(scans):>5} pictures")


if __name__ == "__main__":
    for argument in sys.argv[1:]:
        main(argument)
