#!/usr/bin/env python3
"""Data step of the number-row detector: which detect/ photos of ../shared/cards-train2 are trained on,
validated on and held out, and a cache of the training and validation photos.

    data.py [--val-share 0.15] [--seed 7] [--long-side 400]

- held-out: the `heldout.detect` photos of Models/data/cards-train2-split.json (never trained or tuned on;
  only evaluate.py reads them, from ../shared).
- train / val: the `train.detect` photos. The split file gives no groups inside its training part, so they
  are grouped here the way scripts/data/split_train2.py groups the whole set (its functions, imported:
  64-bit pHash distance <= 8 over the eight turns and flips, or number-row gradient profiles correlating at
  >= 0.85, or >= 0.65 with pHash <= 12; union-find). Whole groups (seeded draw, groups of more than 60
  photos never drawn, so that one photo series does not make up the validation part) go to validation until
  about --val-share of the photos.
Writes .model-work/rows/split-rows.json (file names and group ids only) and .model-work/rows/cache-{train,val}.pkl
(grey uint8 photos scaled to --long-side, with their boxes scaled alike). Prints counts only.
"""
import argparse
import json
import pickle
import random
import sys
from collections import defaultdict

import numpy as np
from PIL import Image

import rows

sys.path.insert(0, str(rows.REPO / "scripts" / "data"))
import split_train2 as st  # noqa: E402


def groups_of(files, boxes):
    greys = [Image.open(rows.SHARED / "detect" / f).convert("L") for f in files]
    dist = st.hamming_min(np.array([st.phash_views(g) for g in greys]))
    prof = np.zeros((len(files), st.PROFILE_W))
    for i, f in enumerate(files):
        box = max(boxes[f], key=lambda b: (b[2] - b[0]) * (b[3] - b[1]))
        prof[i] = st.row_profile(greys[i], box)
    sim = st.row_similarity(prof)
    link = (dist <= st.PHASH_LINK) | (sim >= st.ROW_ALONE) | ((dist <= st.PHASH_WITH_ROW) & (sim >= st.ROW_WITH_PHASH))
    uf = st.UnionFind(len(files))
    for i, j in zip(*np.nonzero(np.triu(link, 1))):
        uf.union(int(i), int(j))
    return [uf.find(i) for i in range(len(files))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--val-share", type=float, default=0.15)
    ap.add_argument("--max-group", type=int, default=60)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--long-side", type=int, default=400)
    args = ap.parse_args()

    split = json.loads(rows.SPLIT.read_text())
    boxes = rows.load_boxes()
    train_all = sorted(split["train"]["detect"])
    heldout = sorted(split["heldout"]["detect"])
    assert not set(train_all) & set(heldout)
    group = groups_of(train_all, boxes)
    members = defaultdict(list)
    for f, g in zip(train_all, group):
        members[g].append(f)
    order = sorted(members, key=lambda g: members[g][0])
    random.Random(args.seed).shuffle(order)
    target = round(args.val_share * len(train_all))
    val_groups, n = set(), 0
    for g in order:
        if len(members[g]) > args.max_group or n + len(members[g]) > target * 1.05:
            continue
        val_groups.add(g)
        n += len(members[g])
        if n >= target:
            break
    val = sorted(f for f, g in zip(train_all, group) if g in val_groups)
    train = sorted(f for f, g in zip(train_all, group) if g not in val_groups)
    sizes = sorted((len(v) for v in members.values()), reverse=True)
    print(f"training part of the split: {len(train_all)} photos in {len(members)} groups (largest {sizes[:6]})")
    print(f"train {len(train)} photos ({len(members) - len(val_groups)} groups), val {len(val)} photos "
          f"({len(val_groups)} groups), held-out {len(heldout)} photos")
    rows.WORK.mkdir(parents=True, exist_ok=True)
    gid = {f: int(g) for f, g in zip(train_all, group)}
    (rows.WORK / "split-rows.json").write_text(json.dumps(
        {"train": train, "val": val, "heldout": heldout, "group": gid,
         "method": f"train.detect of {rows.SPLIT.name} grouped as split_train2.py groups; whole groups of at most "
                   f"{args.max_group} photos drawn with seed {args.seed} to about {args.val_share:.0%} for validation"},
        indent=1) + "\n")
    for part, files in (("train", train), ("val", val)):
        items = []
        for f in files:
            im = Image.open(rows.SHARED / "detect" / f).convert("L")
            s = min(1.0, args.long_side / max(im.size))
            if s < 1:
                im = im.resize((round(im.width * s), round(im.height * s)), Image.BILINEAR)
            items.append((f, np.asarray(im, np.uint8), [[v * s for v in b] for b in boxes[f]]))
        with open(rows.WORK / f"cache-{part}.pkl", "wb") as fh:
            pickle.dump(items, fh, protocol=4)
        print(f"cache-{part}.pkl: {len(items)} photos, {sum(len(i[2]) for i in items)} boxes")


if __name__ == "__main__":
    main()
