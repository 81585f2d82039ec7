#!/usr/bin/env python3
"""Scores `capture-cli scan --json --reveal` output against Fixtures/cards/manifest.json.

    capture-cli scan --json --reveal Fixtures/cards/*.png | python3 scripts/score_scan.py

Prints recall (right number / cards with a number), precision (right number / numbers
reported), expiry accuracy and the misses, per kind and overall.
"""
import json
import os
import sys
from statistics import median

manifest_path = sys.argv[1] if len(sys.argv) > 1 else "Fixtures/cards/manifest.json"
manifest = {entry["file"]: entry for entry in json.load(open(manifest_path))}
rows = [json.loads(line) for line in sys.stdin if line.strip()]
kinds = {}
times = []
for row in rows:
    entry = manifest[os.path.basename(row["file"])]
    stats = kinds.setdefault(entry["kind"], {"cards": 0, "right": 0, "reported": 0, "expiry": 0, "images": 0})
    stats["images"] += 1
    times.append(row["ms"])
    if row.get("pan"):
        stats["reported"] += 1
    if entry["pan"]:
        stats["cards"] += 1
        if row.get("pan") == entry["pan"]:
            stats["right"] += 1
        expiry = row.get("expiry")
        if expiry and (expiry["month"], expiry["year"]) == (entry["month"], entry["year"]):
            stats["expiry"] += 1
    wrong = row.get("pan") and row.get("pan") != entry["pan"]
    missed = entry["pan"] and not row.get("pan")
    if wrong or missed:
        print(f"{'WRONG' if wrong else 'miss '} {entry['file']}: got {row.get('pan')} want {entry['pan']}")
total = {key: sum(stats[key] for stats in kinds.values()) for key in ["cards", "right", "reported", "expiry", "images"]}
for name, stats in sorted(kinds.items()) + [("overall", total)]:
    recall = stats["right"] / stats["cards"] if stats["cards"] else float("nan")
    precision = stats["right"] / stats["reported"] if stats["reported"] else float("nan")
    expiry = stats["expiry"] / stats["cards"] if stats["cards"] else float("nan")
    print(f"{name:9} images {stats['images']:3}  recall {stats['right']}/{stats['cards']} = {recall:.3f}  "
          f"precision {stats['right']}/{stats['reported']} = {precision:.3f}  expiry {expiry:.3f}")
print(f"median ms per image: {median(times):.1f}")
