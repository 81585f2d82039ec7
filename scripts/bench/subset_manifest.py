#!/usr/bin/env python3
"""One part of the cards-train2 split as a labelled set the bench can score.

usage: subset_manifest.py SPLIT PART MANIFEST OUT
  SPLIT     Models/data/cards-train2-split.json (scripts/data/split_train2.py)
  PART      heldout | train
  MANIFEST  ../shared/cards-train2/whole/manifest.json
  OUT       where the filtered manifest goes: under the checkout's git-ignored .devsets/ (it holds the labels,
            numbers included, so it must never land in a tracked folder), or outside the checkout

Writes the manifest entries of PART's whole/ pictures, unchanged and in the split's order, to OUT, and prints
the absolute path of each of those pictures (beside MANIFEST), one a line, for `capture-cli scan`. The scored
files are matched by base name (score.py and score_dev.py key the scan lines by the last path component of
"file"), so the pictures are scanned in place. Prints no number.
"""
import json
import os
import sys

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def main():
    if len(sys.argv) != 5 or sys.argv[2] not in ("heldout", "train"):
        sys.exit(__doc__)
    split_path, part, manifest_path, out = sys.argv[1:]
    split = json.load(open(split_path))
    if split.get("version") != 1:
        sys.exit(f"{split_path}: unknown split version {split.get('version')!r}")
    wanted = split[part]["whole"]
    manifest = {m["file"]: m for m in json.load(open(manifest_path))}
    missing = [f for f in wanted if f not in manifest]
    if missing:
        sys.exit(f"{manifest_path} lacks {len(missing)} of the split's {part} pictures, e.g. {missing[0]}")
    folder = os.path.dirname(os.path.realpath(manifest_path))
    absent = [f for f in wanted if not os.path.isfile(os.path.join(folder, f))]
    if absent:
        sys.exit(f"{folder} lacks {len(absent)} of the split's {part} pictures, e.g. {absent[0]}")

    target = os.path.realpath(out)
    inside = os.path.commonpath([target, REPO]) == REPO
    if inside and os.path.commonpath([target, os.path.join(REPO, ".devsets")]) != os.path.join(REPO, ".devsets"):
        sys.exit(f"{out}: the filtered manifest holds card numbers; write it under .devsets/ (git-ignored)")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w") as fh:
        json.dump([manifest[f] for f in wanted], fh, indent=1, ensure_ascii=False)
        fh.write("\n")
    for f in wanted:
        print(os.path.join(folder, f))


if __name__ == "__main__":
    main()
