#!/usr/bin/env python3
"""Scores `capture-cli scan --json --reveal` output (or the yardstick's, in the same form) on a generated
set with a fixture manifest (Fixtures/cards, .devsets/gen2): per kind and per condition.

usage: score_set.py MANIFEST SCAN.jsonl

For each category: cards with a number, numbers read (the reported number equals the label), recall,
numbers reported wrongly (not the card's, or on a card with none: a back), precision, expiry read right
of the cards that print one, and median / p90 milliseconds. Only counts are printed, never numbers.
"""
import json
import statistics
import sys


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[max(0, int(round(len(ordered) * fraction)) - 1)] if ordered else 0


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    manifest = json.load(open(sys.argv[1]))
    got = {}
    for line in open(sys.argv[2]):
        if line.startswith("{"):
            item = json.loads(line)
            got[item.get("file", "").split("/")[-1]] = item
    table = {}
    for entry in manifest:
        result = got.get(entry["file"], {})
        pan = result.get("pan")
        for name in ["all", entry.get("kind", "?")] + [f"condition:{c}" for c in entry.get("conditions", [])]:
            row = table.setdefault(name, {"cards": 0, "read": 0, "reported": 0, "false": 0, "dated": 0, "expiry": 0, "ms": []})
            if result.get("ms") is not None:
                row["ms"].append(result["ms"])
            if entry.get("pan"):
                row["cards"] += 1
                row["read"] += pan == entry["pan"]
            if pan:
                row["reported"] += 1
                row["false"] += pan != entry.get("pan")
            if entry.get("pan") and entry.get("month"):
                row["dated"] += 1
                expiry = result.get("expiry") or {}
                row["expiry"] += (expiry.get("month"), expiry.get("year")) == (entry["month"], entry["year"])
    print(f"{'category':<24}{'read':>10}{'recall':>8}{'false':>7}{'precision':>10}{'expiry':>10}{'median':>8}{'p90':>8}")
    for name, row in sorted(table.items(), key=lambda item: (item[0] != "all", item[0])):
        recall = row["read"] / row["cards"] if row["cards"] else 0
        precision = (row["reported"] - row["false"]) / row["reported"] if row["reported"] else 1
        print(f"{name:<24}{row['read']:>6}/{row['cards']:<3}{recall:>8.3f}{row['false']:>7}{precision:>10.3f}"
              f"{row['expiry']:>6}/{row['dated']:<3}{statistics.median(row['ms']) if row['ms'] else 0:>8.0f}"
              f"{percentile(row['ms'], 0.9):>8.0f}")


if __name__ == "__main__":
    main()
