#!/usr/bin/env python3
"""Scores `capture-cli scan --json --reveal` output on a labelled set of real pictures (the manifest
format of ../shared/cards-dev) per category, beside the set's own score.py summary.

usage: score_dev.py MANIFEST SCAN.jsonl [--exclude-overlap]

Categories: embossed or flat print, photo or render, 16 or 19 digits, specimens. For each: genuine cards
read (the reported number equals the label), numbers reported wrongly (any number that is not the
card's, or any on a specimen), unverified offers whose digits are exactly the printed ones, expiry, and
median / p90 milliseconds. Numbers are never printed: only counts.
"""
import json
import statistics
import sys


def load(manifest_path, scan_path, exclude_overlap):
    manifest = [m for m in json.load(open(manifest_path)) if not (exclude_overlap and m.get("train_overlap"))]
    got = {}
    for line in open(scan_path):
        if line.startswith("{"):
            item = json.loads(line)
            got[item.get("file", "").split("/")[-1]] = item
    return manifest, got


def categories(entry):
    out = ["all", "embossed" if entry.get("embossed") else "flat print", entry.get("kind", "?")]
    number = entry.get("number") or ""
    if entry.get("specimen"):
        out.append("specimen")
    elif number:
        out.append(f"{len(number)} digits")
    return out


def percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, int(round(len(ordered) * fraction)) - 1)]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    manifest, got = load(args[0], args[1], "--exclude-overlap" in sys.argv)
    table = {}
    for entry in manifest:
        result = got.get(entry["file"], {})
        pan = result.get("pan")
        number = entry.get("number")
        genuine = entry.get("legible") and number and entry.get("luhn_ok") and not entry.get("specimen")
        unverified = (result.get("unverified") or {}).get("digits")
        for name in categories(entry):
            row = table.setdefault(name, {"images": 0, "cards": 0, "read": 0, "false": 0, "unverified_exact": 0,
                                          "legible": 0, "digits": 0, "expiry_n": 0, "expiry_ok": 0, "ms": []})
            row["images"] += 1
            if result.get("ms") is not None:
                row["ms"].append(result["ms"])
            if genuine:
                row["cards"] += 1
                row["read"] += pan == number
                if entry.get("month"):
                    row["expiry_n"] += 1
                    expiry = result.get("expiry") or {}
                    row["expiry_ok"] += (expiry.get("month"), expiry.get("year")) == (entry["month"], entry["year"])
            if pan and not (pan == number and entry.get("luhn_ok")):
                row["false"] += 1
            if entry.get("legible") and number:
                row["legible"] += 1
                row["digits"] += (pan or unverified) == number
                row["unverified_exact"] += unverified == number
    header = f"{'category':<14}{'images':>7}{'read':>10}{'false':>7}{'digits':>10}{'unverif.':>9}{'expiry':>9}{'median':>8}{'p90':>8}"
    print(header)
    for name, row in table.items():
        print(f"{name:<14}{row['images']:>7}{row['read']:>6}/{row['cards']:<3}{row['false']:>7}"
              f"{row['digits']:>6}/{row['legible']:<3}{row['unverified_exact']:>9}"
              f"{row['expiry_ok']:>5}/{row['expiry_n']:<3}"
              f"{statistics.median(row['ms']) if row['ms'] else 0:>8.0f}{percentile(row['ms'], 0.9) or 0:>8.0f}")


if __name__ == "__main__":
    main()
