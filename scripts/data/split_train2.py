#!/usr/bin/env python3
"""Splits ../shared/cards-train2 by card into a held-out part (never trained or tuned on) and a training part.

usage: split_train2.py [--root DIR] [--out FILE] [--seed N] [--check]
  --root   the cards-train2 folder (default: ../shared/cards-train2 beside the checkout, or $CARDS_TRAIN2)
  --out    where the split goes (default: Models/data/cards-train2-split.json)
  --seed   the fixed seed of the held-out choice (default 2602)
  --check  write nothing: say whether --out holds what this run computes (exit 1 if not)

Needs Pillow and numpy (python3 -m venv .venv-data && .venv-data/bin/pip install pillow numpy).
Prints only counts and file names, never a card number.

How pictures are grouped (union-find over 1,183 pictures, whole/ and detect/ together):
  1. whole/ pictures with the same labelled number are one card.
  2. Whole-picture pHash: 64 bits (8x8 low DCT coefficients of a 32x32 grey image against their median), the
     distance between two pictures is the least Hamming distance over the eight quarter turns and flips of one.
     Distance <= 8 links. Because the set is full of photo series (many cards of one design photographed on the
     same table), a distance of 2 to 8 already joins *different* cards of one design as well as copies; that is
     kept on purpose (a held-out card should not share its design and session with training pictures), and it
     is the largest threshold before whole groups chain into one another (at 10 two groups of ~100 form, at 12
     one of ~500).
  3. Number-row profile: the row box (detect/boxes.json; for whole/ pictures, the box of their detect/ copy,
     scaled) cut out, turned level, its mean horizontal gradient per column as a 200-point profile; two rows are
     compared by the best normalised correlation over shifts of +-12% and scales 0.88..1.12, either way round.
     This finds the same card re-photographed, cropped, turned or recoloured, where the whole-picture hash
     differs. Links: profile >= 0.85 at any pHash distance, or >= 0.65 when the pHash distance is <= 12.
  A hash of the picture's central 40% was measured too and left out: every pair it puts under 4 is already
  linked, and the pairs it finds at 4 to 8 were different cards of one design.

Held-out choice: groups that hold whole/ pictures are put in strata by their rarest member (a genuine card whose
number fails the check digit > sample card > embossed genuine > flat genuine); the failing card is always held
out, about half of each other stratum (by whole/ pictures) is drawn with the seed. Every detect/ picture in a
held-out group is held out too; detect/ pictures in no whole/ group are training pictures.
"""
import argparse
import json
import os
import random
import sys
from collections import Counter, defaultdict

import numpy as np
from PIL import Image

PHASH_LINK = 8          # whole-picture pHash distance that links on its own
PHASH_WITH_ROW = 12     # pHash distance that links when the number rows also agree a little
ROW_WITH_PHASH = 0.65
ROW_ALONE = 0.85        # number-row profile correlation that links on its own
PROFILE_W = 200
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))

_N = 32
_i = np.arange(_N)
_DCT = np.cos(np.pi * (2 * _i[None, :] + 1) * _i[:, None] / (2 * _N)) * np.sqrt(2 / _N)
_DCT[0] /= np.sqrt(2)


def phash_views(grey):
    """The 64-bit pHash of each of the eight quarter turns and flips of a grey picture."""
    a = np.asarray(grey.resize((_N, _N), Image.BOX), dtype=np.float64)
    out = []
    for base in (a, a[:, ::-1]):
        for k in range(4):
            c = (_DCT @ np.rot90(base, k) @ _DCT.T)[:8, :8].ravel()
            out.append(c > np.median(c[1:]))
    return np.array(out)


def hamming_min(views):
    """n x n: least Hamming distance between any view of one picture and the upright view of the other."""
    upright = views[:, 0, :].astype(np.int16)
    best = np.full((len(views),) * 2, 64, np.int16)
    for t in range(views.shape[1]):
        vt = views[:, t, :].astype(np.int16)
        # Hamming distance of 0/1 vectors: |a| + |b| - 2 a.b
        d = vt.sum(1)[:, None] + upright.sum(1)[None, :] - 2 * (vt @ upright.T)
        best = np.minimum(best, d)
    best = np.minimum(best, best.T)
    np.fill_diagonal(best, 64)
    return best


def row_profile(grey, box):
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    crop = grey.crop((x0 - 0.05 * w, y0, x1 + 0.05 * w, y1))
    if h > w:
        crop = crop.rotate(90, expand=True)
    a = np.asarray(crop.resize((2 * PROFILE_W, 24), Image.BILINEAR), dtype=np.float64)
    g = np.convolve(np.abs(np.diff(a, axis=1)).mean(0), np.ones(3) / 3, "same")
    return np.interp(np.linspace(0, len(g) - 1, PROFILE_W), np.arange(len(g)), g)


def row_similarity(profiles):
    """n x n: best normalised correlation of two row profiles over shifts, scales and reversal."""
    n, w = profiles.shape
    m = int(w * 0.12)

    def norm(x):
        x = x - x.mean(1, keepdims=True)
        return x / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-9)

    fixed = norm(profiles[:, m:w - m])
    best = np.full((n, n), -1.0)
    x = np.arange(w)
    for prof in (profiles, profiles[:, ::-1]):
        for s in np.arange(0.88, 1.121, 0.03):
            scaled = np.stack([np.interp((x - w / 2) / s + w / 2, x, r) for r in prof])
            for shift in range(-m, m + 1, 2):
                best = np.maximum(best, norm(scaled[:, m + shift:w - m + shift]) @ fixed.T)
    best = np.maximum(best, best.T)
    np.fill_diagonal(best, -1)
    return best


class UnionFind:
    def __init__(self, n):
        self.parent = list(range(n))

    def find(self, x):
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def stratum(entry):
    if not entry.get("specimen") and not entry.get("luhn_ok"):
        return 0, "failing check digit"
    if entry.get("specimen"):
        return 1, "sample"
    return (2, "embossed genuine") if entry.get("embossed") else (3, "flat genuine")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.environ.get("CARDS_TRAIN2", os.path.join(REPO, "..", "shared", "cards-train2")))
    ap.add_argument("--out", default=os.path.join(REPO, "Models", "data", "cards-train2-split.json"))
    ap.add_argument("--seed", type=int, default=2602)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    root = os.path.realpath(args.root)

    manifest = json.load(open(os.path.join(root, "whole", "manifest.json")))
    boxes = json.load(open(os.path.join(root, "detect", "boxes.json")))
    whole = sorted(m["file"] for m in manifest)
    by_file = {m["file"]: m for m in manifest}
    detect = sorted(boxes)
    names = [("whole", f) for f in whole] + [("detect", f) for f in detect]
    nw, n = len(whole), len(names)

    greys, views, sizes = [], [], []
    for part, f in names:
        with Image.open(os.path.join(root, part, f)) as im:
            g = im.convert("L")
        greys.append(g)
        sizes.append(g.size)
        views.append(phash_views(g))
    dist = hamming_min(np.array(views))

    # whole/ pictures have no boxes: each is also in detect/ (resized); take its closest detect/ picture's box
    twin_of = {}
    for i in range(nw):
        j = nw + int(np.argmin(dist[i, nw:]))
        aspect_gap = abs(sizes[i][0] / sizes[i][1] - sizes[j][0] / sizes[j][1])
        twin_of[i] = j if dist[i, j] <= 4 and aspect_gap < 0.02 else None
    profiles = np.zeros((n, PROFILE_W))
    has_row = np.zeros(n, bool)
    for i, (part, f) in enumerate(names):
        if part == "detect":
            bs, scale = boxes[f], 1.0
        elif twin_of[i] is not None:
            j = twin_of[i]
            bs, scale = boxes[names[j][1]], sizes[i][0] / sizes[j][0]
        else:
            continue
        box = max(bs, key=lambda b: (b[2] - b[0]) * (b[3] - b[1]))
        profiles[i] = row_profile(greys[i], [v * scale for v in box])
        has_row[i] = True
    rows = row_similarity(profiles)
    rows[~has_row, :] = -1
    rows[:, ~has_row] = -1

    links = {"same number": [], "pHash": [], "pHash+row": [], "row alone": []}
    numbers = defaultdict(list)
    for i in range(nw):
        if by_file[whole[i]].get("number"):
            numbers[by_file[whole[i]]["number"]].append(i)
    for members in numbers.values():
        links["same number"] += [(members[0], k) for k in members[1:]]
    a, b = np.nonzero(np.triu(np.ones((n, n), bool), 1) & ((dist <= PHASH_LINK) | (rows >= ROW_ALONE)
                                                           | ((dist <= PHASH_WITH_ROW) & (rows >= ROW_WITH_PHASH))))
    for i, j in zip(a.tolist(), b.tolist()):
        kind = "pHash" if dist[i, j] <= PHASH_LINK else "pHash+row" if dist[i, j] <= PHASH_WITH_ROW \
            and rows[i, j] >= ROW_WITH_PHASH else "row alone"
        links[kind].append((i, j))
    uf = UnionFind(n)
    for pairs in links.values():
        for i, j in pairs:
            uf.union(i, j)
    group = [uf.find(i) for i in range(n)]
    members = defaultdict(list)
    for i in range(n):
        members[group[i]].append(i)

    # held-out choice, by group, stratified
    whole_groups = sorted({group[i] for i in range(nw)})
    strata = defaultdict(list)
    for g in whole_groups:
        rank, name = min(stratum(by_file[names[i][1]]) for i in members[g] if i < nw)
        strata[(rank, name)].append(g)
    rng = random.Random(args.seed)
    held = set()
    for (rank, name), groups in sorted(strata.items()):
        groups = sorted(groups, key=lambda g: names[g][1])
        size = {g: sum(1 for i in members[g] if i < nw) for g in groups}
        total = sum(size.values())
        target = total if rank == 0 else (total + 1) // 2
        rng.shuffle(groups)
        taken = 0
        for g in groups:
            if taken + size[g] <= target:
                held.add(g)
                taken += size[g]
    out = {"version": 1,
           "method": (f"by card: union-find over whole/ and detect/ of (same labelled number) or (64-bit pHash of the "
                      f"grey picture, least Hamming distance over 4 quarter turns x horizontal flip, <= {PHASH_LINK}) or "
                      f"(number-row gradient profile correlation >= {ROW_ALONE}, or >= {ROW_WITH_PHASH} with pHash <= "
                      f"{PHASH_WITH_ROW}); held out about half of the whole/ groups, stratified (failing check digit "
                      f"always, samples, embossed, flat), seed {args.seed}; scripts/data/split_train2.py"),
           "threshold": PHASH_LINK,
           "heldout": {"whole": [], "detect": []},
           "train": {"whole": [], "detect": []}}
    for i, (part, f) in enumerate(names):
        out["heldout" if group[i] in held else "train"][part].append(f)
    for side in ("heldout", "train"):
        for part in ("whole", "detect"):
            out[side][part].sort()

    # summary: counts only
    whole_detect_links = {k: sum(1 for i, j in v if (i < nw) != (j < nw)) for k, v in links.items()}
    sizes_sorted = sorted((len(v) for v in members.values()), reverse=True)
    print(f"pictures: whole {nw}, detect {len(detect)}; whole/ pictures with a detect/ copy (pHash <= 4): "
          f"{sum(1 for v in twin_of.values() if v is not None)}")
    print("links: " + ", ".join(f"{k} {len(v)} ({whole_detect_links[k]} whole-detect)" for k, v in links.items()))
    print(f"groups: {len(members)} (largest {sizes_sorted[:5]}); groups holding whole/ pictures: {len(whole_groups)} "
          f"(with 2 or more: {sum(1 for g in whole_groups if sum(1 for i in members[g] if i < nw) > 1)}); "
          f"detect/ pictures in a whole/ group: {sum(1 for g in whole_groups for i in members[g] if i >= nw)}")
    for side in ("heldout", "train"):
        ents = [by_file[f] for f in out[side]["whole"]]
        c = Counter(stratum(e)[1] for e in ents)
        gs = {group[names.index(("whole", f))] for f in out[side]["whole"]}
        print(f"{side}: whole {len(ents)} pictures in {len(gs)} groups ({', '.join(f'{k} {v}' for k, v in sorted(c.items()))}; "
              f"embossed {sum(1 for e in ents if e.get('embossed'))}, flat {sum(1 for e in ents if not e.get('embossed'))}; "
              f"kinds {dict(Counter(e.get('kind') for e in ents))}; "
              f"lengths {dict(sorted(Counter(len(e.get('number') or '') for e in ents).items()))}); "
              f"detect {len(out[side]['detect'])}")
    print(f"detect/ pictures excluded from training (in held-out groups): {len(out['heldout']['detect'])}")

    text = json.dumps(out, indent=1) + "\n"
    if args.check:
        same = os.path.exists(args.out) and open(args.out).read() == text
        print(f"{args.out}: {'up to date' if same else 'DIFFERS from this run'}")
        sys.exit(0 if same else 1)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as fh:
        fh.write(text)
    print(f"wrote {os.path.relpath(args.out, REPO)}")


if __name__ == "__main__":
    main()
