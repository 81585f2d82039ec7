#!/usr/bin/env python3
"""Checks that every face in fonts.txt and fonts-heldout.txt exists and draws 0-9 and "/" with real glyphs.

A glyph counts as missing when it renders empty or pixel-identical to the face's .notdef glyph (drawn for a
private-use code point that no card font maps). Also checks that no held-out family appears in training.
A face lacking only "/" is kept for lines without one. Exit status 1 if anything else is wrong.
"""
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFont

import fontlist

CHARS = "0123456789/"
NOTDEF_PROBE = "\U000F0000"  # plane-15 private use: never mapped by these fonts


def glyph_bitmap(font: ImageFont.FreeTypeFont, ch: str) -> np.ndarray:
    img = Image.new("L", (96, 96), 0)
    ImageDraw.Draw(img).text((16, 8), ch, font=font, fill=255)
    return np.asarray(img) > 127


def missing_chars(face: fontlist.Face) -> str:
    """The characters of CHARS the face cannot draw (all of them if the file will not open)."""
    try:
        font = ImageFont.truetype(face.path, 48)
    except OSError:
        return CHARS
    notdef = glyph_bitmap(font, NOTDEF_PROBE)
    missing = ""
    for ch in CHARS:
        bm = glyph_bitmap(font, ch)
        if not bm.any() or (notdef.any() and np.array_equal(bm, notdef)):
            missing += ch
    return missing


def main() -> int:
    bad = 0
    train, held = fontlist.load("train"), fontlist.load("heldout")
    overlap = {f.family for f in train} & {f.family for f in held}
    if overlap:
        print("held-out families in training:", ", ".join(sorted(overlap)))
        bad += 1
    for which, faces in (("train", train), ("heldout", held)):
        for face in faces:
            missing = missing_chars(face)
            if missing == "/":
                # Usable: render_lines.py gives this face only lines without a slash.
                print(f"{which}: {face.family} {face.style}: no '/' glyph, used for digit lines only")
            elif missing:
                bad += 1
                print(f"{which}: {face.family} {face.style}: cannot draw {missing!r}")
        print(f"{which}: {len(faces)} faces, {len({f.family for f in faces})} families checked")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
