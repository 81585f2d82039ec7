"""Shared by data.py, train.py and evaluate.py (numpy + Pillow only, no torch): the number-row detector's
interface, its mask read-off and the scores.

Interface of number-rows.onnx:
  input `x`:  float32 [1, 1, H, W] (default H=192, W=320): the grey photo scaled to fit (aspect kept, never
              enlarged past the fit), centred, the rest padded with 0.0 (mid-grey); pixel / 127.5 - 1.
  output `prob`: float32 [1, 1, H/4, W/4]: the probability that a pixel of the map lies on a number row
              (sigmoid in the graph). The training target is the share of each 4 x 4 cell covered by the
              labelled row (a soft mask), so a row's edge sits where the map crosses 0.5.
Read-off (boxes_from_map): 8-connected regions of the map above 0.5; a region is a row candidate when its
peak is at least 0.7 and it covers at least 6 cells; its score is the sum of its probabilities. The best
candidate is the number row. Its upright box: left and right at the 0.5 crossings of the region's column
profile (the maximum over its rows; sub-cell, linear between cell centres), top and bottom from the
region's weighted second moments (centre +- half the height of the turned rectangle below; the 0.5
crossings of the row profile made boxes about 20 % too tall on the validation part). The
orientation-robust variant is that turned rectangle: angle from the second moments, thickness
sqrt(12 x variance across the axis), length the region's extent along it.
"""
import json
import math
import os
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SHARED = Path(os.environ.get("CARDS_TRAIN2", REPO.parent / "shared" / "cards-train2"))
SPLIT = REPO / "Models" / "data" / "cards-train2-split.json"
WORK = REPO / ".model-work" / "rows"
STRIDE = 4
THRESH = 0.5
PEAK = 0.7
MIN_CELLS = 6


# MARK: - Preprocessing


def letterbox(grey: Image.Image, w: int, h: int):
    """(x [1,1,h,w] float32, scale, ox, oy): photo pixel p -> input pixel p * scale + (ox, oy)."""
    s = min(w / grey.width, h / grey.height)
    nw, nh = max(1, round(grey.width * s)), max(1, round(grey.height * s))
    ox, oy = (w - nw) // 2, (h - nh) // 2
    small = np.asarray(grey.resize((nw, nh), Image.BILINEAR), dtype=np.float32)
    x = np.zeros((1, 1, h, w), np.float32)
    x[0, 0, oy:oy + nh, ox:ox + nw] = small / 127.5 - 1.0
    return x, nw / grey.width, ox, oy


def mask_target(polys, w: int, h: int) -> np.ndarray:
    """Soft target [h/4, w/4]: share of each cell covered by the polygons (input pixel coordinates)."""
    im = Image.new("L", (w, h), 0)
    d = ImageDraw.Draw(im)
    for p in polys:
        d.polygon([tuple(map(float, q)) for q in p], fill=255)
    return np.asarray(im.reduce(STRIDE), dtype=np.float32) / 255.0


def box_poly(b):
    x0, y0, x1, y1 = b
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float64)


# MARK: - Connected regions (runs of a row joined with overlapping runs of the row above; 8-connected)


def regions(on: np.ndarray) -> np.ndarray:
    """Label image (0 = background, 1..n regions) of a boolean map, 8-connected."""
    h, w = on.shape
    lab = np.zeros((h, w), np.int32)
    parent = [0]

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    prev = []  # runs of the row above: (start, end_exclusive, label)
    for y in range(h):
        row = on[y]
        if not row.any():
            prev = []
            continue
        d = np.diff(np.concatenate(([0], row.view(np.int8), [0])))
        starts, ends = np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]
        cur = []
        for s, e in zip(starts.tolist(), ends.tolist()):
            hit = [l for (ps, pe, l) in prev if ps <= e and pe >= s]  # touches incl. diagonal
            if hit:
                roots = {find(l) for l in hit}
                r = min(roots)
                for o in roots:
                    parent[o] = r
            else:
                r = len(parent)
                parent.append(r)
            lab[y, s:e] = r
            cur.append((s, e, r))
        prev = cur
    roots = np.array([find(i) for i in range(len(parent))], np.int32)
    uniq, dense = np.unique(roots, return_inverse=True)
    return dense.astype(np.int32)[lab] if len(parent) > 1 else lab


def _crossing(p: np.ndarray, first: bool) -> float:
    """Sub-cell 0.5 crossing of a profile (cell i's centre at i + 0.5): left edge if first, else right edge."""
    idx = np.nonzero(p >= THRESH)[0]
    if len(idx) == 0:
        return float(np.argmax(p)) + 0.5
    if first:
        i = idx[0]
        if i == 0:
            return 0.0
        a, b = p[i - 1], p[i]
        return (i - 1 + 0.5) + (THRESH - a) / max(1e-6, b - a)
    i = idx[-1]
    if i == len(p) - 1:
        return float(len(p))
    a, b = p[i], p[i + 1]
    return (i + 0.5) + (a - THRESH) / max(1e-6, a - b)


def boxes_from_map(prob: np.ndarray):
    """Row candidates of a [h, w] probability map, best first: dicts with box (map cells, x0 y0 x1 y1),
    score, peak, cells, and rot = (cx, cy, length, thickness, angle_deg) from the second moments."""
    lab = regions(prob > THRESH)
    out = []
    for k in range(1, lab.max() + 1):
        m = lab == k
        cells = int(m.sum())
        pk = float(prob[m].max())
        if cells < MIN_CELLS or pk < PEAK:
            continue
        ys, xs = np.nonzero(m)
        y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
        # profiles: include one cell of margin so the crossing can fall outside the thresholded region
        Y0, Y1, X0, X1 = max(0, y0 - 1), min(prob.shape[0], y1 + 1), max(0, x0 - 1), min(prob.shape[1], x1 + 1)
        px = prob[Y0:Y1, X0:X1].max(0)
        wgt = prob[m]
        cx, cy = (xs + 0.5) @ wgt / wgt.sum(), (ys + 0.5) @ wgt / wgt.sum()
        dx, dy = xs + 0.5 - cx, ys + 0.5 - cy
        vxx, vyy, vxy = (dx * dx) @ wgt / wgt.sum(), (dy * dy) @ wgt / wgt.sum(), (dx * dy) @ wgt / wgt.sum()
        ang = 0.5 * math.atan2(2 * vxy, vxx - vyy)
        u = dx * math.cos(ang) + dy * math.sin(ang)
        v = -dx * math.sin(ang) + dy * math.cos(ang)
        # a filled rectangle of length L has variance L^2/12 along it: robust to ragged region ends
        length = max(u.max() - u.min() + 1, math.sqrt(12 * max(1e-6, (u * u) @ wgt / wgt.sum())))
        thick = math.sqrt(12 * max(1e-6, (v * v) @ wgt / wgt.sum()))
        # upright box: left/right at the column profile's 0.5 crossings; top/bottom from the turned
        # rectangle's height (length |sin| + thickness |cos|) about the weighted centre
        half = (length * abs(math.sin(ang)) + thick * abs(math.cos(ang))) / 2
        box = (X0 + _crossing(px, True), cy - half, X0 + _crossing(px, False), cy + half)
        out.append({"box": box, "score": float(wgt.sum()), "peak": pk, "cells": cells,
                    "rot": (float(cx), float(cy), float(length), float(thick), math.degrees(ang))})
    out.sort(key=lambda r: -r["score"])
    return out


def rot_poly(rot):
    cx, cy, L, T, a = rot
    a = math.radians(a)
    c, s = math.cos(a), math.sin(a)
    pts = []
    for u, v in ((-L / 2, -T / 2), (L / 2, -T / 2), (L / 2, T / 2), (-L / 2, T / 2)):
        pts.append((cx + u * c - v * s, cy + u * s + v * c))
    return np.array(pts)


# MARK: - Scores


def iou(a, b) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / u if u > 0 else 0.0


def poly_iou(p, q, size) -> float:
    """IoU of two polygons by rasterising them at `size` (w, h) pixels."""
    ims = []
    for poly in (p, q):
        im = Image.new("1", size, 0)
        ImageDraw.Draw(im).polygon([tuple(map(float, t)) for t in poly], fill=1)
        ims.append(np.asarray(im, bool))
    u = (ims[0] | ims[1]).sum()
    return float((ims[0] & ims[1]).sum() / u) if u else 0.0


def width_covered(pred, label) -> bool:
    """The predicted box spans at least 95 % of the label's width and lies on the label's row (its
    vertical centre inside the label's vertical extent)."""
    ov = max(0.0, min(pred[2], label[2]) - max(pred[0], label[0]))
    cy = (pred[1] + pred[3]) / 2
    return ov >= 0.95 * (label[2] - label[0]) and label[1] <= cy <= label[3]


def load_split():
    """{'train': [...], 'val': [...], 'heldout': [...]} detect/ file names; val comes from data.py."""
    path = WORK / "split-rows.json"
    if not path.exists():
        raise SystemExit(f"{path} missing: run scripts/model/rows/data.py first")
    return json.loads(path.read_text())


def load_boxes():
    return json.loads((SHARED / "detect" / "boxes.json").read_text())
