#!/usr/bin/env python3
"""The scanner's two paths on one set, from `capture-cli scan --json` lines of the same pictures:
the first pass alone (`--first-pass`) and the whole scan (first pass, then the fallback where it
decided nothing). Prints, for each, the pictures answered with a number and the median and 90th
percentile milliseconds; for the fallback, the pictures the first pass left to it, how many of
them it read, and its time on them. Numbers are never printed, only counts. A picture whose
number differs between the paths (the first pass must report only what the whole scan reports)
is named and makes the exit status 1.

    python3 scripts/bench/paths.py .devsets/cards-dev-first-pass.jsonl .devsets/cards-dev-both.jsonl
"""
import json
import sys

from stages import median, percentile


def load(path):
    scans = {}
    for line in open(path):
        if line.startswith("{"):
            scan = json.loads(line)
            if "ms" in scan:
                scans[scan["file"]] = scan
    return scans


def row(name, scans):
    times = [scan["ms"] for scan in scans]
    read = sum(1 for scan in scans if scan.get("pan"))
    print(f"{name:<34} {len(scans):>8} {read:>9} {median(times):>9.1f} {percentile(times, 0.9):>9.1f}")


def main(first_path, whole_path):
    first, whole = load(first_path), load(whole_path)
    files = sorted(set(first) & set(whole))
    print(f"{'path':<34} {'pictures':>8} {'numbers':>9} {'median ms':>9} {'p90 ms':>9}")
    row("first pass alone", [first[f] for f in files])
    row("whole scan (first pass, fallback)", [whole[f] for f in files])
    left = [f for f in files if not first[f].get("pan")]
    row("fallback: pictures left to it", [whole[f] for f in left])
    differ = [f for f in files if first[f].get("pan") and first[f].get("pan") != whole[f].get("pan")]
    for f in differ:
        print(f"DIFFERENT NUMBER: {f.split('/')[-1]}: the first pass reported one the whole scan does not")
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
