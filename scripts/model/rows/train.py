#!/usr/bin/env python3
"""Trains the number-row detector (net.py) on the training part made by data.py and exports the ONNX.

    nice -n 19 train.py --steps 5000 --out .model-work/rows/run [--onnx .model-work/rows/number-rows.onnx]
    train.py --out .model-work/rows/run --steps 5000 --onnx ...      # resumes from RUN/last.pt if there

One thread; deterministic: every random draw of step k comes from a generator seeded with (seed, k), so a
run resumed from its checkpoint (RUN/last.pt, written every --ckpt-every steps) continues exactly as an
uninterrupted one. Every --val-every steps the validation part (data.py; never the held-out photos) is
scored with the read-off of rows.py; the best validation checkpoint is RUN/best.pt and is what gets exported
(--export last to export the last step instead).

Augmentation of each photo (cached grey, long side 400): letterbox fit times a zoom of 0.6-1.15, shift up to
15 % of the input, rotation within +-rot degrees (70 % of photos), brightness/contrast/gamma, Gaussian blur
(30 %), JPEG quality 20-70 (30 %), Gaussian noise (30 %), horizontal mirror (--flip, default off: no gain
on the validation part). The target is the labelled box carried through the same transform (a turned
rectangle when turned), as the share of each 4 x 4 cell it covers.

--turned P (default 0, the committed model): a share P of the photos is turned 90, 180 or 270 degrees first
and has no row to find, so that the detector finds number rows the right way up only (the scanner could then
tell a card on its side or upside down by which turn of the frame shows a row). Validation then also counts
the validation photos, each turned once, on which any row is found ("turned_found"), and the best step is
the one with the most IoU >= 0.7 less that share.
"""
import argparse
import io
import json
import math
import pickle
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image, ImageFilter

sys.path.insert(0, str(Path(__file__).resolve().parent))
import net as N  # noqa: E402
import rows  # noqa: E402


def sample(rng: random.Random, grey: np.ndarray, boxes, w: int, h: int, args, train: bool):
    """(input [1,h,w] float32, target [h/4,w/4] float32)."""
    if train and args.turned > 0 and rng.random() < args.turned:
        # The photo a quarter, half or three quarters turned: no number row to find (the detector
        # learns to find rows the right way up only, and the scanner turns the frame to find one).
        grey = np.ascontiguousarray(np.rot90(grey, rng.choice([1, 2, 3])))
        boxes = []
    im = Image.fromarray(grey)
    W, H = im.size
    s = min(w / W, h / H)
    ang, flip, tx, ty = 0.0, False, 0.0, 0.0
    if train:
        s *= math.exp(rng.uniform(math.log(args.zoom_min), math.log(args.zoom_max)))
        if rng.random() < 0.7:
            ang = math.radians(rng.uniform(-args.rot, args.rot))
        tx, ty = rng.uniform(-0.15, 0.15) * w, rng.uniform(-0.15, 0.15) * h
        flip = rng.random() < args.flip
    # forward map: photo p -> input q = R(ang) * S * (p - c) + (w/2, h/2) + t ; mirror after
    c, sn = math.cos(ang), math.sin(ang)
    A = np.array([[s * c, -s * sn], [s * sn, s * c]])
    b = np.array([w / 2 + tx, h / 2 + ty]) - A @ np.array([W / 2, H / 2])
    if flip:
        A = np.array([[-1, 0], [0, 1]]) @ A
        b = np.array([w - b[0], b[1]])
    Ai = np.linalg.inv(A)
    bi = -Ai @ b
    fill = 128 if not train or rng.random() < 0.7 else rng.randint(0, 255)
    out = im.transform((w, h), Image.AFFINE, (Ai[0, 0], Ai[0, 1], bi[0], Ai[1, 0], Ai[1, 1], bi[1]),
                       resample=Image.BILINEAR, fillcolor=fill)
    polys = [rows.box_poly(bx) @ A.T + b for bx in boxes]
    if train:
        if rng.random() < 0.3:
            out = out.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.5)))
        if rng.random() < 0.3:
            buf = io.BytesIO()
            out.save(buf, "JPEG", quality=rng.randint(20, 70))
            out = Image.open(io.BytesIO(buf.getvalue())).convert("L")
        g = np.asarray(out, np.float32)
        if rng.random() < 0.8:
            g = 255.0 * (g / 255.0) ** rng.uniform(0.7, 1.4)
            m = g.mean()
            g = (g - m) * rng.uniform(0.6, 1.4) + m + rng.uniform(-30, 30)
        if rng.random() < 0.3:
            g = g + np.random.default_rng(rng.getrandbits(32)).normal(0, rng.uniform(2, 8), g.shape)
        g = np.clip(g, 0, 255)
    else:
        g = np.asarray(out, np.float32)
    return (g / 127.5 - 1.0)[None].astype(np.float32), rows.mask_target(polys, w, h)


def val_sample(grey: np.ndarray, boxes, w: int, h: int):
    """As the runtime: rows.letterbox (centred fit); boxes mapped into the input."""
    x, s, ox, oy = rows.letterbox(Image.fromarray(grey), w, h)
    return x[0], [[b[0] * s + ox, b[1] * s + oy, b[2] * s + ox, b[3] * s + oy] for b in boxes]


def turned_rows(net, turned):
    """Share of turned validation photos (inputs) on which any row candidate is found."""
    net.eval()
    found = 0
    with torch.no_grad():
        for k in range(0, len(turned), 16):
            p = torch.sigmoid(net(torch.from_numpy(np.stack(turned[k:k + 16])))).numpy()[:, 0]
            found += sum(1 for pm in p if rows.boxes_from_map(pm))
    net.train()
    return found / max(1, len(turned))


def score_val(net, vals, w, h):
    """Share of validation photos with IoU >= 0.5 / >= 0.7 (best candidate vs its best label) and mean IoU."""
    net.eval()
    ious = []
    with torch.no_grad():
        for k in range(0, len(vals), 16):
            chunk = vals[k:k + 16]
            x = torch.from_numpy(np.stack([v[0] for v in chunk]))
            p = torch.sigmoid(net(x)).numpy()[:, 0]
            for (xx, lbl), pm in zip(chunk, p):
                cands = rows.boxes_from_map(pm)
                if not cands:
                    ious.append(0.0)
                    continue
                bx = [v * rows.STRIDE for v in cands[0]["box"]]
                ious.append(max(rows.iou(bx, l) for l in lbl))
    net.train()
    a = np.array(ious)
    return {"iou50": float((a >= 0.5).mean()), "iou70": float((a >= 0.7).mean()), "miou": float(a.mean())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--size", default="320x192", help="input WxH")
    ap.add_argument("--width", type=float, default=1.0, help="channel multiplier of net.RowNet")
    ap.add_argument("--rot", type=float, default=10.0, help="rotation range, degrees")
    ap.add_argument("--flip", type=float, default=0.0, help="probability of a horizontal mirror (off: see Models/README.md, number-rows.onnx)")
    ap.add_argument("--turned", type=float, default=0.0,
                    help="probability that a photo is turned 90/180/270 degrees with no row to find (upright rows only)")
    ap.add_argument("--zoom-min", type=float, default=0.6)
    ap.add_argument("--zoom-max", type=float, default=1.15)
    ap.add_argument("--out", type=Path, required=True, help="run folder (checkpoints, log)")
    ap.add_argument("--onnx", type=Path)
    ap.add_argument("--export", choices=["best", "last"], default="best")
    ap.add_argument("--val-every", type=int, default=500)
    ap.add_argument("--ckpt-every", type=int, default=250)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--stop-at", type=int, help="stop after this step (checkpointed; run again to resume)")
    args = ap.parse_args()
    w, h = map(int, args.size.split("x"))
    assert w % 32 == 0 and h % 32 == 0

    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(args.seed)
    net = N.RowNet(args.width)
    print(f"parameters: {sum(p.numel() for p in net.parameters()):,}; input {w}x{h}", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "args.json").write_text(json.dumps({k: str(v) for k, v in vars(args).items()}, indent=1))
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    warm = min(300, args.steps // 10)
    lr_at = lambda s: (s + 1) / warm if s < warm else 0.5 * (1 + math.cos(math.pi * (s - warm) / max(1, args.steps - warm))) * 0.98 + 0.02
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    start, best, log = 0, None, []
    last = args.out / "last.pt"
    if last.exists():
        ck = torch.load(last, map_location="cpu", weights_only=False)
        net.load_state_dict(ck["net"]); opt.load_state_dict(ck["opt"]); sched.load_state_dict(ck["sched"])
        start, best, log = ck["step"], ck["best"], ck["log"]
        print(f"resumed at step {start}", flush=True)

    if start < args.steps:
        with open(rows.WORK / "cache-train.pkl", "rb") as fh:
            train = pickle.load(fh)
        with open(rows.WORK / "cache-val.pkl", "rb") as fh:
            photos = pickle.load(fh)
        vals = [val_sample(g, bx, w, h) for _, g, bx in photos]
        # Each validation photo turned 90, 180 or 270 degrees in turn: no row should be found there.
        turned = [rows.letterbox(Image.fromarray(np.ascontiguousarray(np.rot90(g, 1 + i % 3))), w, h)[0][0]
                  for i, (_, g, _) in enumerate(photos)] if args.turned > 0 else []
        print(f"train photos {len(train)}, validation photos {len(vals)}", flush=True)
        net.train()
        t0, run = time.time(), None
        stop = min(args.steps, args.stop_at or args.steps)
        for step in range(start + 1, stop + 1):
            rng = random.Random(args.seed * 1_000_003 + step)
            torch.manual_seed(args.seed * 1_000_003 + step)
            idx = [rng.randrange(len(train)) for _ in range(args.batch)]
            xs, ts = zip(*(sample(rng, train[i][1], train[i][2], w, h, args, True) for i in idx))
            x, t = torch.from_numpy(np.stack(xs)), torch.from_numpy(np.stack(ts))[:, None]
            logit = net(x)
            bce = F.binary_cross_entropy_with_logits(logit, t)
            p = torch.sigmoid(logit)
            dice = 1 - (2 * (p * t).sum((1, 2, 3)) + 1) / (p.sum((1, 2, 3)) + t.sum((1, 2, 3)) + 1)
            loss = bce + dice.mean()
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
            opt.step()
            sched.step()
            run = loss.item() if run is None else 0.98 * run + 0.02 * loss.item()
            if step % 100 == 0:
                print(f"step {step}/{args.steps} loss {run:.4f} lr {sched.get_last_lr()[0]:.2e} "
                      f"{(time.time() - t0) / 60:.1f} min", flush=True)
            if step % args.val_every == 0 or step == args.steps:
                v = score_val(net, vals, w, h)
                v["step"] = step
                if turned:
                    v["turned_found"] = turned_rows(net, turned)
                log.append(v)
                key = (v["iou70"] - v.get("turned_found", 0.0), v["miou"])
                if best is None or key > tuple(best[:2]):
                    best = [v["iou70"], v["miou"], step]
                    torch.save(net.state_dict(), args.out / "best.pt")
                print(f"  val {json.dumps(v)} best step {best[2]}", flush=True)
            if step % args.ckpt_every == 0 or step == stop:
                torch.save({"net": net.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
                            "step": step, "best": best, "log": log}, args.out / "tmp.pt")
                (args.out / "tmp.pt").replace(last)
        print(f"training time: {(time.time() - t0) / 60:.1f} min for steps {start + 1}-{stop} of {args.batch}", flush=True)
        (args.out / "val-log.json").write_text(json.dumps(log, indent=1))
        if stop < args.steps:
            return 0
    if args.onnx:
        if args.export == "best":
            net.load_state_dict(torch.load(args.out / "best.pt", map_location="cpu"))
            print(f"exporting the best validation step {best[2]} (IoU>=0.7 {best[0]:.3f}, mean IoU {best[1]:.3f})")
        N.export(net, args.onnx, h, w)
        print(f"exported {args.onnx} ({args.onnx.stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
