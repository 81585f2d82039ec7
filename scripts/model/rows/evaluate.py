#!/usr/bin/env python3
"""Scores the number-row detector with OpenVINO (CPU, f32) on the validation part and the held-out detect/
photos of ../shared/cards-train2 (split of data.py / Models/data/cards-train2-split.json), and optionally
PP-OCRv4's text detector as a yardstick.

    evaluate.py --model .model-work/rows/number-rows.onnx [--sets val heldout] [--rotations 5 10]
                [--ppocr .vendor/models/ch_PP-OCRv4_det_infer.onnx] [--json out.json]

Per photo: the photo letterboxed as the runtime does (rows.letterbox), one inference, the best row candidate
of the map (rows.boxes_from_map) mapped back to photo pixels, against the labelled box it overlaps most.
- IoU >= 0.5 / >= 0.7: share of photos.
- whole width: the predicted box spans >= 95 % of the label's width and its centre lies inside the label's
  vertical extent (rows.width_covered).
- no box: photos without a candidate. wrong best: best candidate with IoU < 0.5. extra boxes: further
  candidates that overlap no label at IoU >= 0.5 (count, and photos with any).
- rotated (--rotations): every photo of the set also turned by +-each angle (Pillow, expand, mid-grey fill),
  the label turned with it (a turned rectangle): IoU of the candidate's turned rectangle with the turned
  label (by rasterising), and of its upright box with the turned label's upright bounding box (as the
  set's own labels are drawn).
- time: median of 100 inferences after 20 warm-up, INFERENCE_PRECISION_HINT f32, 2 and 1 threads.
PP-OCRv4 (--ppocr): the scanner's TextDetector (long side 640, sides rounded to multiples of 32, threshold
0.3, box threshold 0.5, unclip 1.6), pieces joined into rows as CardScanner.rows(of:) does, then the widest
row whose centre lies in the middle band (1st-99th percentile of the training labels' centre height).
Prints no card numbers (none are read here).
"""
import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import openvino as ov
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rows  # noqa: E402


def compile(core, path, threads):
    return core.compile_model(str(path), "CPU", {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32",
                                                 "PERFORMANCE_HINT": "LATENCY"})  # LATENCY: one stream


def median_ms(model, shape, runs=100, warm=20):
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    req = model.create_infer_request()
    for _ in range(warm):
        req.infer({0: x})
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        req.infer({0: x})
        t.append(time.perf_counter() - t0)
    return float(np.median(t) * 1000)


class RowModel:
    def __init__(self, core, path, threads=2):
        self.model = compile(core, path, threads)
        _, _, self.h, self.w = self.model.input(0).shape

    def predict(self, grey: Image.Image):
        """Candidates, best first, each with 'pbox' (photo pixels) and 'prot' (turned rectangle polygon)."""
        x, s, ox, oy = rows.letterbox(grey, self.w, self.h)
        prob = self.model(x)[0][0, 0]
        out = []
        for c in rows.boxes_from_map(prob):
            b = [v * rows.STRIDE for v in c["box"]]
            pb = [max(0.0, (b[0] - ox) / s), max(0.0, (b[1] - oy) / s),
                  min(grey.width, (b[2] - ox) / s), min(grey.height, (b[3] - oy) / s)]
            poly = (rows.rot_poly(c["rot"]) * rows.STRIDE - [ox, oy]) / s
            out.append({**c, "pbox": pb, "ppoly": poly})
        return out


class PPOCRDet:
    """PP-OCRv4's detector as TextDetector.swift runs it; rows joined as CardScanner.rows(of:)."""

    def __init__(self, core, path, band, threads=2):
        self.model = compile(core, path, threads)
        self.band = band

    def predict(self, rgb: Image.Image):
        W, H = rgb.size
        s = min(1.0, 640 / max(W, H))
        w, h = max(32, round(W * s / 32) * 32), max(32, round(H * s / 32) * 32)
        a = np.asarray(rgb.resize((w, h), Image.BILINEAR), np.float32)[:, :, ::-1] / 127.5 - 1
        prob = self.model(np.ascontiguousarray(a.transpose(2, 0, 1)[None]))[0][0, 0]
        lab = rows.regions(prob > 0.3)
        pieces = []
        for k in range(1, lab.max() + 1):
            ys, xs = np.nonzero(lab == k)
            bw, bh = xs.max() - xs.min() + 1, ys.max() - ys.min() + 1
            if min(bw, bh) < 3 or prob[ys, xs].mean() < 0.5:
                continue
            g = bw * bh * 1.6 / (2 * (bw + bh))
            x0, y0 = max(0, math.floor(xs.min() - g)), max(0, math.floor(ys.min() - g))
            x1, y1 = min(w, math.ceil(xs.max() + 1 + g)), min(h, math.ceil(ys.max() + 1 + g))
            pieces.append([x0 * W / w, y0 * H / h, x1 * W / w, y1 * H / h])
        rws = []  # [box, pieces]
        for b in sorted(pieces, key=lambda b: b[0]):
            for r in rws:
                if any(abs((b[1] + b[3]) / 2 - (p[1] + p[3]) / 2) < 0.5 * min(b[3] - b[1], p[3] - p[1])
                       and 0.6 < (b[3] - b[1]) / max(1, p[3] - p[1]) < 1.6 for p in r[1]):
                    r[0] = [min(r[0][0], b[0]), min(r[0][1], b[1]), max(r[0][2], b[2]), max(r[0][3], b[3])]
                    r[1].append(b)
                    break
            else:
                rws.append([list(b), [b]])
        inband = [r[0] for r in rws if self.band[0] <= (r[0][1] + r[0][3]) / 2 / H <= self.band[1]]
        inband.sort(key=lambda b: -(b[2] - b[0]))
        return [{"pbox": b} for b in inband[:1]], [r[0] for r in rws]


def score(preds, labels):
    """preds: per photo, candidates best first (dicts with pbox); labels: per photo, list of boxes."""
    n = len(labels)
    ious, whole, nobox, wrong, extra, extra_photos = [], 0, 0, 0, 0, 0
    for cands, lbl in zip(preds, labels):
        if not cands:
            nobox += 1
            ious.append(0.0)
            continue
        best = cands[0]["pbox"]
        i = max(rows.iou(best, l) for l in lbl)
        ious.append(i)
        wrong += i < 0.5
        l = max(lbl, key=lambda l: rows.iou(best, l))
        whole += rows.width_covered(best, l)
        ex = sum(1 for c in cands[1:] if max(rows.iou(c["pbox"], l) for l in lbl) < 0.5)
        extra += ex
        extra_photos += ex > 0
    a = np.array(ious)
    pct = lambda k: round(100.0 * k / n, 1)
    return {"photos": n, "iou>=0.5 %": pct((a >= 0.5).sum()), "iou>=0.7 %": pct((a >= 0.7).sum()),
            "whole width %": pct(whole), "median iou": round(float(np.median(a)), 3),
            "no box": nobox, "wrong best": int(wrong), "extra boxes": extra, "photos with extra": extra_photos}


def turned(img: Image.Image, boxes, deg):
    """The photo turned by deg (counter-clockwise, expand, mid-grey) and its label polygons."""
    W, H = img.size
    out = img.rotate(deg, resample=Image.BILINEAR, expand=True, fillcolor=128 if img.mode == "L" else (128,) * 3)
    a = math.radians(deg)
    c, s = math.cos(a), math.sin(a)
    ctr, nctr = np.array([W / 2, H / 2]), np.array([out.width / 2, out.height / 2])
    R = np.array([[c, s], [-s, c]])  # image y points down: a counter-clockwise turn on screen
    return out, [(rows.box_poly(b) - ctr) @ R.T + nctr for b in boxes]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=rows.WORK / "number-rows.onnx")
    ap.add_argument("--sets", nargs="*", default=["val", "heldout"])
    ap.add_argument("--rotations", nargs="*", type=float, default=[5, 10])
    ap.add_argument("--ppocr", type=Path)
    ap.add_argument("--no-time", action="store_true")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    core = ov.Core()
    split = rows.load_split()
    boxes = rows.load_boxes()
    model = RowModel(core, args.model, 2)
    result = {"model": str(args.model), "input": f"{model.w}x{model.h}"}
    cy = [(b[1] + b[3]) / 2 / Image.open(rows.SHARED / "detect" / f).height for f in split["train"] for b in boxes[f]]
    band = (float(np.percentile(cy, 1)), float(np.percentile(cy, 99)))
    pp = PPOCRDet(core, args.ppocr, band, 2) if args.ppocr else None
    for name in args.sets:
        files = split[name]
        labels = [boxes[f] for f in files]
        greys = [Image.open(rows.SHARED / "detect" / f).convert("L") for f in files]
        preds = [model.predict(g) for g in greys]
        r = {"rows": score(preds, labels)}
        for deg in args.rotations:
            for sgn in (1, -1):
                d = sgn * deg
                ia, ir = [], []
                for g, lbl in zip(greys, labels):
                    tg, polys = turned(g, lbl, d)
                    cands = model.predict(tg)
                    if not cands:
                        ia.append(0.0); ir.append(0.0)
                        continue
                    c = cands[0]
                    ia.append(max(rows.iou(c["pbox"], [*p.min(0), *p.max(0)]) for p in polys))
                    ir.append(max(rows.poly_iou(c["ppoly"], p, tg.size) for p in polys))
                ia, ir = np.array(ia), np.array(ir)
                r[f"rows turned {d:+g} deg"] = {
                    "upright box iou>=0.5 %": round(100 * (ia >= 0.5).mean(), 1), "upright box iou>=0.7 %": round(100 * (ia >= 0.7).mean(), 1),
                    "turned rect iou>=0.5 %": round(100 * (ir >= 0.5).mean(), 1), "turned rect iou>=0.7 %": round(100 * (ir >= 0.7).mean(), 1)}
        if pp:
            pr = [pp.predict(Image.open(rows.SHARED / "detect" / f).convert("RGB"))[0] for f in files]
            r["ppocr widest row in band"] = score(pr, labels)
        result[name] = r
        print(f"== {name}: {len(files)} photos")
        for k, v in r.items():
            print(f"  {k}: {json.dumps(v)}")
    if not args.no_time:
        t = {f"{th} threads": round(median_ms(compile(core, args.model, th), (1, 1, model.h, model.w)), 2) for th in (2, 1)}
        g = Image.open(rows.SHARED / "detect" / split["heldout"][0]).convert("L")
        t0 = time.perf_counter()
        for _ in range(50):
            x, *_ = rows.letterbox(g, model.w, model.h)
        t["letterbox (Pillow) ms"] = round((time.perf_counter() - t0) * 20, 2)
        prob = model.model(x)[0][0, 0]
        t0 = time.perf_counter()
        for _ in range(50):
            rows.boxes_from_map(prob)
        t["read-off (numpy) ms"] = round((time.perf_counter() - t0) * 20, 2)
        result["time ms (median of 100, f32)"] = t
        if pp:
            result["ppocr time ms at 640x416"] = {f"{th} threads": round(median_ms(compile(core, args.ppocr, th), (1, 3, 416, 640)), 2) for th in (2, 1)}
        for k in ("time ms (median of 100, f32)", "ppocr time ms at 640x416"):
            if k in result:
                print(f"{k}: {json.dumps(result[k])}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
