#!/usr/bin/env python3
"""Makes text lines (PNG + .gt.txt) from the real embossed-card crops in ../shared/cards-train.

The crops stay in ../shared; only derived line images are written, into the (git-ignored) output folder.
Split: a stable hash of each crop's group label (the first four characters of its file name) puts ~15 % of
the groups in `eval`, so crops of one group never land on both sides.

Text of a crop: its digits; a '_' at either end (a cut) is dropped, a '_' between digits is the gap between
two groups of the card number and becomes one space, as in the synthetic lines.

    real_lines.py --split train --out DIR --singles 4 --joined 6000   # augmented training lines
    real_lines.py --split eval --out DIR --plain                       # each held-out crop once, as it is
"""
import argparse
import hashlib
import io
import json
import math
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageFilter, ImageOps

import render_lines

DEFAULT_DIR = Path(__file__).resolve().parents[3] / "shared" / "cards-train"
EVAL_PERCENT = 15


def split_of(file_name: str) -> str:
    group = file_name[:4]
    bucket = int(hashlib.sha256(group.encode()).hexdigest()[:8], 16) % 100
    return "eval" if bucket < EVAL_PERCENT else "train"


def text_of(file_name: str) -> str:
    return " ".join(file_name[:4].strip("_").replace("_", " ").split())


def load(data_dir: Path, split: str) -> list[tuple[Path, str]]:
    labels = json.loads((data_dir / "labels.json").read_text())
    out = []
    for name in sorted(labels):
        if split_of(name) != split:
            continue
        text = text_of(name)
        # labels.json holds the digits alone; the name holds their positions. They must agree.
        assert text.replace(" ", "") == labels[name], name
        out.append((data_dir / "images" / name, text))
    return out


def join(rng, crops: list[Image.Image]) -> Image.Image:
    """Crops side by side with random gaps, the gaps filled by the neighbouring crops' edge colour."""
    h = crops[0].height
    parts = []
    for i, c in enumerate(crops):
        if i:
            # Crops are cut tight, so a visible gap is always added: a space in the text needs one in the image.
            gap = int(rng.integers(12, 40))
            if gap:
                left = np.asarray(crops[i - 1], np.float32)[:, -2:].mean(axis=1)
                right = np.asarray(c, np.float32)[:, :2].mean(axis=1)
                t = np.linspace(0, 1, gap)[None, :, None]
                fill = left[:, None, :] * (1 - t) + right[:, None, :] * t
                fill += rng.normal(0, 4, fill.shape)
                parts.append(Image.fromarray(np.clip(fill, 0, 255).astype(np.uint8)))
        parts.append(c)
    out = Image.new("RGB", (sum(p.width for p in parts), h))
    x = 0
    for p in parts:
        out.paste(p, (x, 0))
        x += p.width
    return out


def augment(rng, img: Image.Image) -> Image.Image:
    """Blur, JPEG, scale, contrast, polarity, slight rotation, margins; returns a grey image."""
    w, h = img.size
    if rng.random() < 0.4:  # pad top/bottom/sides by replicating the edges, as a looser cut would show
        a = np.asarray(img)
        t, b, l, r = (int(rng.integers(0, 9)) for _ in range(4))
        img = Image.fromarray(np.pad(a, ((t, b), (l, r), (0, 0)), mode="edge"))
    if rng.random() < 0.5:
        ang = rng.uniform(-2, 2)
        img = img.rotate(ang, resample=Image.BICUBIC, expand=False, fillcolor=tuple(int(v) for v in np.asarray(img).reshape(-1, 3).mean(0)))
    target_h = rng.uniform(20, 60)
    f = target_h / (img.height * 0.75)  # the digits fill about three quarters of a crop's height
    img = img.resize((max(8, int(img.width * f)), max(8, int(img.height * f))), Image.BICUBIC if f > 1 else Image.LANCZOS)
    grey = img.convert("L")
    if rng.random() < 0.4:  # contrast: compress or stretch around the mean
        a = np.asarray(grey, np.float32)
        grey = Image.fromarray(np.clip((a - a.mean()) * rng.uniform(0.4, 1.6) + a.mean() + rng.uniform(-30, 30), 0, 255).astype(np.uint8))
    if rng.random() < 0.2:
        grey = ImageOps.invert(grey)
    grey = render_lines.degrade(rng, grey, target_h, strength=0.8)
    if rng.random() < 0.05:
        grey = render_lines.binarise(rng, grey)
    return grey


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DIR, help="the cards-train folder")
    ap.add_argument("--split", choices=["train", "eval"], required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--plain", action="store_true", help="each crop once, unchanged (grey): for evaluation")
    ap.add_argument("--singles", type=int, default=0, help="augmented copies of each crop alone")
    ap.add_argument("--joined", type=int, default=0, help="lines of 2-5 crops joined with gaps")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    crops = load(args.data, args.split)
    rng = np.random.default_rng(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    images = {}

    def image(path: Path) -> Image.Image:
        if path not in images:
            images[path] = Image.open(path).convert("RGB")
        return images[path]

    manifest = []

    def emit(name: str, img: Image.Image, text: str, sources: list[Path]) -> None:
        img.save(args.out / f"{name}.png")
        (args.out / f"{name}.gt.txt").write_text(text + "\n")
        manifest.append(f"{name}\t" + ",".join(p.name for p in sources))

    n = 0
    if args.plain:
        for path, text in crops:
            emit(f"real_{n:06d}", image(path).convert("L"), text, [path]); n += 1
    for k in range(args.singles):
        for path, text in crops:
            emit(f"real_{n:06d}", augment(rng, image(path)), text, [path]); n += 1
    for _ in range(args.joined):
        pick = [crops[int(i)] for i in rng.choice(len(crops), int(rng.integers(2, 6)), replace=False)]
        img = join(rng, [image(p) for p, _ in pick])
        emit(f"real_{n:06d}", augment(rng, img), " ".join(t for _, t in pick), [p for p, _ in pick]); n += 1
    (args.out / "manifest.tsv").write_text("\n".join(manifest) + "\n")
    groups = {p.name[:4] for p, _ in crops}
    print(f"{args.out}: {n} lines from {len(crops)} crops ({len(groups)} groups, split {args.split})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
