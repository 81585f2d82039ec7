#!/usr/bin/env python3
"""gen2: a second, independent generator of payment-card images for a development set.

It draws card fronts (flat scans, photos at an angle, embossed cards), card backs, and
images with no card (grounds, receipts), writes them as PNG files and lists what each
shows in manifest.json. Only published test card numbers are drawn; specimens carry
numbers that fail the Luhn check. The number and the expiry are set in typefaces kept
out of the recognizer's training set (see README.md beside this file).

    python3 scripts/gen2/generate.py --out .devsets/gen2 --seed 11 --count 240

Python 3.11, Pillow and numpy only. The same seed, count and installed packages give
the same images.
"""

from __future__ import annotations

import argparse
import colorsys
import io
import json
import math
import os
import random
import re
import sys
import time

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

# ----------------------------------------------------------------------------- numbers


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        v = int(ch)
        if i % 2 == 1:
            v *= 2
            if v > 9:
                v -= 9
        total += v
    return total % 10 == 0


# Published test card numbers (payment processors' documentation), by brand.
TEST_PANS = {
    "visa": ["4242424242424242", "4000056655665556", "4111111111111111", "4012888888881881",
             "4000000000000002", "4000000000009995", "4000000000000069"],
    "mastercard": ["5555555555554444", "2223003122003222", "5200828282828210", "5105105105105100"],
    "amex": ["378282246310005", "371449635398431"],
    "discover": ["6011111111111117", "6011000990139424"],
    "diners": ["3056930009020004", "36227206271667"],
    "jcb": ["3566002020360505"],
    "unionpay": ["6200000000000005", "6200000000000047", "6205500000000000004"],
}
BRANDS = ["visa", "mastercard", "amex", "discover", "diners", "jcb", "unionpay"]
BRAND_WEIGHTS = [30, 24, 12, 9, 8, 7, 10]

# Numbers printed on specimen cards: the shape of a card number, failing the Luhn check.
SPECIMENS = [
    ("visa", "4000123456789010"), ("mastercard", "5500123456789010"), ("visa", "4111222233334445"),
    ("amex", "371212345678901"), ("discover", "6011123456789012"), ("jcb", "3530123456789012"),
    ("visa", "4242424242424241"), ("mastercard", "5105105105105106"), ("unionpay", "6200123456789012"),
    ("diners", "36123456789012"),
]

for _brand, _pans in TEST_PANS.items():
    for _pan in _pans:
        assert luhn_ok(_pan), _pan
for _brand, _printed in SPECIMENS:
    assert not luhn_ok(_printed), _printed


def groupings_for(n: int) -> list[str]:
    if n == 15:
        return ["4-6-5"]
    if n == 14:
        return ["4-6-4"]
    if n == 19:
        return ["6-13", "4-4-4-4-3", "none"]
    return ["4-4-4-4"]


def split_groups(digits: str, grouping: str) -> list[str]:
    if grouping == "none":
        return [digits]
    out, i = [], 0
    for size in grouping.split("-"):
        out.append(digits[i:i + int(size)])
        i += int(size)
    assert i == len(digits), (digits, grouping)
    return out


_DIGIT_RUN = re.compile(r"\d(?:[ \-]?\d)*")


def shows_card_number(lines: list[str]) -> bool:
    """True when any run of digits (single spaces or dashes allowed between them) holds
    13 to 19 consecutive digits that pass the Luhn check."""
    for line in lines:
        for m in _DIGIT_RUN.finditer(line):
            d = re.sub(r"\D", "", m.group(0))
            for n in range(13, 20):
                for s in range(0, len(d) - n + 1):
                    if luhn_ok(d[s:s + n]):
                        return True
    return False


# ----------------------------------------------------------------------------- fonts

FONT_ROOTS = ["/usr/share/fonts", "/usr/local/share/fonts"]

# The held-out typefaces for the number and the expiry: (regular, bold) path endings.
NUMBER_FONTS = [
    ("Hack", ["hack/Hack-Regular.ttf"], ["hack/Hack-Bold.ttf"]),
    ("B612 Mono", ["b612/B612Mono-Regular.otf"], ["b612/B612Mono-Bold.otf"]),
    ("Karla", ["karla/Karla-Regular.otf"], ["karla/Karla-Bold.otf"]),
    ("Cabin", ["cabin/Cabin-Regular.otf", "cabin/Cabin-Regular.ttf"], ["cabin/Cabin-Bold.otf", "cabin/Cabin-Bold.ttf"]),
    ("Fantasque Sans Mono", ["Normal/TTF/FantasqueSansMono-Regular.ttf", "Normal/OTF/FantasqueSansMono-Regular.otf"],
     ["Normal/TTF/FantasqueSansMono-Bold.ttf", "Normal/OTF/FantasqueSansMono-Bold.otf"]),
    ("Quicksand", ["quicksand/Quicksand-Regular.ttf"], ["quicksand/Quicksand-Bold.ttf"]),
    ("Ubuntu Mono", ["ubuntu/UbuntuMono-R.ttf", "ubuntu/UbuntuMono-Regular.ttf"],
     ["ubuntu/UbuntuMono-B.ttf", "ubuntu/UbuntuMono-Bold.ttf"]),
    ("Go Mono", ["fonts-go/Go-Mono.ttf"], ["fonts-go/Go-Mono-Bold.ttf"]),
]

# Any typeface for the bank name, labels, holder, small print and receipts.
TEXT_FONTS = [
    "dejavu/DejaVuSans-Bold.ttf", "dejavu/DejaVuSans.ttf", "dejavu/DejaVuSerif-Bold.ttf",
    "liberation2/LiberationSans-Bold.ttf", "liberation2/LiberationSans-Regular.ttf",
    "liberation2/LiberationSerif-Bold.ttf", "fonts-go/Go-Bold.ttf", "fonts-go/Go-Medium.ttf",
    "cabin/Cabin-SemiBold.otf", "karla/Karla-ExtraBold.otf", "quicksand/Quicksand-Bold.ttf",
    "b612/B612-Bold.otf",
]
MONO_TEXT_FONTS = ["dejavu/DejaVuSansMono.ttf", "liberation2/LiberationMono-Regular.ttf",
                   "dejavu/DejaVuSansMono-Bold.ttf"]
ITALIC_BOLD = ["dejavu/DejaVuSans-BoldOblique.ttf", "liberation2/LiberationSans-BoldItalic.ttf",
               "fonts-go/Go-Bold-Italic.ttf"]


class Fonts:
    def __init__(self) -> None:
        files = []
        for root in FONT_ROOTS:
            for d, _, names in os.walk(root):
                for n in names:
                    if n.lower().endswith((".ttf", ".otf")):
                        files.append(os.path.join(d, n))
        self.files = sorted(files)
        self.cache: dict[tuple[str, int], ImageFont.FreeTypeFont] = {}
        self.number = []  # (family, regular path, bold path)
        self.missing = []
        for family, regs, bolds in NUMBER_FONTS:
            reg = self.find(regs)
            bold = self.find(bolds)
            if reg and bold:
                self.number.append((family, reg, bold))
            else:
                self.missing.append(family)
        self.text = [p for p in (self.find([s]) for s in TEXT_FONTS) if p]
        self.mono = [p for p in (self.find([s]) for s in MONO_TEXT_FONTS) if p]
        self.italic = [p for p in (self.find([s]) for s in ITALIC_BOLD) if p]
        if not self.number:
            sys.exit("gen2: none of the held-out number typefaces is installed; run scripts/gen2/install-deps.sh")
        if not self.text:
            self.text = [self.number[0][2]]
        if not self.mono:
            self.mono = [self.number[0][1]]
        if not self.italic:
            self.italic = [self.text[0]]

    def find(self, endings: list[str]) -> str | None:
        for e in endings:
            for f in self.files:
                if f.endswith("/" + e):
                    return f
        return None

    def get(self, path: str, size: int) -> ImageFont.FreeTypeFont:
        size = max(6, int(round(size)))
        key = (path, size)
        if key not in self.cache:
            self.cache[key] = ImageFont.truetype(path, size)
        return self.cache[key]


# ----------------------------------------------------------------------------- grounds

PHOTO_DIRS = ["/usr/share/backgrounds"]
TEXTURE_DIRS = ["/usr/share/mypaint/backgrounds"]


def list_rasters(dirs: list[str], skip_small: int) -> list[str]:
    out = []
    for root in dirs:
        for d, _, names in os.walk(root):
            for n in names:
                if n.lower().endswith((".jpg", ".jpeg", ".png")):
                    p = os.path.join(d, n)
                    try:
                        if os.path.getsize(p) < skip_small:
                            continue
                        with Image.open(p) as im:
                            im.verify()
                    except Exception:
                        continue
                    out.append(os.path.realpath(p))
    return sorted(set(out))


class Grounds:
    def __init__(self) -> None:
        self.photos = list_rasters(PHOTO_DIRS, 100_000)
        self.textures = list_rasters(TEXTURE_DIRS, 20_000)
        self.cache: dict[tuple[str, int], Image.Image] = {}

    def load(self, path: str, limit: int) -> Image.Image:
        """The file as RGB, at most limit pixels on its long side (cached by both, so
        what an image gets never depends on which images were drawn before it)."""
        key = (path, limit)
        if key not in self.cache:
            im = Image.open(path)
            im.draft("RGB", (limit, limit))
            im = im.convert("RGB")
            if max(im.size) > limit:
                im.thumbnail((limit, limit), Image.BILINEAR)
            self.cache[key] = im
        return self.cache[key]


# ----------------------------------------------------------------------------- helpers

_GRIDS: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}


def grid(w: int, h: int) -> tuple[np.ndarray, np.ndarray]:
    key = (w, h)
    if key not in _GRIDS:
        ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
        _GRIDS[key] = (xs, ys)
        if len(_GRIDS) > 24:
            _GRIDS.pop(next(iter(_GRIDS)))
    return _GRIDS[key]


def to_img(arr: np.ndarray) -> Image.Image:
    return Image.fromarray((np.clip(arr, 0, 1) * 255 + 0.5).astype(np.uint8), "RGB")


def to_arr(img: Image.Image) -> np.ndarray:
    return np.asarray(img.convert("RGB"), dtype=np.float32) / 255.0


def mask_arr(img: Image.Image) -> np.ndarray:
    return np.asarray(img, dtype=np.float32) / 255.0


def rgb8(c) -> tuple[int, int, int]:
    return tuple(int(max(0, min(255, round(v * 255)))) for v in c)


def lum(c) -> float:
    return 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]


def hsv(h: float, s: float, v: float) -> np.ndarray:
    return np.array(colorsys.hsv_to_rgb(h % 1.0, max(0, min(1, s)), max(0, min(1, v))), np.float32)


def value_noise(nrng: np.random.Generator, w: int, h: int, cell: float) -> np.ndarray:
    gw = max(2, int(w / cell) + 2)
    gh = max(2, int(h / cell) + 2)
    small = Image.fromarray(nrng.random((gh, gw), dtype=np.float32), "F")
    return np.asarray(small.resize((w, h), Image.BICUBIC), dtype=np.float32)


def blur_mask(m: np.ndarray, radius: float) -> np.ndarray:
    if radius <= 0.1:
        return m
    im = Image.fromarray((np.clip(m, 0, 1) * 255).astype(np.uint8), "L")
    return mask_arr(im.filter(ImageFilter.GaussianBlur(radius)))


def rounded_alpha(w: int, h: int, r: float, scale: int = 3) -> Image.Image:
    big = Image.new("L", (w * scale, h * scale), 0)
    ImageDraw.Draw(big).rounded_rectangle([0, 0, w * scale - 1, h * scale - 1], radius=int(r * scale), fill=255)
    return big.reduce(scale)


def smooth_field(fn, w: int, h: int, step: int = 8) -> np.ndarray:
    """fn(xs, ys) (pixel coordinates) evaluated on a coarse grid and enlarged: for fields
    that vary slowly, such as light falloff."""
    sw, sh = max(2, w // step + 1), max(2, h // step + 1)
    ys, xs = np.mgrid[0:sh, 0:sw].astype(np.float32)
    small = fn(xs * (w - 1) / (sw - 1), ys * (h - 1) / (sh - 1)).astype(np.float32)
    return np.asarray(Image.fromarray(small, "F").resize((w, h), Image.BILINEAR), np.float32)


def noise_like(nrng: np.random.Generator, h: int, w: int, sigma: float) -> np.ndarray:
    return nrng.standard_normal((h, w, 1), dtype=np.float32) * np.float32(sigma)


def shift(a: np.ndarray, dy: int, dx: int) -> np.ndarray:
    """a moved by (dy, dx) pixels, zero filled (no wrap-around)."""
    out = np.zeros_like(a)
    h, w = a.shape[:2]
    if abs(dy) >= h or abs(dx) >= w:
        return out
    ys, yd = (slice(0, h - dy), slice(dy, h)) if dy >= 0 else (slice(-dy, h), slice(0, h + dy))
    xs, xd = (slice(0, w - dx), slice(dx, w)) if dx >= 0 else (slice(-dx, w), slice(0, w + dx))
    out[yd, xd] = a[ys, xs]
    return out


def homography(src, dst) -> np.ndarray:
    a, b = [], []
    for (x, y), (u, v) in zip(src, dst):
        a.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        b.append(u)
        a.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        b.append(v)
    h = np.linalg.solve(np.array(a, float), np.array(b, float))
    return np.append(h, 1.0).reshape(3, 3)


def warp_layer(layer: Image.Image, src, dst, size) -> Image.Image:
    """Maps an RGBA layer so that the points src land on dst, in a frame of size."""
    src = [tuple(p) for p in src]
    dst = [tuple(p) for p in dst]
    # Shrink first when the warp would shrink a lot (the warp itself does not filter).
    sw = math.dist(src[0], src[1])
    dw = (math.dist(dst[0], dst[1]) + math.dist(dst[3], dst[2])) / 2
    if dw < 0.8 * sw:
        f = dw / sw / 0.9
        nw, nh = max(1, round(layer.width * f)), max(1, round(layer.height * f))
        fx, fy = nw / layer.width, nh / layer.height
        layer = layer.resize((nw, nh), Image.LANCZOS)
        src = [(x * fx, y * fy) for x, y in src]
    hinv = homography(dst, src)
    coeffs = tuple((hinv / hinv[2, 2]).flatten()[:8])
    out = layer.convert("RGBa").transform(size, Image.PERSPECTIVE, coeffs, Image.BILINEAR)
    return out.convert("RGBA")


def composite(ground: np.ndarray, layer: Image.Image) -> np.ndarray:
    la = np.asarray(layer, dtype=np.float32) / 255.0
    a = la[..., 3:4]
    return ground * (1 - a) + la[..., :3] * a


# ----------------------------------------------------------------------------- names and words

BANK_A = ["Northwind", "Meridian", "Harbor", "Cobalt", "Juniper", "Alder", "Pioneer", "Summit", "Lakeside",
          "Crescent", "Orchard", "Granite", "Beacon", "Silverline", "Tidewater", "Redwood", "Kestrel", "Bluestem",
          "Halcyon", "Marlowe", "Quarry", "Vesper", "Copperleaf", "Ironbridge", "Saltmarsh", "Wren"]
BANK_B = ["BANK", "Bank", "Credit Union", "Savings", "Financial", "Bank & Trust", "Mutual", "Federal", "Capital",
          "Banking Co.", "Trust"]
TIERS = ["PLATINUM", "WORLD", "REWARDS", "DEBIT", "CREDIT", "BUSINESS", "SIGNATURE", "GOLD", "INFINITE",
         "CLASSIC", "PREPAID", "Premier", "Select", "Travel", "Cash Back"]
FIRST = ["ALEX", "MARIA", "JORDAN", "PRIYA", "KENJI", "FATIMA", "LUCAS", "INGRID", "OMAR", "CHLOE", "DMITRI",
         "AMARA", "TOMAS", "MEI", "RAFAEL", "SOFIA", "NOAH", "ELENA", "SAMUEL", "YARA", "HUGO", "NADIA", "PETRA",
         "ILYA", "GRACE", "DIEGO", "LEILA", "OWEN", "ANIKA", "BRUNO"]
LAST = ["OKAFOR", "LINDQVIST", "MORENO", "TANAKA", "HADDAD", "KOWALSKI", "BRENNAN", "FERREIRA", "NAKAMURA",
        "OSTROWSKI", "DUBOIS", "MENSAH", "HOLLOWAY", "VARGA", "CASTELLANOS", "ABERNATHY", "SORENSEN", "PATEL",
        "QUINTERO", "WHITFIELD", "ROSSI", "ACHTERBERG", "DELACROIX", "MBEKI", "HALVORSEN"]
SHOPS = ["CORNER GROCER", "BLUE DOOR CAFE", "HARDWARE DEPOT", "CITY PHARMACY", "FRESH MARKET", "BOOK NOOK",
         "PETROL STOP", "THE NOODLE BAR", "GARDEN CENTRE", "QUICK MART"]
ITEMS = ["COFFEE LG", "BAGEL", "MILK 2L", "BREAD", "APPLES", "BATTERIES", "TAPE", "SCREWS", "NOTEBOOK",
         "PEN SET", "SOUP", "RICE 1KG", "TEA", "CHEESE", "ORANGES", "BULB", "GLUE", "SOAP", "CHOCOLATE"]


def holder_name(rng: random.Random) -> str:
    name = rng.choice(FIRST) + " "
    if rng.random() < 0.25:
        name += rng.choice("ABCDEFGHJKLMNPRSTW") + " "
    return name + rng.choice(LAST)


def bank_name(rng: random.Random) -> str:
    return f"{rng.choice(BANK_A)} {rng.choice(BANK_B)}"


# ----------------------------------------------------------------------------- card designs


def palette(rng: random.Random, tone: str) -> tuple[np.ndarray, np.ndarray]:
    h = rng.random()
    if tone == "dark":
        s, v = rng.uniform(0.3, 0.9), rng.uniform(0.07, 0.28)
    elif tone == "light":
        s, v = rng.uniform(0.03, 0.35), rng.uniform(0.84, 1.0)
    else:
        s, v = rng.uniform(0.55, 1.0), rng.uniform(0.5, 0.85)
    c0 = hsv(h, s, v)
    dh = rng.uniform(-0.2, 0.2)
    dv = rng.uniform(-0.12, 0.12) if tone != "dark" else rng.uniform(-0.05, 0.12)
    c1 = hsv(h + dh, s * rng.uniform(0.7, 1.2), v + dv)
    return c0, c1


def linear_gradient(w, h, c0, c1, angle) -> np.ndarray:
    xs, ys = grid(w, h)
    t = (xs * math.cos(angle) + ys * math.sin(angle))
    t = (t - t.min()) / max(1e-6, float(t.max() - t.min()))
    return c0[None, None, :] * (1 - t[..., None]) + c1[None, None, :] * t[..., None]


def design_gradient(rng, nrng, w, h, tone):
    c0, c1 = palette(rng, tone)
    arr = linear_gradient(w, h, c0, c1, rng.uniform(0, 2 * math.pi))
    if rng.random() < 0.5:  # soft radial glow
        xs, ys = grid(w, h)
        cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(0.4, 1.0) * w
        g = np.exp(-(((xs - cx) ** 2 + (ys - cy) ** 2) / (r * r)))[..., None]
        tint = hsv(rng.random(), rng.uniform(0.2, 0.8), 1.0)
        arr = arr * (1 - 0.35 * g) + tint * 0.35 * g * (0.5 if tone == "dark" else 1.0)
    return arr


def design_waves(rng, nrng, w, h, tone):
    arr = design_gradient(rng, nrng, w, h, tone)
    xs, ys = grid(w, h)
    x = xs[0:1, :]
    base_h = rng.random()
    for _ in range(rng.randint(3, 7)):
        lam = rng.uniform(0.5, 1.6) * w
        amp = rng.uniform(0.04, 0.2) * h
        c = rng.uniform(-0.1, 1.0) * h
        thick = rng.uniform(0.05, 0.35) * h
        phase = rng.uniform(0, 2 * math.pi)
        yy = c + amp * np.sin(2 * math.pi * x / lam + phase)
        edge = max(1.5, 0.01 * h)
        m = np.clip((ys - yy) / edge, 0, 1) * np.clip((yy + thick - ys) / edge, 0, 1)
        v = rng.uniform(0.1, 0.4) if tone == "dark" else rng.uniform(0.5, 1.0)
        col = hsv(base_h + rng.uniform(-0.15, 0.15), rng.uniform(0.2, 0.9), v)
        a = rng.uniform(0.12, 0.45)
        arr = arr * (1 - a * m[..., None]) + col * (a * m[..., None])
    return arr


def design_geometric(rng, nrng, w, h, tone):
    c0, c1 = palette(rng, tone)
    img = to_img(linear_gradient(w, h, c0, c1, rng.uniform(0, math.pi)))
    over = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    d = ImageDraw.Draw(over)
    style = rng.choice(["triangles", "circles", "hexes", "stripes", "blocks"])
    hue = rng.random()

    def col(alpha):
        v = rng.uniform(0.05, 0.45) if tone == "dark" else rng.uniform(0.45, 1.0)
        return rgb8(hsv(hue + rng.uniform(-0.12, 0.12), rng.uniform(0.1, 0.8), v)) + (alpha,)

    if style == "triangles":
        n = rng.randint(6, 12)
        sx, sy = w / n, h / max(3, int(n * h / w))
        for gy in range(int(h / sy) + 2):
            for gx in range(n + 2):
                x0, y0 = gx * sx - (sx / 2 if gy % 2 else 0), gy * sy
                if rng.random() < 0.6:
                    d.polygon([(x0, y0), (x0 + sx, y0), (x0 + sx / 2, y0 + sy)], fill=col(rng.randint(20, 70)))
                if rng.random() < 0.6:
                    d.polygon([(x0 + sx / 2, y0 + sy), (x0 + sx, y0), (x0 + 1.5 * sx, y0 + sy)], fill=col(rng.randint(20, 70)))
    elif style == "circles":
        cx, cy = rng.uniform(0.3, 1.1) * w, rng.uniform(-0.3, 1.3) * h
        r = rng.uniform(0.08, 0.15) * w
        width = max(2, int(rng.uniform(0.01, 0.05) * w))
        while r < 1.6 * w:
            d.ellipse([cx - r, cy - r, cx + r, cy + r], outline=col(rng.randint(40, 110)), width=width)
            r += width * rng.uniform(1.5, 3)
    elif style == "hexes":
        s = rng.uniform(0.04, 0.09) * w
        for gy in range(int(h / (s * 1.5)) + 2):
            for gx in range(int(w / (s * 1.73)) + 2):
                cx = gx * s * 1.732 + (s * 0.866 if gy % 2 else 0)
                cy = gy * s * 1.5
                pts = [(cx + s * math.cos(math.pi / 3 * k + math.pi / 6), cy + s * math.sin(math.pi / 3 * k + math.pi / 6)) for k in range(6)]
                if rng.random() < 0.35:
                    d.polygon(pts, fill=col(rng.randint(25, 70)))
                else:
                    d.polygon(pts, outline=col(rng.randint(25, 60)))
    elif style == "stripes":
        step = rng.uniform(0.03, 0.12) * w
        width = step * rng.uniform(0.2, 0.6)
        ang = rng.uniform(-1.2, 1.2)
        x = -h * 2
        while x < w + h * 2:
            dx = h * math.tan(ang)
            d.polygon([(x, 0), (x + width, 0), (x + width + dx, h), (x + dx, h)], fill=col(rng.randint(25, 70)))
            x += step
    else:
        for _ in range(rng.randint(4, 9)):
            x0, y0 = rng.uniform(-0.2, 1.0) * w, rng.uniform(-0.2, 1.0) * h
            d.rectangle([x0, y0, x0 + rng.uniform(0.1, 0.6) * w, y0 + rng.uniform(0.1, 0.6) * h], fill=col(rng.randint(30, 90)))
    img = Image.alpha_composite(img.convert("RGBA"), over).convert("RGB")
    return to_arr(img)


def design_photo(rng, nrng, w, h, tone, grounds: Grounds):
    pool = grounds.photos or grounds.textures
    if not pool:
        return design_gradient(rng, nrng, w, h, tone)
    src = grounds.load(rng.choice(pool), 1800)
    z = rng.uniform(0.25, 0.8)
    cw_ = min(src.width, src.height * w / h) * z
    ch_ = cw_ * h / w
    x0 = rng.uniform(0, src.width - cw_)
    y0 = rng.uniform(0, src.height - ch_)
    crop = src.resize((w, h), Image.BILINEAR, box=(x0, y0, x0 + cw_, y0 + ch_))
    if rng.random() < 0.5:
        crop = crop.filter(ImageFilter.GaussianBlur(rng.uniform(1, 4) * w / 1100))
    arr = to_arr(crop)
    m = arr.mean(axis=(0, 1), keepdims=True)
    arr = m + (arr - m) * rng.uniform(0.45, 0.75)  # printed photos are softer than the scene
    if rng.random() < 0.5:
        c0, _ = palette(rng, tone)
        a = rng.uniform(0.15, 0.45)
        arr = arr * (1 - a) + c0 * a
    if tone == "dark":
        arr = arr * rng.uniform(0.35, 0.6)
    elif tone == "light":
        arr = 1 - (1 - arr) * rng.uniform(0.35, 0.6)
    return arr


METALS = {
    "silver": (0.76, 0.77, 0.79), "gold": (0.83, 0.69, 0.40), "rose": (0.86, 0.66, 0.60),
    "graphite": (0.33, 0.34, 0.36), "champagne": (0.86, 0.80, 0.66),
}


def design_metal(rng, nrng, w, h, tone):
    name = rng.choice(list(METALS))
    base = np.array(METALS[name], np.float32)
    xs, ys = grid(w, h)
    streak = value_noise(nrng, w, h, 1.0)  # fine noise
    streak = np.asarray(Image.fromarray(streak, "F").resize((max(2, w // 60), h), Image.BILINEAR).resize((w, h), Image.BILINEAR), np.float32)
    ang = rng.uniform(-0.6, 0.6)
    t = (xs * math.cos(ang) + ys * math.sin(ang)) / w
    sheen = 1 + 0.14 * np.cos(2 * math.pi * (t * rng.uniform(0.6, 1.6) + rng.random()))
    arr = base[None, None, :] * (sheen * (0.94 + 0.12 * streak))[..., None]
    return arr


def design_dark(rng, nrng, w, h, tone):
    base = hsv(rng.random(), rng.uniform(0.0, 0.5), rng.uniform(0.05, 0.17))
    arr = np.broadcast_to(base, (h, w, 3)).astype(np.float32).copy()
    style = rng.choice(["carbon", "matte", "ring"])
    xs, ys = grid(w, h)
    if style == "carbon":
        p = max(3, int(w / rng.uniform(90, 160)))
        cell = ((xs // p + ys // p) % 2)
        diag = ((xs + ys) % p) / p
        arr = arr * (0.85 + 0.3 * (cell * diag + (1 - cell) * (1 - diag)))[..., None]
    elif style == "matte":
        n = value_noise(nrng, w, h, w / 6)
        arr = arr * (0.8 + 0.4 * n)[..., None]
    else:
        cx, cy = rng.uniform(0.5, 1.0) * w, rng.uniform(0.0, 1.0) * h
        r = np.sqrt((xs - cx) ** 2 + (ys - cy) ** 2)
        arr = arr * (1 + 0.25 * (np.cos(r / (w * rng.uniform(0.03, 0.08))) > 0.6))[..., None]
    return arr


def design_guilloche(rng, nrng, w, h, tone):
    c0, c1 = palette(rng, tone)
    img = to_img(linear_gradient(w, h, c0, c1, rng.uniform(0, math.pi)))
    d = ImageDraw.Draw(img)
    lc = c0 * (0.8 if tone != "dark" else 1.6)
    lc = rgb8(np.clip(lc, 0, 1))
    n = rng.randint(25, 50)
    lam = rng.uniform(0.3, 0.8) * w
    amp = rng.uniform(0.05, 0.2) * h
    width = max(1, int(w / 900))
    for k in range(n):
        base = -0.2 * h + k * 1.4 * h / n
        ph = k * rng.uniform(0.1, 0.3)
        pts = [(x, base + amp * math.sin(2 * math.pi * x / lam + ph) + 0.3 * amp * math.sin(6 * math.pi * x / lam))
               for x in range(0, w + 20, 12)]
        d.line(pts, fill=lc, width=width)
    return to_arr(img)


def design_split(rng, nrng, w, h, tone):
    c0, _ = palette(rng, tone)
    c1, _ = palette(rng, rng.choice(["dark", "vivid", "light"]))
    xs, ys = grid(w, h)
    a = rng.uniform(-0.8, 0.8)
    b = rng.uniform(0.2, 0.8) * w
    edge = xs - (b + (ys - h / 2) * a + rng.uniform(0, 0.08) * w * np.sin(ys / h * rng.uniform(2, 6)))
    m = np.clip(edge / 3.0, 0, 1)[..., None]
    return c0 * (1 - m) + c1 * m


DESIGNS = [("gradient", 20), ("waves", 15), ("geometric", 15), ("photo", 12), ("metal", 13),
           ("dark", 8), ("guilloche", 8), ("split", 7)]


def make_design(rng, nrng, w, h, grounds, name=None):
    if name is None:
        name = rng.choices([n for n, _ in DESIGNS], [wt for _, wt in DESIGNS])[0]
    tone = rng.choices(["dark", "light", "vivid"], [0.28, 0.45, 0.27])[0]
    if name == "photo":
        arr = design_photo(rng, nrng, w, h, tone, grounds)
    else:
        arr = {"gradient": design_gradient, "waves": design_waves, "geometric": design_geometric,
               "metal": design_metal, "dark": design_dark, "guilloche": design_guilloche,
               "split": design_split}[name](rng, nrng, w, h, tone)
    arr = arr + noise_like(nrng, h, w, 0.008)
    return np.clip(arr, 0, 1).astype(np.float32), name


def region_lum(arr, box) -> float:
    x0, y0, x1, y1 = [int(v) for v in box]
    x0, y0 = max(0, x0), max(0, y0)
    x1, y1 = min(arr.shape[1], max(x0 + 1, x1)), min(arr.shape[0], max(y0 + 1, y1))
    r = arr[y0:y1, x0:x1]
    return float((r[..., 0] * 0.299 + r[..., 1] * 0.587 + r[..., 2] * 0.114).mean())


def band_spread(arr, box) -> float:
    """Spread of the luminance under the number (10th to 90th percentile, coarse)."""
    x0, y0, x1, y1 = [int(v) for v in box]
    x0, y0 = max(0, x0), max(0, y0)
    r = arr[y0:max(y0 + 1, y1):4, x0:max(x0 + 1, x1):4]
    L = r[..., 0] * 0.299 + r[..., 1] * 0.587 + r[..., 2] * 0.114
    lo, hi = np.percentile(L, [10, 90])
    return float(hi - lo)


def settle_band(arr, box, rng):
    """Pushes a mid-tone band to clearly dark or clearly light so the digits read."""
    L = region_lum(arr, box)
    if 0.36 < L < 0.64:
        if rng.random() < 0.35:
            arr = arr * (rng.uniform(0.22, 0.32) / L)
        else:
            arr = 1 - (1 - arr) * ((1 - rng.uniform(0.7, 0.8)) / (1 - L))
    return np.clip(arr, 0, 1)


def ink_for(L, rng):
    if L < 0.5:
        return np.array(rng.choice([(0.96, 0.96, 0.96), (0.9, 0.9, 0.93), (0.86, 0.87, 0.9), (0.95, 0.87, 0.62)]), np.float32)
    return np.array(rng.choice([(0.06, 0.06, 0.07), (0.1, 0.13, 0.3), (0.2, 0.2, 0.22), (0.22, 0.12, 0.06)]), np.float32)


# ----------------------------------------------------------------------------- card parts


def draw_chip(img: Image.Image, box, rng):
    x0, y0, x1, y1 = box
    w, h = int(x1 - x0), int(y1 - y0)
    metal = rng.choice([(0.86, 0.72, 0.42), (0.8, 0.8, 0.8), (0.9, 0.78, 0.5)])
    c0 = np.array(metal, np.float32) * 1.12
    c1 = np.array(metal, np.float32) * 0.78
    grad = to_img(linear_gradient(w, h, np.clip(c0, 0, 1), c1, rng.uniform(0.3, 1.2)))
    m = rounded_alpha(w, h, 0.17 * h)
    img.paste(grad, (int(x0), int(y0)), m)
    d = ImageDraw.Draw(img)
    lc = rgb8(np.array(metal) * 0.55)
    lw = max(1, int(w / 60))
    cx0, cx1 = x0 + 0.33 * w, x0 + 0.67 * w
    cy0, cy1 = y0 + 0.3 * h, y0 + 0.7 * h
    d.rounded_rectangle([cx0, cy0, cx1, cy1], radius=0.08 * h, outline=lc, width=lw)
    for yy in (y0 + 0.33 * h, y0 + 0.67 * h):
        d.line([(x0 + 2, yy), (cx0, yy)], fill=lc, width=lw)
        d.line([(cx1, yy), (x1 - 2, yy)], fill=lc, width=lw)
    d.line([((x0 + x1) / 2, y0 + 2), ((x0 + x1) / 2, cy0)], fill=lc, width=lw)
    d.line([((x0 + x1) / 2, cy1), ((x0 + x1) / 2, y1 - 2)], fill=lc, width=lw)


def draw_contactless(d: ImageDraw.ImageDraw, cx, cy, size, color):
    lw = max(2, int(size / 9))
    for k in range(4):
        r = size * (0.25 + 0.22 * k)
        d.arc([cx - r, cy - r, cx + r, cy + r], -38, 38, fill=color, width=lw)


def draw_brand(img: Image.Image, brand: str, box, dark: bool, fonts: Fonts, rng):
    """A made-up mark for a brand: simple shapes and the brand's word, not its logo."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    over = Image.new("RGBA", img.size, (0, 0, 0, 0))
    d = ImageDraw.Draw(over)
    fg = (245, 245, 245, 255) if dark else (20, 30, 70, 255)
    tf = rng.choice(fonts.text)

    def fit(text, path, maxw, maxh):
        size = int(maxh)
        f = fonts.get(path, size)
        while size > 8 and (f.getlength(text) > maxw or (f.getbbox(text)[3] - f.getbbox(text)[1]) > maxh):
            size = int(size * 0.9)
            f = fonts.get(path, size)
        return f

    if brand == "visa":
        f = fit("VISA", rng.choice(fonts.italic), w, h * 0.75)
        d.text((x1, y1 - h * 0.12), "VISA", font=f, fill=fg, anchor="rs")
        bw = f.getlength("VISA")
        d.polygon([(x1 - bw, y1 - h * 0.05), (x1 - bw * 0.6, y1 - h * 0.05), (x1 - bw * 0.66, y1)], fill=rgb8(hsv(rng.random(), 0.7, 0.9)) + (255,))
    elif brand == "mastercard":
        r = min(h * 0.36, w * 0.2)
        cy = y0 + r + 2
        cx = x1 - 3.2 * r
        hue = rng.random()
        a = rgb8(hsv(hue, 0.8, 0.85)) + (235,)
        b = rgb8(hsv(hue + rng.uniform(0.25, 0.45), 0.8, 0.9)) + (205,)
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=a)
        d.ellipse([cx + 0.6 * r, cy - r, cx + 2.6 * r, cy + r], fill=b)
        f = fit("mastercard", tf, 3.8 * r, h * 0.22)
        d.text((cx + 0.8 * r, y1), "mastercard", font=f, fill=fg, anchor="ms")
    elif brand == "amex":
        s = min(w * 0.6, h)
        bx0, by0 = x1 - s, y1 - s
        fill = rgb8(hsv(0.58 + rng.uniform(-0.04, 0.04), 0.75, 0.75)) + (255,)
        d.rectangle([bx0, by0, x1, y1], fill=fill)
        f = fit("AMERICAN", rng.choice(fonts.text), s * 0.86, s * 0.22)
        d.text((bx0 + s / 2, by0 + s * 0.45), "AMERICAN", font=f, fill=(255, 255, 255, 255), anchor="ms")
        d.text((bx0 + s / 2, by0 + s * 0.75), "EXPRESS", font=f, fill=(255, 255, 255, 255), anchor="ms")
    elif brand == "discover":
        f = fit("DISCOVER", tf, w, h * 0.42)
        tw = f.getlength("DISCOVER")
        x = x1 - tw
        d.text((x, y1 - h * 0.2), "DISC", font=f, fill=fg, anchor="ls")
        xo = x + f.getlength("DISC")
        ow = f.getlength("O")
        bb = f.getbbox("O", anchor="ls")
        d.ellipse([xo, y1 - h * 0.2 + bb[1], xo + ow, y1 - h * 0.2 + bb[3]], fill=(240, 120, 30, 255))
        d.text((xo + ow, y1 - h * 0.2), "VER", font=f, fill=fg, anchor="ls")
    elif brand == "diners":
        r = h * 0.34
        cx, cy = x1 - r - 2, y0 + r
        d.ellipse([cx - r, cy - r, cx + r, cy + r], outline=fg, width=max(2, int(r / 7)))
        d.arc([cx - 0.9 * r, cy - 0.75 * r, cx + 0.1 * r, cy + 0.75 * r], 90, 270, fill=fg, width=max(2, int(r / 7)))
        d.arc([cx - 0.1 * r, cy - 0.75 * r, cx + 0.9 * r, cy + 0.75 * r], 270, 90, fill=fg, width=max(2, int(r / 7)))
        f = fit("Diners Club", tf, w, h * 0.22)
        d.text((x1, y1), "Diners Club", font=f, fill=fg, anchor="rs")
    elif brand == "jcb":
        bw = min(w / 3.3, h * 0.5)
        bh = bw * 1.35
        cols = [(20, 60, 160), (200, 30, 50), (20, 140, 70)]
        rng.shuffle(cols)
        f = fit("B", rng.choice(fonts.text), bw * 0.8, bh * 0.5)
        for k, ch in enumerate("JCB"):
            bx = x1 - (3 - k) * (bw * 1.05)
            d.rounded_rectangle([bx, y1 - bh, bx + bw, y1], radius=bw * 0.25, fill=cols[k] + (255,))
            d.text((bx + bw / 2, y1 - bh * 0.28), ch, font=f, fill=(255, 255, 255, 255), anchor="ms")
    elif brand == "unionpay":
        bw, bh = min(w / 3.0, h * 0.42), h * 0.8
        cols = [(200, 30, 40), (20, 50, 130), (0, 120, 120)]
        sk = bw * 0.25
        for k in range(3):
            bx = x1 - (3 - k) * bw * 0.9 - sk
            d.polygon([(bx + sk, y1 - bh), (bx + bw + sk, y1 - bh), (bx + bw, y1), (bx, y1)], fill=cols[k] + (255,))
        f = fit("UnionPay", rng.choice(fonts.italic), bw * 2.6, bh * 0.28)
        d.text((x1 - bw * 1.35 - sk / 2, y1 - bh * 0.38), "UnionPay", font=f, fill=(255, 255, 255, 255), anchor="ms")
    img.alpha_composite(over)


# ----------------------------------------------------------------------------- drawing text


def layout_run(groups, font, tracking, gap):
    pos, x = [], 0.0
    for gi, g in enumerate(groups):
        for ch in g:
            pos.append((ch, x))
            x += font.getlength(ch) + tracking
        x -= tracking
        if gi < len(groups) - 1:
            x += gap
    return pos, x


def draw_run(mask: Image.Image, pos, font, x0, baseline):
    d = ImageDraw.Draw(mask)
    for ch, x in pos:
        d.text((x0 + x, baseline), ch, font=font, fill=255, anchor="ls")


def text_height(font, text="0123456789"):
    bb = font.getbbox(text, anchor="ls")
    return -bb[1]


def emboss(arr, m, rng, u, tipping, light_angle):
    """Raised characters: highlight on the side facing the light, shadow on the other,
    a metallic (tipped) face or the card's own colour (untipped)."""
    r = rng.uniform(1.4, 2.4) * u
    b = blur_mask(m, r)
    gy, gx = np.gradient(b)
    lx, ly = math.cos(light_angle), math.sin(light_angle)
    shade = -(gx * lx + gy * ly) * (2.5 * r)
    shade = np.clip(shade, -1, 1)
    hi = np.clip(shade, 0, 1)[..., None]
    lo = np.clip(-shade, 0, 1)[..., None]
    k_hi, k_lo = rng.uniform(0.55, 0.85), rng.uniform(0.55, 0.8)
    # cast shadow away from the light
    dx, dy = int(round(-lx * 2.5 * u)), int(round(-ly * 2.5 * u))
    cast = shift(blur_mask(m, 2 * r), dy, dx)
    arr = arr * (1 - 0.35 * (cast * (1 - m))[..., None])
    face = blur_mask(m, 0.6 * u)[..., None]
    if tipping:
        base = np.array({"gold": (0.9, 0.76, 0.42), "silver": (0.86, 0.87, 0.9)}[tipping], np.float32)
        h = arr.shape[0]
        ys = np.linspace(0, 1, h, dtype=np.float32)[:, None, None]
        col = base * (0.85 + 0.25 * np.cos(ys * rng.uniform(14, 30) + rng.random() * 6))
        inner = np.clip(face * 1.25 - 0.25, 0, 1)
        arr = arr * (1 - inner) + np.clip(col, 0, 1) * inner
    else:
        L = float(arr.mean())
        arr = arr * (1 + (0.1 if L < 0.5 else -0.05) * face)
    arr = arr + (1 - arr) * hi * k_hi
    arr = arr * (1 - lo * k_lo)
    return np.clip(arr, 0, 1)


def add_glare(arr, rng, centre, size, u):
    h, w = arr.shape[:2]
    xs, ys = grid(w, h)
    cx, cy = centre
    a = size * rng.uniform(0.8, 1.4)
    b = a * rng.uniform(0.25, 0.7)
    ang = rng.uniform(0, math.pi)
    dx, dy = xs - cx, ys - cy
    xr = dx * math.cos(ang) + dy * math.sin(ang)
    yr = -dx * math.sin(ang) + dy * math.cos(ang)
    d2 = (xr / a) ** 2 + (yr / b) ** 2
    g = np.clip(1.25 * np.exp(-d2 * 1.6), 0, 1) * rng.uniform(0.6, 0.85)
    tint = np.array([1.0, rng.uniform(0.95, 1.0), rng.uniform(0.88, 1.0)], np.float32)
    return 1 - (1 - arr) * (1 - g[..., None] * tint)


def add_line_art(img: Image.Image, rng, band, u):
    x0, y0, x1, y1 = band
    d = ImageDraw.Draw(img, "RGBA")
    w = img.width
    for _ in range(rng.randint(2, 5)):
        col = rgb8(hsv(rng.random(), rng.uniform(0.6, 1.0), rng.uniform(0.6, 1.0))) + (rng.randint(170, 240),)
        lw = max(1, int(round(rng.uniform(1.0, 2.6) * u)))
        kind = rng.random()
        cy = rng.uniform(y0, y1)
        amp = rng.uniform(0.3, 1.2) * (y1 - y0)
        lam = rng.uniform(0.15, 0.6) * w
        ph = rng.uniform(0, 6.3)
        if kind < 0.7:
            pts = [(x, cy + amp * math.sin(2 * math.pi * x / lam + ph)) for x in range(-10, w + 10, 6)]
        else:
            slope = rng.uniform(-0.5, 0.5)
            pts = [(x, cy + slope * (x - w / 2) + 0.2 * amp * math.sin(x / lam * 6.28)) for x in range(-10, w + 10, 6)]
        d.line(pts, fill=col, width=lw, joint="curve")


# ----------------------------------------------------------------------------- card front


def render_front(rng, nrng, cw, spec, fonts: Fonts, grounds: Grounds):
    """Returns (RGB array of the card, info). spec holds digits, grouping, brand, font
    family index, weight, embossed, tipping, expiry, valid_from, holder, and flags."""
    ch = int(round(cw * 53.98 / 85.60))
    u = cw / 1100.0
    digits, groups = spec["digits"], split_groups(spec["digits"], spec["grouping"])
    _, reg, bold = fonts.number[spec["font_index"]]
    fpath = bold if spec["weight"] == "bold" else reg

    # number size and place
    tracking = rng.uniform(0.0, 0.12) if not spec["embossed"] else rng.uniform(0.05, 0.16)
    gapf = rng.uniform(0.45, 1.1)
    f100 = fonts.get(fpath, 100)
    _, w100 = layout_run(groups, f100, tracking * 100, gapf * 100)
    n = len(digits)
    target = cw * (rng.uniform(0.66, 0.84) if n <= 16 else rng.uniform(0.78, 0.88))
    size = 100 * target / w100
    dh100 = text_height(f100)
    size = max(min(size, 0.098 * ch * 100 / dh100), 0.06 * ch * 100 / dh100)
    font = fonts.get(fpath, size)
    pos, width = layout_run(groups, font, tracking * size, gapf * size)
    if width > 0.9 * cw:
        size *= 0.9 * cw / width
        font = fonts.get(fpath, size)
        pos, width = layout_run(groups, font, tracking * size, gapf * size)
    dh = text_height(font)
    if rng.random() < 0.3:
        nx = (cw - width) / 2
    else:
        nx = rng.uniform(0.06, 0.11) * cw
        nx = min(nx, cw - width - 0.04 * cw)
    top_lo, top_hi = (0.47, 0.55) if spec["brand"] == "amex" else (0.52, 0.6)
    ntop = rng.uniform(top_lo, top_hi) * ch
    nbase = ntop + dh
    number_box = (nx, ntop, nx + width, nbase)

    # expiry row
    date_size = size * rng.uniform(0.56, 0.72)
    dfont = fonts.get(fpath, date_size)
    ddh = text_height(dfont)
    lab_path = rng.choice(fonts.text)
    lab_font = fonts.get(lab_path, max(9 * u, ddh * rng.uniform(0.42, 0.55) / 0.72))
    drow_top = nbase + rng.uniform(0.045, 0.085) * ch
    dbase = drow_top + ddh
    label_style = rng.choices(["stack", "inline", "above", "none"], [0.45, 0.3, 0.15, 0.1])[0]
    label_word = rng.choice(["VALID THRU", "GOOD THRU", "EXPIRES END", "EXP", "VALID THRU", "EXPIRES"])

    band = (number_box[0] - 0.02 * cw, ntop - 0.02 * ch, number_box[2] + 0.02 * cw, dbase + 0.02 * ch)
    for attempt in range(4):
        design, design_name = make_design(rng, nrng, cw, ch, grounds, spec.get("design") if attempt < 3 else "gradient")
        design = settle_band(design, band, rng)
        if band_spread(design, band) < 0.4:
            break
    band_L = region_lum(design, band)
    ink = ink_for(band_L, rng)
    dark = band_L < 0.5

    img = to_img(design).convert("RGBA")
    d = ImageDraw.Draw(img)

    # chip and contactless mark, above the number
    chip_w = rng.uniform(0.115, 0.14) * cw
    chip_h = chip_w * 0.77
    chip_x = rng.uniform(0.07, 0.12) * cw
    chip_y = min(rng.uniform(0.27, 0.38) * ch, ntop - 0.05 * ch - chip_h)
    if rng.random() < 0.93:
        draw_chip(img, (chip_x, chip_y, chip_x + chip_w, chip_y + chip_h), rng)
    if rng.random() < 0.6:
        cl_col = rgb8(ink) if rng.random() < 0.7 else rgb8(ink * 0.7 + 0.15)
        draw_contactless(d, chip_x + chip_w + 0.07 * cw, chip_y + chip_h / 2, chip_h * 0.55, cl_col)

    # bank name, tier
    top_L = region_lum(design, (0, 0, cw, 0.25 * ch))
    top_ink = rgb8(ink_for(top_L, rng))
    bpath = rng.choice(fonts.text)
    bname = bank_name(rng)
    if rng.random() < 0.4:
        bname = bname.upper()
    bfont = fonts.get(bpath, rng.uniform(0.06, 0.09) * ch)
    while bfont.getlength(bname) > 0.6 * cw and bfont.size > 10:
        bfont = fonts.get(bpath, bfont.size * 0.9)
    by = rng.uniform(0.07, 0.12) * ch
    if rng.random() < 0.6:
        d.text((rng.uniform(0.06, 0.09) * cw, by), bname, font=bfont, fill=top_ink, anchor="lt")
        tier_x, tier_anchor = cw * rng.uniform(0.91, 0.94), "rt"
    else:
        d.text((cw * rng.uniform(0.91, 0.94), by), bname, font=bfont, fill=top_ink, anchor="rt")
        tier_x, tier_anchor = rng.uniform(0.06, 0.09) * cw, "lt"
    if rng.random() < 0.5:
        tfont = fonts.get(rng.choice(fonts.text), rng.uniform(0.035, 0.05) * ch)
        d.text((tier_x, by + rng.uniform(0.0, 0.12) * ch), rng.choice(TIERS), font=tfont, fill=top_ink, anchor=tier_anchor)

    # brand mark: bottom right mostly, sometimes top right
    bw_, bh_ = rng.uniform(0.17, 0.23) * cw, rng.uniform(0.12, 0.16) * ch
    if rng.random() < 0.8:
        bx1, by1 = cw * rng.uniform(0.92, 0.95), ch * rng.uniform(0.9, 0.94)
    else:
        bx1, by1 = cw * rng.uniform(0.92, 0.95), ch * rng.uniform(0.4, 0.46)
    brand_box = (bx1 - bw_, by1 - bh_, bx1, by1)
    mark_L = region_lum(design, brand_box)
    draw_brand(img, spec["brand"], brand_box, mark_L < 0.5, fonts, rng)

    # masks for what carries meaning (number, date, holder) and for flat printed text
    num_mask = Image.new("L", (cw, ch), 0)
    draw_run(num_mask, pos, font, nx, nbase)
    date_mask = Image.new("L", (cw, ch), 0)
    label_layer = Image.new("L", (cw, ch), 0)
    ld = ImageDraw.Draw(label_layer)
    date_box = None
    if spec["expiry"] is not None:
        def date_text(my):
            return f"{my[0]:02d}/{my[1] % 100:02d}"

        items = []
        if spec["valid_from"] is not None:
            items.append(("VALID FROM", spec["valid_from"]))
        items.append((label_word, spec["expiry"]))
        # widths
        def label_width(word):
            if label_style == "none":
                return 0.0
            if label_style in ("stack", "above"):
                parts = word.split(" ", 1)
                return max(lab_font.getlength(p) for p in parts) + 0.012 * cw
            return lab_font.getlength(word) + 0.012 * cw
        total = 0.0
        for word, my in items:
            total += label_width(word) + dfont.getlength(date_text(my))
        total += (len(items) - 1) * 0.06 * cw
        where = rng.random()
        if where < 0.4:
            x = cw / 2 - total / 2
        elif where < 0.7:
            x = nx + rng.uniform(0.2, 0.45) * width
        else:
            x = nx
        x = max(0.05 * cw, min(x, 0.74 * cw - total))
        xs0 = x
        for word, my in items:
            if label_style == "stack" or (label_style == "above"):
                parts = word.split(" ", 1)
                lh = text_height(lab_font, "AEX")
                if len(parts) == 2:
                    ld.text((x, dbase - ddh / 2 - 0.15 * lh), parts[0], font=lab_font, fill=255, anchor="ls")
                    ld.text((x, dbase - ddh / 2 + 1.15 * lh), parts[1], font=lab_font, fill=255, anchor="ls")
                else:
                    ld.text((x, dbase - ddh / 2 + lh / 2), parts[0], font=lab_font, fill=255, anchor="ls")
                x += label_width(word)
            elif label_style == "inline":
                ld.text((x, dbase), word, font=lab_font, fill=255, anchor="ls")
                x += label_width(word)
            dt = date_text(my)
            if label_style == "above":
                mf = fonts.get(lab_path, lab_font.size * 0.8)
                ld.text((x + dfont.getlength(dt) / 2, dbase - ddh - 0.012 * ch), "MONTH/YEAR", font=mf, fill=255, anchor="ms")
            ImageDraw.Draw(date_mask).text((x, dbase), dt, font=dfont, fill=255, anchor="ls")
            x += dfont.getlength(dt) + 0.06 * cw
        date_box = (xs0, dbase - ddh, x, dbase)

    holder_mask = Image.new("L", (cw, ch), 0)
    if spec["holder"]:
        if spec["embossed"] or rng.random() < 0.4:
            hpath = fpath
        else:
            hpath = rng.choice(fonts.text)
        hfont = fonts.get(hpath, max(10 * u, 0.052 * ch * rng.uniform(0.85, 1.15) / 0.72))
        while hfont.getlength(spec["holder"]) > 0.62 * cw and hfont.size > 10:
            hfont = fonts.get(hpath, hfont.size * 0.92)
        hy = min(ch * rng.uniform(0.86, 0.92), max(dbase + 0.12 * ch, 0.84 * ch))
        ImageDraw.Draw(holder_mask).text((rng.uniform(0.06, 0.1) * cw, hy), spec["holder"], font=hfont, fill=255, anchor="ls")

    if spec["embossed"] and rng.random() < 0.3:  # the first group printed small under the number
        sf = fonts.get(rng.choice(fonts.text), max(9 * u, 0.028 * ch / 0.72))
        ld.text((nx, nbase + 0.04 * ch), digits[:4], font=sf, fill=255, anchor="lt")

    arr = to_arr(img)
    lab = mask_arr(label_layer)[..., None]
    lab_ink = ink * 0.85 + (0.15 if dark else 0.0)
    arr = arr * (1 - lab) + lab_ink * lab

    nm, dm, hm = mask_arr(num_mask), mask_arr(date_mask), mask_arr(holder_mask)
    light_angle = math.radians(rng.uniform(200, 250))  # light from the upper left
    if spec["embossed"]:
        allm = np.maximum(np.maximum(nm, dm), hm)
        arr = emboss(arr, allm, rng, u, spec["tipping"], light_angle)
    else:
        m = np.maximum(np.maximum(nm, dm), hm)[..., None]
        if rng.random() < 0.2:  # a faint printed shadow under the digits
            off = max(1, int(round(1.5 * u)))
            sh = shift(m, off, off) * (1 - m)
            arr = arr * (1 - 0.35 * sh) + (0.0 if not dark else 0.0) * sh
        if rng.random() < 0.25:  # foil-like ink that shifts along the line
            foil = linear_gradient(cw, ch, ink * 0.85, np.clip(ink * 1.1 + 0.05, 0, 1), rng.uniform(0, 3.14))
            arr = arr * (1 - m) + foil * m
        else:
            arr = arr * (1 - m) + ink * m

    if spec["line_art"]:
        im2 = to_img(arr)
        add_line_art(im2, rng, (0, ntop - 0.03 * ch, cw, nbase + 0.03 * ch), u)
        arr = to_arr(im2)

    if spec.get("specimen"):
        im2 = to_img(arr).convert("RGBA")
        over = Image.new("RGBA", im2.size, (0, 0, 0, 0))
        od = ImageDraw.Draw(over)
        word = rng.choice(["SPECIMEN", "SAMPLE", "SPECIMEN", "VOID - SAMPLE"])
        if rng.random() < 0.5:
            sf = fonts.get(rng.choice(fonts.text), 0.1 * ch)
            od.text((cw * 0.5, ntop - 0.07 * ch), word, font=sf, fill=(200, 30, 30, 150), anchor="ms")
        else:
            sf = fonts.get(rng.choice(fonts.text), 0.05 * ch)
            od.text((cw * 0.92, ch * 0.24), word, font=sf, fill=(200, 30, 30, 210), anchor="rt")
        im2.alpha_composite(over)
        arr = to_arr(im2)

    if spec["glare"]:
        if rng.random() < 0.55:  # over part of the number
            gx = rng.uniform(number_box[0], number_box[2])
            gy = rng.uniform(ntop, nbase)
            gsize = rng.uniform(0.07, 0.14) * cw
        else:
            gx, gy = rng.uniform(0.1, 0.9) * cw, rng.uniform(0.05, 0.5) * ch
            gsize = rng.uniform(0.12, 0.3) * cw
        arr = add_glare(arr, rng, (gx, gy), gsize, u)

    info = {"ch": ch, "number_box": number_box, "date_box": date_box, "dark": dark,
            "design": design_name, "ink_light": lum(ink) > 0.5, "band_L": band_L}
    return arr, info


# ----------------------------------------------------------------------------- card back


def back_lines(rng, bank):
    phone_a = f"1-800-555-{rng.randint(100, 199):04d}"
    phone_b = f"+44 20 7946 {rng.randint(0, 999):04d}"
    site = "www." + re.sub(r"[^a-z]", "", bank.lower())[:14] + ".example"
    pool = [
        f"This card is property of {bank} and must be returned on request.",
        f"Lost or stolen? Call {phone_a} (24 hours).",
        f"Outside the country call collect {phone_b}.",
        "Use of this card is subject to the cardholder agreement.",
        f"Customer service: {phone_a}   {site}",
        "If found, please return to any branch or mail to the address below.",
        f"PO Box {rng.randint(100, 9999)}, Springfield {rng.randint(10000, 99999)}",
        "Not transferable. Authorized signature required.",
        f"Issued by {bank} under license.",
    ]
    rng.shuffle(pool)
    return pool[:rng.randint(3, 6)]


def render_back(rng, nrng, cw, brand, fonts: Fonts, grounds: Grounds):
    ch = int(round(cw * 53.98 / 85.60))
    u = cw / 1100.0
    name = rng.choice(["gradient", "metal", "guilloche", "dark", "geometric"])
    design, _ = make_design(rng, nrng, cw, ch, grounds, name)
    L = region_lum(design, (0, 0, cw, ch))
    ink = rgb8(ink_for(L, rng))
    img = to_img(design)
    d = ImageDraw.Draw(img)
    # magnetic stripe
    sy = rng.uniform(0.07, 0.12) * ch
    sh = rng.uniform(0.17, 0.21) * ch
    sc = rng.choice([(0.07, 0.07, 0.08), (0.18, 0.13, 0.09), (0.12, 0.12, 0.14)])
    stripe = to_img(linear_gradient(cw, int(sh), np.array(sc) * 1.4, np.array(sc), 1.5708))
    img.paste(stripe, (0, int(sy)))
    # signature panel and security code
    py = sy + sh + rng.uniform(0.07, 0.12) * ch
    ph = rng.uniform(0.11, 0.14) * ch
    px0, px1 = 0.06 * cw, rng.uniform(0.62, 0.72) * cw
    d.rectangle([px0, py, px1, py + ph], fill=(246, 244, 236))
    stripe_col = rgb8(hsv(rng.random(), 0.25, 0.9))
    step = max(4, int(9 * u))
    for x in range(int(px0) - int(ph), int(px1), step):
        d.line([(max(px0, x), py + (max(px0, x) - x)), (min(px1, x + ph), py + ph - (x + ph - min(px1, x + ph)))],
               fill=stripe_col, width=max(1, int(2 * u)))
    small = fonts.get(rng.choice(fonts.text), max(8, 0.028 * ch / 0.72))
    d.text((px0, py - 0.012 * ch), "AUTHORIZED SIGNATURE - NOT VALID UNLESS SIGNED", font=small, fill=ink, anchor="ls")
    cvv = f"{rng.randint(100, 999)}"
    bx0 = px1 + 0.02 * cw
    d.rectangle([bx0, py, bx0 + 0.14 * cw, py + ph], fill=(255, 255, 255))
    cf = fonts.get(rng.choice(fonts.italic), ph * 0.55)
    d.text((bx0 + 0.07 * cw, py + ph * 0.72), cvv, font=cf, fill=(20, 20, 20), anchor="ms")
    lines = ["AUTHORIZED SIGNATURE - NOT VALID UNLESS SIGNED", cvv]
    if rng.random() < 0.5:  # a signature scribble
        pts = []
        x = px0 + 0.05 * cw
        for k in range(rng.randint(20, 40)):
            x += rng.uniform(3, 12) * u
            pts.append((x, py + ph * 0.5 + rng.uniform(-0.35, 0.35) * ph))
        d.line(pts, fill=(20, 40, 140), width=max(1, int(2 * u)), joint="curve")
    # small print
    bank = bank_name(rng)
    pf = fonts.get(rng.choice(fonts.text), max(8, 0.032 * ch / 0.72))
    y = py + ph + rng.uniform(0.08, 0.11) * ch
    for line in back_lines(rng, bank):
        while pf.getlength(line) > 0.86 * cw and pf.size > 8:
            pf = fonts.get(pf.path, pf.size - 1)
        d.text((0.06 * cw, y), line, font=pf, fill=ink, anchor="ls")
        lines.append(line)
        y += pf.size * 1.35
        if y > 0.8 * ch:
            break
    if rng.random() < 0.4:  # hologram patch
        hx, hy = 0.06 * cw, 0.82 * ch
        holo = linear_gradient(int(0.16 * cw), int(0.12 * ch), hsv(rng.random(), 0.4, 0.95), hsv(rng.random(), 0.5, 0.8), 0.7)
        img.paste(to_img(holo), (int(hx), int(hy)))
    brand_box = (0.76 * cw, 0.8 * ch, 0.94 * cw, 0.93 * ch)
    img = img.convert("RGBA")
    if brand:
        draw_brand(img, brand, brand_box, region_lum(design, brand_box) < 0.5, fonts, rng)
    assert not shows_card_number(lines), lines
    return to_arr(img), {"ch": ch, "number_box": None, "lines": lines}


# ----------------------------------------------------------------------------- receipt


def render_receipt(rng, width, fonts: Fonts):
    lines = []
    shop = rng.choice(SHOPS)
    lines += [shop, f"{rng.randint(1, 999)} {rng.choice(BANK_A).upper()} STREET", f"TEL 555-{rng.randint(100, 199):04d}", ""]
    lines.append(f"20{rng.randint(24, 26)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}  {rng.randint(7, 21):02d}:{rng.randint(0, 59):02d}")
    lines.append("-" * 28)
    total = 0
    for _ in range(rng.randint(3, 7)):
        cents = rng.randint(99, 2999)
        total += cents
        lines.append(f"{rng.choice(ITEMS):<18}{cents // 100:>5}.{cents % 100:02d}")
    lines.append("-" * 28)
    lines.append(f"{'TOTAL':<18}{total // 100:>5}.{total % 100:02d}")
    lines.append("")
    brand = rng.choice(["VISA", "MASTERCARD", "AMEX", "DEBIT"])
    lines.append(f"{brand} CREDIT" if brand != "DEBIT" else "DEBIT CARD")
    lines.append(f"CARD  ************{rng.randint(0, 9999):04d}")
    lines.append(f"AUTH  {rng.randint(0, 999999):06d}")
    while True:
        ref = "".join(str(rng.randint(0, 9)) for _ in range(16))
        shown = " ".join(ref[i:i + 4] for i in range(0, 16, 4))
        if not shows_card_number([shown]):
            break
    lines.append(f"REF {shown}")
    lines.append(f"TERMINAL {rng.randint(100, 99999):05d}")
    lines.append("")
    lines.append("THANK YOU - PLEASE COME AGAIN")
    assert not shows_card_number(lines), lines
    font = fonts.get(rng.choice(fonts.mono), width / 19)
    while font.getlength("M" * 30) > width * 0.94 and font.size > 8:
        font = fonts.get(font.path, font.size - 1)
    lh = font.size * 1.3
    height = int(lh * (len(lines) + 3))
    paper = np.array(rng.choice([(0.97, 0.96, 0.93), (0.99, 0.99, 0.98), (0.95, 0.93, 0.86)]), np.float32)
    img = to_img(np.broadcast_to(paper, (height, width, 3)).copy())
    d = ImageDraw.Draw(img)
    ink = rgb8(rng.choice([(0.15, 0.15, 0.17), (0.3, 0.3, 0.35), (0.25, 0.2, 0.35)]))
    for k, line in enumerate(lines):
        d.text((width * 0.04, lh * (k + 1.5)), line, font=font, fill=ink, anchor="ls")
    alpha = Image.new("L", (width, height), 255)
    ad = ImageDraw.Draw(alpha)
    tooth = max(4, width // 40)
    for x in range(0, width, tooth):  # torn bottom edge
        ad.polygon([(x, height), (x + tooth / 2, height - tooth * 0.8), (x + tooth, height)], fill=0)
    rgba = img.convert("RGBA")
    rgba.putalpha(alpha)
    return rgba, lines


# ----------------------------------------------------------------------------- grounds


def ground_photo(rng, grounds: Grounds, w, h):
    src = grounds.load(rng.choice(grounds.photos), 1800)
    z = rng.uniform(0.45, 1.0)
    cw_ = min(src.width, src.height * w / h) * z
    ch_ = cw_ * h / w
    x0, y0 = rng.uniform(0, src.width - cw_), rng.uniform(0, src.height - ch_)
    im = src.resize((w, h), Image.BILINEAR, box=(x0, y0, x0 + cw_, y0 + ch_))
    if rng.random() < 0.5:
        im = im.transpose(Image.FLIP_LEFT_RIGHT)
    if rng.random() < 0.35:  # shallow depth of field
        im = im.filter(ImageFilter.GaussianBlur(rng.uniform(2, 6) * max(w, h) / 1200))
    return to_arr(im)


def ground_texture(rng, grounds: Grounds, w, h):
    src = grounds.load(rng.choice(grounds.textures), 1024)
    s = rng.uniform(1.0, 2.2) * max(w, h) / 1400
    tw, th = max(8, int(src.width * s)), max(8, int(src.height * s))
    tile = src.resize((tw, th), Image.BILINEAR)
    out = Image.new("RGB", (w, h))
    for y in range(0, h, th):
        for x in range(0, w, tw):
            out.paste(tile, (x, y))
    arr = to_arr(out)
    if rng.random() < 0.4:
        arr = arr * np.array([rng.uniform(0.8, 1.05) for _ in range(3)], np.float32)
    return arr


def ground_wood(rng, nrng, fw, fh):
    """Planks with grain running along x: fine streaks, warped growth rings, seams.
    Drawn at half size and enlarged."""
    w, h = max(8, fw // 2), max(8, fh // 2)
    xs, ys = grid(w, h)
    period = rng.uniform(7, 20) * max(w, h) / 700
    warp = value_noise(nrng, w, h, max(w, h) / rng.uniform(1.5, 3)) * period * rng.uniform(1.5, 3.5)
    rings = 0.5 + 0.5 * np.sin(2 * math.pi * (ys + warp + 0.02 * xs * rng.uniform(-1, 1)) / period)
    rings = rings ** rng.uniform(3, 6)
    small = nrng.random((max(2, h), max(2, w // 45)), dtype=np.float32)
    fibre = np.asarray(Image.fromarray(small, "F").resize((w, h), Image.BILINEAR), np.float32)
    plank = max(w, h) * rng.uniform(0.12, 0.25)
    seam = (((ys / plank) % 1.0) < (1.5 / plank)).astype(np.float32)
    plank_tone = 0.9 + 0.2 * ((np.floor(ys / plank) * 0.618) % 1.0)
    c0 = np.array(rng.choice([(0.62, 0.42, 0.24), (0.76, 0.6, 0.4), (0.42, 0.27, 0.15), (0.84, 0.72, 0.54),
                              (0.55, 0.33, 0.22)]), np.float32)
    c1 = c0 * rng.uniform(0.55, 0.75)
    t = np.clip(rings * 0.75 + fibre * 0.35, 0, 1)[..., None]
    arr = (c0 * (1 - t) + c1 * t) * plank_tone[..., None]
    arr = arr * (1 - 0.6 * seam[..., None])
    if rng.random() < 0.5:  # grain along y instead
        arr = np.ascontiguousarray(np.transpose(arr, (1, 0, 2)))
    img = Image.fromarray((np.clip(arr, 0, 1) * 255).astype(np.uint8)).resize((fw, fh), Image.BICUBIC)
    return np.asarray(img, np.float32) / 255


def ground_fabric(rng, nrng, w, h):
    xs, ys = grid(w, h)
    p = rng.uniform(3, 7) * max(w, h) / 1200
    weave = 0.5 + 0.25 * np.sin(xs * 2 * math.pi / p) * np.sin(ys * 2 * math.pi / p) + 0.25 * np.sin((xs + ys) * math.pi / p)
    base = hsv(rng.random(), rng.uniform(0.2, 0.7), rng.uniform(0.3, 0.8))
    arr = base * (0.8 + 0.3 * weave[..., None])
    if rng.random() < 0.5:  # plaid
        c2 = hsv(rng.random(), 0.6, rng.uniform(0.3, 0.8))
        s = rng.uniform(0.05, 0.12) * max(w, h)
        bx = ((xs / s) % 1.0 < 0.3).astype(np.float32)
        by = ((ys / s) % 1.0 < 0.3).astype(np.float32)
        m = (0.45 * (bx + by))[..., None]
        arr = arr * (1 - m) + c2 * (0.8 + 0.3 * weave[..., None]) * m
    arr = arr * (0.9 + 0.2 * value_noise(nrng, w, h, max(w, h) / 4))[..., None]
    return arr


def ground_desk(rng, nrng, w, h, fonts: Fonts, busy: bool):
    base = np.array(rng.choice([(0.92, 0.92, 0.9), (0.25, 0.25, 0.27), (0.6, 0.58, 0.55), (0.82, 0.78, 0.7),
                                (0.12, 0.12, 0.13), (0.45, 0.5, 0.55)]), np.float32)
    arr = base * (0.9 + 0.2 * value_noise(nrng, w, h, max(w, h) / 3))[..., None]
    img = to_img(arr).convert("RGBA")
    d = ImageDraw.Draw(img, "RGBA")
    s = max(w, h)
    for _ in range(rng.randint(8, 20) if busy else rng.randint(1, 4)):
        kind = rng.random()
        x, y = rng.uniform(-0.1, 1.0) * w, rng.uniform(-0.1, 1.0) * h
        col = rgb8(hsv(rng.random(), rng.uniform(0.0, 0.9), rng.uniform(0.2, 1.0))) + (255,)
        if kind < 0.3:  # sheet of paper with lines
            pw, ph = rng.uniform(0.2, 0.45) * s, rng.uniform(0.25, 0.55) * s
            ang = rng.uniform(-0.5, 0.5)
            sheet = Image.new("RGBA", (int(pw), int(ph)), (248, 247, 240, 255))
            sd = ImageDraw.Draw(sheet)
            for ly in range(int(ph * 0.1), int(ph), max(6, int(ph / 28))):
                sd.line([(pw * 0.05, ly), (pw * rng.uniform(0.5, 0.95), ly)], fill=(120, 120, 130, 255), width=max(1, int(s / 900)))
            sheet = sheet.rotate(math.degrees(ang), expand=True, resample=Image.BICUBIC)
            img.paste(sheet, (int(x), int(y)), sheet)
        elif kind < 0.5:  # pen
            L, th = rng.uniform(0.15, 0.3) * s, rng.uniform(0.01, 0.018) * s
            ang = rng.uniform(0, math.pi)
            x2, y2 = x + L * math.cos(ang), y + L * math.sin(ang)
            d.line([(x, y), (x2, y2)], fill=col, width=int(th))
            d.line([(x2, y2), (x2 + 0.06 * L * math.cos(ang), y2 + 0.06 * L * math.sin(ang))], fill=(200, 200, 205, 255), width=int(th * 0.6))
        elif kind < 0.65:  # coin
            r = rng.uniform(0.025, 0.045) * s
            d.ellipse([x - r, y - r, x + r, y + r], fill=rgb8((0.75, 0.65, 0.4) if rng.random() < 0.5 else (0.75, 0.75, 0.77)) + (255,),
                      outline=(90, 80, 60, 255), width=max(1, int(r / 12)))
        elif kind < 0.8:  # sticky note / block
            bw, bh = rng.uniform(0.06, 0.18) * s, rng.uniform(0.06, 0.18) * s
            d.rectangle([x, y, x + bw, y + bh], fill=col)
        else:  # words (letters only)
            f = fonts.get(rng.choice(fonts.text), rng.uniform(0.02, 0.05) * s)
            word = " ".join(rng.choice(ITEMS + BANK_A).title() for _ in range(rng.randint(1, 3)))
            d.text((x, y), re.sub(r"\d", "", word), font=f, fill=col)
    return to_arr(img.convert("RGB"))


def busy_score(arr) -> float:
    """Share of strong edges at a coarse scale (fine paper grain does not count)."""
    im = to_img(arr)
    im = im.resize((200, max(2, int(200 * im.height / im.width))), Image.BOX)
    g = np.asarray(im, np.float32).mean(axis=2) / 255
    e = np.maximum(np.abs(np.diff(g, axis=1))[:-1, :], np.abs(np.diff(g, axis=0))[:, :-1])
    return float((e > 0.05).mean())


BUSY_THRESHOLD = 0.15


def make_ground(rng, nrng, w, h, grounds: Grounds, fonts: Fonts, want_busy: bool):
    if want_busy:
        choice = rng.choices(["photo", "desk", "fabric"], [0.6, 0.3, 0.1])[0]
    else:
        choice = rng.choices(["photo", "texture", "wood", "fabric", "desk"], [0.35, 0.2, 0.17, 0.1, 0.18])[0]
    if choice == "photo" and not grounds.photos:
        choice = "wood"
    if choice == "texture" and not grounds.textures:
        choice = "desk"
    if choice == "photo":
        arr, name = ground_photo(rng, grounds, w, h), "photo"
    elif choice == "texture":
        arr, name = ground_texture(rng, grounds, w, h), "texture"
    elif choice == "wood":
        arr, name = ground_wood(rng, nrng, w, h), "wood"
    elif choice == "fabric":
        arr, name = ground_fabric(rng, nrng, w, h), "fabric"
    else:
        arr, name = ground_desk(rng, nrng, w, h, fonts, want_busy), "desk"
    arr = np.clip(arr, 0, 1).astype(np.float32)
    return arr, name, busy_score(arr) >= BUSY_THRESHOLD


def scanner_bed(rng, nrng, w, h):
    if rng.random() < 0.75:
        base = np.array([rng.uniform(0.88, 0.99)] * 3, np.float32) * np.array([1, rng.uniform(0.98, 1.0), rng.uniform(0.95, 1.0)], np.float32)
    else:
        base = np.array([rng.uniform(0.03, 0.12)] * 3, np.float32)
    arr = base * (0.97 + 0.06 * value_noise(nrng, w, h, max(w, h) / 3))[..., None]
    return arr.astype(np.float32)


# ----------------------------------------------------------------------------- placing


def project_quad(w, h, rx, ry, rz, focal):
    pts = np.array([[-w / 2, -h / 2, 0], [w / 2, -h / 2, 0], [w / 2, h / 2, 0], [-w / 2, h / 2, 0]], float)
    cx, sx = math.cos(rx), math.sin(rx)
    cy, sy = math.cos(ry), math.sin(ry)
    cz, sz = math.cos(rz), math.sin(rz)
    Rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    Ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    Rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    p = pts @ (Rz @ Ry @ Rx).T
    p[:, 2] += focal
    return np.stack([focal * p[:, 0] / p[:, 2], focal * p[:, 1] / p[:, 2]], axis=1)


def place_quad(rng, quad, frame_w, frame_h, target_w, margin):
    """Scales the quad so its mean top/bottom edge is target_w, fits it in the frame,
    and moves it to a random place."""
    top = np.linalg.norm(quad[1] - quad[0])
    bot = np.linalg.norm(quad[2] - quad[3])
    q = quad * (target_w / ((top + bot) / 2))
    for _ in range(40):
        bw = q[:, 0].max() - q[:, 0].min()
        bh = q[:, 1].max() - q[:, 1].min()
        if bw <= frame_w * (1 - 2 * margin) and bh <= frame_h * (1 - 2 * margin):
            break
        q = q * 0.95
    bw = q[:, 0].max() - q[:, 0].min()
    bh = q[:, 1].max() - q[:, 1].min()
    ox = rng.uniform(frame_w * margin, max(frame_w * margin, frame_w * (1 - margin) - bw)) - q[:, 0].min()
    oy = rng.uniform(frame_h * margin, max(frame_h * margin, frame_h * (1 - margin) - bh)) - q[:, 1].min()
    return q + np.array([ox, oy])


def finger_layer(rng, cw, ch, pad, number_box, u):
    """A thumb over a corner or an edge of the card, in padded card coordinates. Returns
    an RGBA layer or None when no place keeps the number clear."""
    W, H = cw + 2 * pad, ch + 2 * pad
    skin = np.array(rng.choice([(0.95, 0.76, 0.65), (0.88, 0.67, 0.54), (0.78, 0.53, 0.39), (0.63, 0.4, 0.27),
                                (0.44, 0.27, 0.18), (0.92, 0.74, 0.62)]), np.float32)
    nb = [number_box[0] + pad, number_box[1] + pad, number_box[2] + pad, number_box[3] + pad]
    nb_area = (nb[2] - nb[0]) * (nb[3] - nb[1])
    for _ in range(30):
        spot = rng.choice(["tl", "tr", "bl", "br", "top", "bottom", "left_hi", "right_hi", "right"])
        x0, y0, x1, y1 = pad, pad, pad + cw, pad + ch
        anchors = {
            "tl": ((x0, y0), (1, 1)), "tr": ((x1, y0), (-1, 1)), "bl": ((x0, y1), (1, -1)), "br": ((x1, y1), (-1, -1)),
            "top": ((rng.uniform(x0 + 0.2 * cw, x1 - 0.2 * cw), y0), (0, 1)),
            "bottom": ((rng.uniform(x0 + 0.2 * cw, x1 - 0.2 * cw), y1), (0, -1)),
            "left_hi": ((x0, y0 + rng.uniform(0.15, 0.35) * ch), (1, 0)),
            "right_hi": ((x1, y0 + rng.uniform(0.15, 0.4) * ch), (-1, 0)),
            "right": ((x1, y0 + rng.uniform(0.3, 0.8) * ch), (-1, 0)),
        }
        (ax, ay), (nx, ny) = anchors[spot]
        nl = math.hypot(nx, ny)
        nx, ny = nx / nl, ny / nl
        a = rng.uniform(0.26, 0.34) * ch  # half length of the thumb pad
        b = a * rng.uniform(0.55, 0.7)
        depth = rng.uniform(0.12, 0.26) * ch  # how far it reaches into the card
        cx, cy = ax + nx * (depth - a), ay + ny * (depth - a)
        ang = math.atan2(ny, nx) + rng.uniform(-0.3, 0.3)
        pts = []
        for k in range(48):
            t = 2 * math.pi * k / 48
            ex, ey = a * math.cos(t), b * math.sin(t)
            pts.append((cx + ex * math.cos(ang) - ey * math.sin(ang), cy + ex * math.sin(ang) + ey * math.cos(ang)))
        # the rest of the thumb, out past the edge
        far = 3 * a
        bx, by = cx - math.cos(ang) * far, cy - math.sin(ang) * far
        px_, py_ = -math.sin(ang) * b, math.cos(ang) * b
        rest = [(cx + px_, cy + py_), (cx - px_, cy - py_), (bx - px_ * 1.1, by - py_ * 1.1), (bx + px_ * 1.1, by + py_ * 1.1)]
        # how much of the number it hides (the blur adds a margin)
        ix0, iy0, ix1, iy1 = [int(v) for v in nb]
        margin = int(12 * u)
        probe = Image.new("L", (ix1 - ix0 + 2 * margin, iy1 - iy0 + 2 * margin), 0)
        pd = ImageDraw.Draw(probe)
        off = (ix0 - margin, iy0 - margin)
        pd.polygon([(x - off[0], y - off[1]) for x, y in pts], fill=255)
        pd.polygon([(x - off[0], y - off[1]) for x, y in rest], fill=255)
        cover = float(mask_arr(probe).sum()) / max(1.0, nb_area)
        if cover > 0.05:
            continue
        # draw only the part of the canvas the thumb covers
        allp = pts + rest
        bl = int(0.35 * b + 12 * u)
        qx0 = max(0, int(min(x for x, _ in allp)) - bl)
        qy0 = max(0, int(min(y for _, y in allp)) - bl)
        qx1 = min(W, int(max(x for x, _ in allp)) + bl)
        qy1 = min(H, int(max(y for _, y in allp)) + bl)
        if qx1 - qx0 < 4 or qy1 - qy0 < 4:
            continue
        m = Image.new("L", (qx1 - qx0, qy1 - qy0), 0)
        md = ImageDraw.Draw(m)
        md.polygon([(x - qx0, y - qy0) for x, y in pts], fill=255)
        md.polygon([(x - qx0, y - qy0) for x, y in rest], fill=255)
        ma = mask_arr(m)
        soft = blur_mask(ma, rng.uniform(4, 10) * u)
        shade = blur_mask(ma, 0.3 * b)
        col = skin[None, None, :] * (0.72 + 0.35 * shade[..., None])
        # a soft highlight and a nail near the tip
        tx, ty = cx + math.cos(ang) * a * 0.55 - qx0, cy + math.sin(ang) * a * 0.55 - qy0
        xs, ys = grid(qx1 - qx0, qy1 - qy0)
        nail = np.exp(-(((xs - tx) ** 2 + (ys - ty) ** 2) / (0.18 * b * b)))[..., None]
        col = col * (1 - 0.3 * nail) + np.array([0.97, 0.85, 0.82], np.float32) * 0.3 * nail
        # fade out along the thumb, away from the card, so the layer's edge never cuts it
        along = (xs + qx0 - cx) * math.cos(ang) + (ys + qy0 - cy) * math.sin(ang)
        soft = soft * np.clip((along + 0.8 * a) / (0.4 * a), 0, 1)
        rgba = np.concatenate([np.clip(col, 0, 1), soft[..., None]], axis=2)
        out = Image.new("RGBA", (W, H), (0, 0, 0, 0))
        out.paste(Image.fromarray((rgba * 255 + 0.5).astype(np.uint8), "RGBA"), (qx0, qy0))
        return out
    return None


# ----------------------------------------------------------------------------- conditions


def low_light(arr, rng, nrng):
    cast = np.array(rng.choice([(1.0, 0.84, 0.62), (0.8, 0.9, 1.1), (0.9, 1.0, 0.82), (1.0, 0.9, 0.9), (1.0, 1.0, 1.0)]), np.float32)
    k = rng.uniform(0.32, 0.55)
    arr = (np.clip(arr, 0, 1) ** rng.uniform(1.1, 1.5)) * k * cast
    arr = arr + noise_like(nrng, arr.shape[0], arr.shape[1], rng.uniform(0.012, 0.03))
    return np.clip(arr, 0, 1)


def blur(arr, rng, scale):
    """Defocus or motion blur; scale is the card's width in pixels (or the frame's)."""
    if rng.random() < 0.5:
        return to_arr(to_img(arr).filter(ImageFilter.GaussianBlur(max(1.0, rng.uniform(0.0025, 0.005) * scale)))), "defocus"
    length = max(3, int(rng.uniform(0.01, 0.02) * scale))
    ang = rng.uniform(0, math.pi)
    h, w = arr.shape[:2]
    m = length // 2 + 2
    padded = np.pad(arr, ((m, m), (m, m), (0, 0)), mode="edge")
    acc = np.zeros_like(arr)
    for k in range(length):
        t = k - (length - 1) / 2
        dx, dy = int(round(t * math.cos(ang))), int(round(t * math.sin(ang)))
        acc += padded[m - dy:m - dy + h, m - dx:m - dx + w]
    return acc / length, "motion"


def jpeg_round_trip(img: Image.Image, q: int) -> Image.Image:
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=q)
    buf.seek(0)
    return Image.open(buf).convert("RGB")


# ----------------------------------------------------------------------------- one image


ROT = {90: Image.ROTATE_90, 180: Image.ROTATE_180, 270: Image.ROTATE_270}


def make_image(index, slot, rotation, seed, fonts: Fonts, grounds: Grounds):
    rng = random.Random(f"gen2:{seed}:{index}")
    nrng = np.random.default_rng([seed, index, 2])
    entry = {"file": None, "pan": None, "month": None, "year": None, "brand": None, "kind": None, "split": "gen2",
             "conditions": [], "font": None, "grouping": None, "holder": None, "validFrom": False}
    conds = []

    specimen = slot == "specimen"
    if specimen:
        kind = rng.choices(["flat", "photo", "embossed"], [0.35, 0.4, 0.25])[0]
    else:
        kind = slot
    entry["kind"] = kind

    card_arr = None
    info = None
    if kind in ("flat", "photo", "embossed"):
        if specimen:
            brand, digits = rng.choice(SPECIMENS)
        else:
            brand = rng.choices(BRANDS, BRAND_WEIGHTS)[0]
            if brand == "unionpay" and rng.random() < 0.5:
                digits = "6205500000000000004"  # the 19-digit one, in its three groupings
            else:
                digits = rng.choice(TEST_PANS[brand])
        grouping = rng.choice(groupings_for(len(digits)))
        embossed = kind == "embossed"
        layout = "flat" if kind == "flat" else "photo" if kind == "photo" else ("photo" if rng.random() < 0.6 else "flat")
        thru = (rng.randint(1, 12), rng.randint(2027, 2035))
        expiry = thru if rng.random() < 0.96 else None
        valid_from = None
        if expiry and rng.random() < 0.22:
            fy = thru[1] - rng.randint(2, 5)
            valid_from = (rng.randint(1, 12), fy)
        holder = holder_name(rng) if rng.random() < 0.85 else None
        spec = {
            "digits": digits, "grouping": grouping, "brand": brand,
            "font_index": rng.randrange(len(fonts.number)),
            "weight": "bold" if rng.random() < (0.7 if embossed else 0.5) else "regular",
            "embossed": embossed, "tipping": rng.choices([None, "gold", "silver"], [0.45, 0.25, 0.3])[0] if embossed else None,
            "expiry": expiry, "valid_from": valid_from, "holder": holder, "specimen": specimen,
            "line_art": rng.random() < 0.1, "glare": rng.random() < (0.2 if layout == "photo" else 0.1),
        }
        family = fonts.number[spec["font_index"]][0]
        entry.update({"brand": brand, "font": family, "weight": spec["weight"], "grouping": grouping,
                      "holder": holder, "validFrom": valid_from is not None})
        if expiry:
            entry["month"], entry["year"] = expiry
        if specimen:
            entry["specimen"] = True
            entry["printed"] = digits
        else:
            entry["pan"] = digits
        if embossed:
            entry["tipping"] = spec["tipping"] or "none"
    elif kind == "back":
        layout = "flat" if rng.random() < 0.4 else "photo"
        brand = rng.choices(BRANDS, BRAND_WEIGHTS)[0] if rng.random() < 0.85 else None
        entry["brand"] = brand
        spec = None
    else:  # other
        layout = "receipt" if rng.random() < 0.5 else "ground"

    # frame size and card size
    small = layout == "photo" and rng.random() < 0.13
    skew = 0.0
    if layout == "flat":
        long_side = rng.randint(600, 1600)
        skew = math.radians(rng.uniform(-3, 3))
        fill = rng.uniform(0.86, 0.95)
        card_px = long_side * fill
        c, s_ = abs(math.cos(skew)), abs(math.sin(skew))
        card_h_px = card_px * 53.98 / 85.60
        if card_px * c + card_h_px * s_ > 0.98 * long_side:
            card_px *= 0.98 * long_side / (card_px * c + card_h_px * s_)
            card_h_px = card_px * 53.98 / 85.60
        frame_w = long_side
        frame_h = int(round(card_h_px * c + card_px * s_ + long_side * rng.uniform(0.04, 0.16)))
    else:
        long_side = rng.randint(1200, 1600) if small else rng.randint(800, 1600)
        aspect = rng.choice([4 / 3, 3 / 2, 16 / 9, 4 / 3, 1.25])
        frame_w, frame_h = long_side, int(round(long_side / aspect))
        if rotation is None and rng.random() < 0.2:  # a portrait photo held upright
            frame_w, frame_h = frame_h, frame_w
        if small:
            frac = rng.uniform(0.35, 0.42)
        elif rng.random() < 0.15:
            frac = rng.uniform(0.86, 0.93)  # card filling the frame
        else:
            frac = rng.uniform(0.42, 0.85)
        card_px = max(380.0, frame_w * frac)

    # ground
    if layout == "flat":
        ground = scanner_bed(rng, nrng, frame_w, frame_h)
        busy = False
        ground_name = "scanner"
        if rng.random() < 0.25 and grounds.textures:
            ground = ground_texture(rng, grounds, frame_w, frame_h)
            ground_name = "texture"
    else:
        want_busy = rng.random() < 0.3
        ground, ground_name, busy = make_ground(rng, nrng, frame_w, frame_h, grounds, fonts, want_busy)
    entry["ground"] = ground_name

    out = ground
    if layout in ("flat", "photo"):
        cw = int(max(640, min(1500, card_px * (1.0 if layout == "flat" else 1.1))))
        if kind == "back":
            card_arr, info = render_back(rng, nrng, cw, entry["brand"], fonts, grounds)
        else:
            card_arr, info = render_front(rng, nrng, cw, spec, fonts, grounds)
            if spec["glare"]:
                conds.append("glare")
            if spec["line_art"]:
                conds.append("line_art")
            if info["dark"] and info["ink_light"]:
                conds.append("dark_card")
        ch = info["ch"]
        pad = int(0.5 * ch)
        layer = Image.new("RGBA", (cw + 2 * pad, ch + 2 * pad), (0, 0, 0, 0))
        card_img = to_img(card_arr).convert("RGBA")
        card_img.putalpha(rounded_alpha(cw, ch, 0.037 * cw))
        layer.alpha_composite(card_img, (pad, pad))
        if kind != "back" and rng.random() < (0.14 if layout == "photo" else 0.05):
            fl = finger_layer(rng, cw, ch, pad, info["number_box"], cw / 1100)
            if fl is not None:
                layer.alpha_composite(fl)
                conds.append("finger")
        src = [(pad, pad), (pad + cw, pad), (pad + cw, pad + ch), (pad, pad + ch)]
        if layout == "flat":
            q = project_quad(cw, ch, 0, 0, skew, 1e7)
            q = q * (card_px / cw) + np.array([frame_w / 2, frame_h / 2])
        else:
            strong = rng.random() < 0.28
            if strong:
                rx, ry = rng.uniform(20, 34) * rng.choice([-1, 1]), rng.uniform(0, 22) * rng.choice([-1, 1])
                if rng.random() < 0.5:
                    rx, ry = ry, rx
            else:
                rx, ry = rng.gauss(0, 8), rng.gauss(0, 8)
                rx, ry = max(-19, min(19, rx)), max(-19, min(19, ry))
            rz = rng.uniform(-25, 25) if rng.random() < 0.55 else rng.uniform(-6, 6)
            focal = cw * rng.uniform(1.1, 2.6)
            q = project_quad(cw, ch, math.radians(rx), math.radians(ry), math.radians(rz), focal)
            q = place_quad(rng, q, frame_w, frame_h, card_px, 0.02)
            if max(abs(rx), abs(ry)) >= 20:
                conds.append("perspective")
            if abs(rz) >= 8:
                conds.append("tilted")
            entry["tilt"] = round(rz, 1)
        warped = warp_layer(layer, src, q, (frame_w, frame_h))
        # shadow
        alpha = warped.getchannel("A")
        s = max(frame_w, frame_h)
        shadow = mask_arr(alpha.filter(ImageFilter.GaussianBlur((0.004 if layout == "flat" else rng.uniform(0.006, 0.02)) * s)))
        off = int(rng.uniform(0.002, 0.012) * s)
        shadow = shift(shadow, off, off // 2)
        out = ground * (1 - rng.uniform(0.25, 0.5) * shadow[..., None])
        wa = np.asarray(warped, dtype=np.float32) / 255.0
        if layout == "photo":  # uneven light across the card
            ang = rng.uniform(0, 2 * math.pi)
            l0, l1 = rng.uniform(0.85, 1.0), rng.uniform(0.0, 0.2)
            light = smooth_field(lambda xs, ys: l0 + l1 * (xs * math.cos(ang) + ys * math.sin(ang)) / s, frame_w, frame_h)
            wa[..., :3] *= light[..., None]
        a = wa[..., 3:4]
        out = out * (1 - a) + np.clip(wa[..., :3], 0, 1) * a
        card_w_px = float(np.mean([math.dist(q[0], q[1]), math.dist(q[3], q[2])]))
        if layout == "photo" and card_w_px / frame_w < 0.45 and max(frame_w, frame_h) >= 1000:
            conds.append("small")
        if layout == "photo" and busy:
            conds.append("busy_ground")
    elif layout == "receipt":
        rw = int(min(frame_w, frame_h) * rng.uniform(0.35, 0.55))
        rec, lines = render_receipt(rng, rw, fonts)
        rh = rec.height
        src = [(0, 0), (rw, 0), (rw, rh), (0, rh)]
        q = project_quad(rw, rh, math.radians(rng.gauss(0, 10)), math.radians(rng.gauss(0, 10)), math.radians(rng.uniform(-30, 30)), rw * 3)
        tw = rw * min(1.0, frame_h * 0.9 / rh)
        q = place_quad(rng, q, frame_w, frame_h, tw, 0.02)
        warped = warp_layer(rec, src, q, (frame_w, frame_h))
        shadow = mask_arr(warped.getchannel("A").filter(ImageFilter.GaussianBlur(0.01 * max(frame_w, frame_h))))
        out = ground * (1 - 0.35 * shift(shadow, int(0.004 * frame_w), int(0.006 * frame_w))[..., None])
        out = composite(out, warped)
        entry["receipt"] = True
        if busy:
            conds.append("busy_ground")
    else:
        if busy:
            conds.append("busy_ground")

    if layout != "flat":  # camera sensor noise, a slight vignette
        sigma = rng.uniform(0.003, 0.008)
        vk = rng.uniform(0.0, 0.35)
        vig = smooth_field(lambda xs, ys: 1 - vk * ((xs / frame_w - 0.5) ** 2 + (ys / frame_h - 0.5) ** 2), frame_w, frame_h)
        out = out * vig[..., None] + noise_like(nrng, frame_h, frame_w, sigma)

    if rng.random() < (0.15 if layout != "flat" else 0.06):
        out = low_light(out, rng, nrng)
        conds.append("low_light")
    if rng.random() < 0.13:
        out, _ = blur(out, rng, card_w_px if layout in ("flat", "photo") else 0.6 * max(frame_w, frame_h))
        conds.append("blur")

    img = to_img(out)
    if rotation:
        img = img.transpose(ROT[rotation])
        conds.append(f"rotated{rotation}")
    if rng.random() < 0.16:
        img = jpeg_round_trip(img, rng.randint(30, 70))
        conds.append("jpeg")

    order = ["glare", "finger", "rotated90", "rotated180", "rotated270", "tilted", "busy_ground", "low_light", "blur",
             "jpeg", "line_art", "dark_card", "small", "perspective"]
    entry["conditions"] = [c for c in order if c in conds]
    tag = entry["brand"] or "none"
    entry["file"] = f"g{index:03d}-{kind}{'-specimen' if specimen else ''}-{tag}.png"
    return img, entry


# ----------------------------------------------------------------------------- the set


def plan(count: int, rng: random.Random):
    n_flat = round(0.25 * count)
    n_photo = round(0.35 * count)
    n_emb = round(0.25 * count)
    n_spec = round(0.07 * count)
    n_rest = max(0, count - n_flat - n_photo - n_emb - n_spec)
    n_back = (n_rest + 1) // 2
    n_other = n_rest - n_back
    slots = ["flat"] * n_flat + ["photo"] * n_photo + ["embossed"] * n_emb + ["specimen"] * n_spec + ["back"] * n_back + ["other"] * n_other
    slots = slots[:count]
    rng.shuffle(slots)
    # turn at least an eighth of the card images a quarter, half or three quarters
    holders = [i for i, s in enumerate(slots) if s != "other"]
    n_rot = math.ceil(0.13 * count)
    chosen = sorted(rng.sample(holders, min(n_rot, len(holders))))
    rotations = [None] * len(slots)
    for k, i in enumerate(chosen):
        rotations[i] = (90, 180, 270)[k % 3] if k % 3 != 1 or rng.random() < 0.8 else 90
    return slots, rotations


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=".devsets/gen2", help="output folder (created)")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--count", type=int, default=240)
    ap.add_argument("--only", type=int, nargs="*", help="render only these indices (for looking at a few)")
    args = ap.parse_args(argv)

    t0 = time.time()
    fonts = Fonts()
    grounds = Grounds()
    if fonts.missing:
        print(f"gen2: number typefaces not installed, skipped: {', '.join(fonts.missing)}", file=sys.stderr)
    if not grounds.photos:
        print("gen2: no background photos found (install lomiri-wallpapers); procedural grounds only", file=sys.stderr)
    os.makedirs(args.out, exist_ok=True)
    slots, rotations = plan(args.count, random.Random(f"gen2-plan:{args.seed}"))
    manifest = []
    for i, slot in enumerate(slots):
        if args.only and i not in args.only:
            continue
        img, entry = make_image(i, slot, rotations[i], args.seed, fonts, grounds)
        assert 600 <= max(img.size) <= 1600, (entry["file"], img.size)
        if entry["pan"] is not None:
            assert luhn_ok(entry["pan"]), entry
        if entry.get("specimen"):
            assert not luhn_ok(entry["printed"]) and entry["pan"] is None, entry
        img.save(os.path.join(args.out, entry["file"]), "PNG", compress_level=1)
        manifest.append(entry)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    kinds = {}
    for e in manifest:
        kinds[e["kind"]] = kinds.get(e["kind"], 0) + 1
    print(f"gen2: wrote {len(manifest)} images to {args.out} in {time.time() - t0:.1f} s: "
          + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))


if __name__ == "__main__":
    main()
