"""Shared by train.py and evaluate.py (numpy + Pillow only, no torch): the character table, the text
normalisation and the line preprocessing of the model's interface.

Interface: float32 [1, 3, 48, W], the grey line scaled to height 48 (aspect kept), left-aligned, padded
with 0.0 to W (a multiple of 32, at least 320, as the Swift runtime does), the grey replicated in the
3 channels, normalised as pixel / 127.5 - 1. Output [1, W/8, 13] softmax; class 0 the CTC blank.
"""
from pathlib import Path

import numpy as np
from PIL import Image

CHARS = "0123456789/ "  # class i+1 is CHARS[i]; space last
HEIGHT = 48
MIN_WIDTH = 320


def norm(text: str) -> str:
    """Runs of spaces count as one; ends trimmed."""
    return " ".join(text.split())


def encode(text: str) -> list[int]:
    return [CHARS.index(c) + 1 for c in norm(text)]


def scaled_grey(path: Path) -> np.ndarray:
    """The line as uint8 grey, height 48, aspect kept."""
    img = Image.open(path).convert("L")
    w = max(1, round(img.width * HEIGHT / img.height))
    return np.asarray(img.resize((w, HEIGHT), Image.BILINEAR), dtype=np.uint8)


def runtime_width(w: int) -> int:
    return max(MIN_WIDTH, -(-w // 32) * 32)


def to_input(grey: np.ndarray, width: int | None = None) -> np.ndarray:
    """[1, 3, 48, W] float32 as the runtime builds it."""
    w = grey.shape[1]
    width = width or runtime_width(w)
    x = np.zeros((1, 3, HEIGHT, width), np.float32)
    x[0, :, :, :w] = grey.astype(np.float32)[None] / 127.5 - 1.0
    return x


def greedy(probs: np.ndarray, table: list[str]) -> str:
    """Best class per step, repeats merged, blanks (class 0) dropped; `table[i]` is class i+1."""
    best = probs.argmax(-1)
    out, prev = [], 0
    for k in best:
        k = int(k)
        if k != prev and k != 0:
            out.append(table[k - 1])
        prev = k
    return "".join(out)


def read_set(folder: Path) -> list[tuple[Path, str]]:
    return [(p, norm(p.with_suffix("").with_suffix(".gt.txt").read_text())) for p in sorted(folder.glob("*.png"))]
