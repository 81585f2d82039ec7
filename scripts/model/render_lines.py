#!/usr/bin/env python3
"""Renders synthetic card text lines (PNG + .gt.txt) for training and evaluating the `card` Tesseract model.

Each line is one row as the scanner cuts it from a straightened card: a card number, a digit group, a date or
random digits, in one of the typefaces of fonts.txt (or fonts-heldout.txt with --fonts heldout), printed or
embossed, dark-on-light or light-on-dark, on plain, gradient, textured or patterned ground, then damaged the
way phone cameras and scanners damage it. Some lines come out binarised, as the scanner also passes those.

The ground truth uses one space for every group gap, however wide the gap is drawn. Digits are uniform
random: no valid card numbers are favoured.

    render_lines.py --out DIR --count N [--clean] [--fonts train|heldout] [--seed S] [--prefix P]

--clean renders dark text on white with no damage (the curriculum's first phase). The output folder also
gets manifest.tsv: one row per line with its file, face and the rendering choices, for per-face scores.
"""
import argparse
import io
import math
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

import check_fonts
import fontlist

DIGITS = "0123456789"

# MARK: - Text


def digits(rng: np.random.Generator, n: int) -> str:
    return "".join(rng.choice(list(DIGITS), n))


def grouped(rng: np.random.Generator, sizes: list[int]) -> str:
    return " ".join(digits(rng, n) for n in sizes)


def date(rng: np.random.Generator, long_year: bool = False) -> str:
    # Months and years are digits too; keep them plausible but spread over all digits.
    month = f"{rng.integers(0, 13):02d}" if rng.random() < 0.3 else f"{rng.integers(1, 13):02d}"
    year = f"{rng.integers(0, 100):02d}"
    if long_year:
        year = ("20" if rng.random() < 0.8 else digits(rng, 2)) + year
    return f"{month}/{year}"


def make_text(rng: np.random.Generator, slash: bool = True, dates: bool = False) -> str:
    """One line's text; `slash` False when the face has no '/' glyph; `dates`: dates only (a face with a '/')."""
    if dates and slash:
        kinds = [
            (0.45, lambda: date(rng)),
            (0.2, lambda: date(rng, long_year=True)),
            (0.25, lambda: date(rng) + " " + date(rng)),
            (0.1, lambda: date(rng, True) + " " + date(rng, True)),
        ]
        return pick(rng, kinds)
    kinds = [
        (0.22, lambda: grouped(rng, [4, 4, 4, 4])),
        (0.05, lambda: grouped(rng, [4, 6, 5])),
        (0.04, lambda: grouped(rng, [4, 6, 4])),
        (0.03, lambda: grouped(rng, [6, 13])),
        (0.03, lambda: grouped(rng, [4, 4, 4, 4, 3])),
        (0.04, lambda: digits(rng, 19)),
        (0.04, lambda: digits(rng, int(rng.integers(15, 17)))),
        (0.05, lambda: grouped(rng, [4, 4, 4, int(rng.integers(1, 5))])),  # shorter last group
        (0.16, lambda: digits(rng, int(rng.integers(3, 7)))),
        (0.08, lambda: date(rng)),
        (0.03, lambda: date(rng, long_year=True)),
        (0.05, lambda: date(rng) + " " + date(rng)),
        (0.02, lambda: date(rng, True) + " " + date(rng, True)),
        (0.12, lambda: random_digit_line(rng)),
        (0.04, lambda: grouped(rng, [int(rng.integers(1, 7)) for _ in range(int(rng.integers(2, 6)))])),
    ]
    while True:
        text = pick(rng, kinds)
        if slash or "/" not in text:
            return text


def pick(rng: np.random.Generator, kinds) -> str:
    """The text of one of `kinds` ((weight, make) pairs), drawn by weight."""
    weights = np.array([w for w, _ in kinds])
    return kinds[rng.choice(len(kinds), p=weights / weights.sum())][1]()


def random_digit_line(rng: np.random.Generator) -> str:
    out = ""
    for _ in range(int(rng.integers(1, 21))):
        out += str(rng.integers(0, 10))
        if rng.random() < 0.15:
            out += " "
    return out.strip()


# MARK: - Colours and grounds


def rand_colour(rng, lo=0, hi=255) -> np.ndarray:
    return rng.uniform(lo, hi, 3)


def lum(c: np.ndarray) -> float:
    return float(0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2])


def with_lum(rng, target: float, sat: float) -> np.ndarray:
    """A colour with roughly the given luminance and saturation (0 grey .. 1 vivid)."""
    hue = rng.uniform(0, 1, 3)
    c = target + sat * (hue - hue.mean()) * 160
    return np.clip(c, 0, 255)


def smooth_noise(rng, h: int, w: int, scale: float) -> np.ndarray:
    """Smooth noise in [-1, 1] with features about `scale` px wide."""
    sh, sw = max(2, int(h / scale) + 2), max(2, int(w / scale) + 2)
    small = Image.fromarray((rng.uniform(0, 255, (sh, sw))).astype(np.uint8))
    big = np.asarray(small.resize((w, h), Image.BICUBIC), dtype=np.float32)
    return big / 127.5 - 1


def ground(rng, h: int, w: int, base: np.ndarray, style: str) -> np.ndarray:
    """An RGB float image (h, w, 3) around colour `base`."""
    img = np.ones((h, w, 3), np.float32) * base
    if style == "gradient":
        other = np.clip(base + rng.normal(0, 45, 3), 0, 255)
        ang = rng.uniform(0, 2 * math.pi)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        t = (xx * math.cos(ang) + yy * math.sin(ang))
        t = (t - t.min()) / max(1e-6, t.max() - t.min())
        img = img * (1 - t[..., None]) + other * t[..., None]
    elif style == "textured":
        kind = rng.integers(0, 3)
        if kind == 0:  # mottled print
            n = smooth_noise(rng, h, w, rng.uniform(3, 30))
        elif kind == 1:  # brushed metal: streaks along x
            n = rng.normal(0, 1, (h, 1)).astype(np.float32) * np.ones((1, w), np.float32)
            n = n + 0.5 * smooth_noise(rng, h, w, 40)
        else:  # fine grain
            n = rng.normal(0, 0.6, (h, w)).astype(np.float32)
        img = img + n[..., None] * rng.uniform(8, 40)
    elif style == "pattern":
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        kind = rng.integers(0, 4)
        if kind == 0:  # guilloche-like waves
            f1, f2 = rng.uniform(0.02, 0.2, 2)
            v = np.sin(xx * f1 + 3 * np.sin(yy * f2 + rng.uniform(0, 6))) > rng.uniform(0.6, 0.95)
        elif kind == 1:  # stripes
            ang = rng.uniform(0, math.pi)
            period = rng.uniform(4, 30)
            v = np.mod(xx * math.cos(ang) + yy * math.sin(ang), period) < period * rng.uniform(0.1, 0.5)
        elif kind == 2:  # dots
            period = rng.uniform(5, 20)
            v = (np.mod(xx, period) - period / 2) ** 2 + (np.mod(yy, period) - period / 2) ** 2 < (period * rng.uniform(0.1, 0.3)) ** 2
        else:  # blobs / map-like shapes
            v = smooth_noise(rng, h, w, rng.uniform(15, 60)) > rng.uniform(0.0, 0.4)
        other = np.clip(base + rng.normal(0, 40, 3), 0, 255)
        img = np.where(v[..., None], other, img).astype(np.float32)
        img = np.asarray(Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(rng.uniform(0, 1.2))), np.float32)
    return img


# MARK: - Glyphs


_font_cache: dict = {}


def font_at(face: fontlist.Face, digit_h: float) -> ImageFont.FreeTypeFont:
    """The face at the size whose digits are about `digit_h` px tall."""
    key = (face.path, None)
    if key not in _font_cache:
        probe = ImageFont.truetype(face.path, 100)
        box = probe.getbbox("0123456789", anchor="ls")
        _font_cache[key] = max(1, -box[1])  # ink height above the baseline at size 100
    size = max(6, int(round(digit_h * 100 / _font_cache[key])))
    k2 = (face.path, size)
    if k2 not in _font_cache:
        _font_cache[k2] = ImageFont.truetype(face.path, size)
    return _font_cache[k2]


def text_mask(font, text: str, tracking: float, gap: float, canvas_w: int, canvas_h: int, x0: float, baseline: float):
    """Draws `text` into an L mask; returns (mask, ink box (l, t, r, b)). Spaces become gaps of `gap` digit widths."""
    mask = Image.new("L", (canvas_w, canvas_h), 0)
    d = ImageDraw.Draw(mask)
    adv0 = font.getlength("0")
    x = x0
    for ch in text:
        if ch == " ":
            x += adv0 * gap
            continue
        d.text((x, baseline), ch, font=font, fill=255, anchor="ls")
        x += font.getlength(ch) + tracking * adv0
    box = mask.getbbox() or (0, 0, 1, 1)
    return mask, box


def text_width(font, text: str, tracking: float, gap: float) -> float:
    adv0 = font.getlength("0")
    return sum(adv0 * gap if ch == " " else font.getlength(ch) + tracking * adv0 for ch in text)


# MARK: - Compositing


def emboss_shading(mask: np.ndarray, digit_h: float, rng) -> np.ndarray:
    """Relief shading in about [-1, 1] for raised glyphs lit from a random upper direction."""
    radius = max(0.8, digit_h * rng.uniform(0.02, 0.06))
    hmap = np.asarray(Image.fromarray((mask * 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(radius)), np.float32) / 255
    gy, gx = np.gradient(hmap)
    ang = rng.uniform(math.radians(200), math.radians(340))  # light from above-left .. above-right
    shade = -(gx * math.cos(ang) + gy * math.sin(ang))
    return np.clip(shade * radius * 2.5, -1, 1)


def compose(rng, mask: np.ndarray, digit_h: float, clean: bool) -> tuple[np.ndarray, dict]:
    """Colours the glyph mask (float 0..1) onto a ground; returns the RGB float image and the choices made."""
    h, w = mask.shape
    info = {}
    if clean:
        bgv = rng.uniform(225, 255)
        fgv = rng.uniform(0, 40)
        img = np.ones((h, w, 3), np.float32) * bgv
        img = img * (1 - mask[..., None]) + fgv * mask[..., None]
        info.update(style="clean")
        return img, info

    embossed = rng.random() < 0.45
    dark_text = rng.random() < 0.5
    contrast = rng.uniform(25, 70) if rng.random() < 0.15 else rng.uniform(70, 220)
    if dark_text:
        bg_l = rng.uniform(min(255, 30 + contrast), 255)
        fg_l = bg_l - contrast
    else:
        bg_l = rng.uniform(0, max(0, 225 - contrast))
        fg_l = bg_l + contrast
    base = with_lum(rng, bg_l, rng.uniform(0, 1))
    gstyle = rng.choice(["plain", "gradient", "textured", "pattern"], p=[0.25, 0.25, 0.25, 0.25])
    img = ground(rng, h, w, base, gstyle)
    info.update(ground=str(gstyle), polarity="dark" if dark_text else "light")

    if embossed:
        tip = rng.choice(["silver", "gold", "dark", "untipped"], p=[0.3, 0.25, 0.15, 0.3])
        if tip == "silver":
            face_c = np.array([1.0, 1.0, 1.0]) * rng.uniform(150, 250)
        elif tip == "gold":
            face_c = np.array([1.0, 0.85, 0.5]) * rng.uniform(150, 240)
        elif tip == "dark":
            face_c = np.array([1.0, 1.0, 1.0]) * rng.uniform(10, 70)
        else:
            face_c = None
        # Slightly eroded/dilated face so the tipping does not always fill the relief exactly.
        shade = emboss_shading(mask, digit_h, rng)
        if face_c is not None:
            face = np.ones_like(img) * face_c
            # metallic sheen along the glyphs
            face = face * (1 + 0.25 * smooth_noise(rng, h, w, digit_h * rng.uniform(0.3, 1.5))[..., None])
            m = mask[..., None] * rng.uniform(0.8, 1.0)
            img = img * (1 - m) + face * m
        strength = rng.uniform(40, 120)
        img = img + shade[..., None] * strength
        if rng.random() < 0.5:  # glossy reflection band
            yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
            ang = rng.uniform(-1.2, 1.2)
            pos = rng.uniform(0, w)
            dist = np.abs((xx - pos) * math.cos(ang) + (yy - h / 2) * math.sin(ang))
            width = rng.uniform(0.3, 3) * digit_h
            img = img + (np.exp(-(dist / width) ** 2) * rng.uniform(20, 80))[..., None]
        info.update(emboss=str(tip))
    else:
        fg = with_lum(rng, fg_l, rng.uniform(0, 0.8))
        m = mask[..., None]
        img = img * (1 - m) + fg * m
        info.update(emboss="print")

    if rng.random() < 0.15:  # thin coloured lines crossing the digits
        pil = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))
        d = ImageDraw.Draw(pil)
        for _ in range(int(rng.integers(1, 4))):
            y1, y2 = rng.uniform(0, h, 2)
            d.line([(0, y1), (w, y2)], fill=tuple(int(v) for v in rand_colour(rng)), width=int(rng.integers(1, 3)))
        img = np.asarray(pil, np.float32)
        info["lines"] = 1
    return img, info


# MARK: - Damage


def perspective_coeffs(src, dst):
    """PIL PERSPECTIVE coefficients mapping output points `dst` to input points `src`."""
    a = []
    b = []
    for (x, y), (u, v) in zip(dst, src):
        a.append([x, y, 1, 0, 0, 0, -u * x, -u * y]); b.append(u)
        a.append([0, 0, 0, x, y, 1, -v * x, -v * y]); b.append(v)
    return np.linalg.solve(np.array(a, float), np.array(b, float)).tolist()


def warp(rng, size: tuple[int, int], digit_h: float, max_deg: float = 2.0) -> list[float]:
    """PERSPECTIVE coefficients for a slight rotation (up to max_deg) and perspective about the canvas centre."""
    w, h = size
    ang = math.radians(rng.uniform(-max_deg, max_deg))
    cx, cy = w / 2, h / 2
    j = digit_h * 0.12
    corners = [(0, 0), (w, 0), (w, h), (0, h)]
    dst = []
    for x, y in corners:
        x, y = x + rng.uniform(-j, j), y + rng.uniform(-j, j)
        dx, dy = x - cx, y - cy
        dst.append((cx + dx * math.cos(ang) - dy * math.sin(ang), cy + dx * math.sin(ang) + dy * math.cos(ang)))
    return perspective_coeffs(corners, dst)


def uneven_light(rng, img: np.ndarray) -> np.ndarray:
    h, w = img.shape[:2]
    light = 1 + rng.uniform(0.15, 0.5) * smooth_noise(rng, h, w, rng.uniform(w / 4, w))
    return img * light[..., None]


def motion_kernel(rng) -> ImageFilter.Kernel:
    k = np.zeros((5, 5), np.float32)
    length = int(rng.integers(2, 6))
    ang = rng.uniform(0, math.pi)
    for t in np.linspace(-(length - 1) / 2, (length - 1) / 2, length * 3):
        k[int(round(2 + t * math.sin(ang))), int(round(2 + t * math.cos(ang)))] = 1
    return ImageFilter.Kernel((5, 5), k.flatten().tolist(), scale=float(k.sum()))


def degrade(rng, grey: Image.Image, digit_h: float, strength: float = 1.0) -> Image.Image:
    """Camera and scanner damage on a grey line image: scale, blur, noise, JPEG."""
    if rng.random() < 0.3 * strength:  # lower resolution, then back up
        f = rng.uniform(0.45, 0.85)
        w, h = grey.size
        grey = grey.resize((max(8, int(w * f)), max(8, int(h * f))), Image.BILINEAR).resize((w, h), Image.BILINEAR)
    r = rng.random()
    if r < 0.35 * strength:
        grey = grey.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, max(0.5, digit_h * 0.04))))
    elif r < 0.5 * strength:
        grey = grey.filter(motion_kernel(rng))
    if rng.random() < 0.5 * strength:
        a = np.asarray(grey, np.float32) + rng.normal(0, rng.uniform(2, 18), (grey.size[1], grey.size[0]))
        grey = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))
    if rng.random() < 0.45 * strength:
        buf = io.BytesIO()
        grey.save(buf, "JPEG", quality=int(rng.integers(20, 81)))
        grey = Image.open(io.BytesIO(buf.getvalue())).convert("L")
    return grey


def binarise(rng, grey: Image.Image) -> Image.Image:
    """Global (Otsu) or adaptive (local mean) threshold, as the scanner may pass either."""
    a = np.asarray(grey, np.float32)
    if rng.random() < 0.5:
        hist = np.bincount(a.astype(np.uint8).ravel(), minlength=256).astype(np.float64)
        p = hist / hist.sum()
        omega = np.cumsum(p)
        mu = np.cumsum(p * np.arange(256))
        with np.errstate(divide="ignore", invalid="ignore"):
            between = (mu[-1] * omega - mu) ** 2 / (omega * (1 - omega))
        t = int(np.nanargmax(between))
        out = a > t
    else:
        radius = max(3, grey.size[1] // 2)
        local = np.asarray(grey.filter(ImageFilter.BoxBlur(radius)), np.float32)
        out = a > local - rng.uniform(0, 12)
    # Keep dark text on white most of the time (what a binarising scanner passes), sometimes inverted.
    if out.mean() < 0.5:
        out = ~out
    if rng.random() < 0.25:
        out = ~out
    return Image.fromarray((out * 255).astype(np.uint8))


# MARK: - One line


def render_line(rng, face: fontlist.Face, text: str, clean: bool) -> tuple[Image.Image, dict]:
    digit_h = rng.uniform(24, 48) if clean else rng.uniform(20, 60)
    font = font_at(face, digit_h)
    tracking = rng.uniform(-0.04, 0.12) if clean else (rng.uniform(-0.08, 0.45) if rng.random() < 0.5 else rng.uniform(-0.04, 0.12))
    gap = rng.uniform(0.7, 1.6) if clean else rng.uniform(0.6, 2.6)
    if "  " in text:  # a double space in the source text means a wide gap; the truth has one space
        gap *= 1.8
        text_gt = " ".join(text.split())
    else:
        text_gt = text
    tw = text_width(font, text, tracking, gap)
    pad_x = int(digit_h * 2)
    canvas_w = int(tw + 2 * pad_x)
    canvas_h = int(digit_h * 5)
    baseline = canvas_h / 2 + digit_h / 2
    mask, box = text_mask(font, text, tracking, gap, canvas_w, canvas_h, pad_x, baseline)
    m = np.asarray(mask, np.float32) / 255
    info = {"face": face.name, "h": round(digit_h, 1)}

    neighbours = not clean and rng.random() < 0.25
    if neighbours:  # rows above and below, of which a sliver may show after cropping
        pitch = digit_h * rng.uniform(1.5, 2.3)
        for sign in (-1, 1):
            if rng.random() < 0.7:
                other = make_text(rng, slash=False)
                om, _ = text_mask(font, other, tracking, gap, canvas_w, canvas_h, pad_x + rng.uniform(-digit_h, digit_h) * 2, baseline + sign * pitch)
                m = np.maximum(m, np.asarray(om, np.float32) / 255)

    img, more = compose(rng, m, digit_h, clean)
    info.update(more)
    if not clean and rng.random() < 0.5:
        img = uneven_light(rng, img)
    pil = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))
    if not clean and rng.random() < 0.7:
        coeffs = warp(rng, pil.size, digit_h)
        pil = pil.transform(pil.size, Image.PERSPECTIVE, coeffs, Image.BICUBIC)
        box = mask.transform(mask.size, Image.PERSPECTIVE, coeffs, Image.BILINEAR).getbbox() or box

    l, t, r, b = box
    if clean:
        mt, mb = (rng.uniform(0.15, 0.4) * digit_h for _ in range(2))
        ml, mr = (rng.uniform(0.2, 0.8) * digit_h for _ in range(2))
    else:
        lo = 0.0 if neighbours else 0.05
        mt, mb = (rng.uniform(lo, 0.6) * digit_h for _ in range(2))
        if neighbours and rng.random() < 0.6:  # show a sliver of a neighbour row
            if rng.random() < 0.5:
                mt = rng.uniform(0.5, 0.9) * digit_h
            else:
                mb = rng.uniform(0.5, 0.9) * digit_h
        ml, mr = (rng.uniform(0.05, 1.5) * digit_h for _ in range(2))
    crop = (int(max(0, l - ml)), int(max(0, t - mt)), int(min(canvas_w, r + mr)), int(min(canvas_h, b + mb)))
    pil = pil.crop(crop)
    grey = pil.convert("L")
    if not clean:
        grey = degrade(rng, grey, digit_h)
        if rng.random() < 0.12:
            grey = binarise(rng, grey)
            info["binarised"] = 1
    elif rng.random() < 0.2:
        grey = grey.filter(ImageFilter.GaussianBlur(rng.uniform(0.2, 0.6)))
    return grey, {**info, "text": text_gt}


# MARK: - Main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path, help="output folder")
    ap.add_argument("--count", type=int, required=True, help="number of lines")
    ap.add_argument("--clean", action="store_true", help="dark on white, no damage (curriculum phase 1)")
    ap.add_argument("--fonts", choices=["train", "heldout"], default="train", help="which font list")
    ap.add_argument("--dates", action="store_true", help="dates only (MM/YY, MM/YYYY, two on a line), in faces with a '/'")
    ap.add_argument("--per-font", action="store_true", help="--count lines for each face instead of in all")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--prefix", default="syn", help="file name prefix")
    args = ap.parse_args()

    faces = fontlist.load(args.fonts)
    slash = {f.path: "/" not in check_fonts.missing_chars(f) for f in faces}
    rng = np.random.default_rng(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = [(i, faces[i // args.count]) for i in range(args.count * len(faces))] if args.per_font else \
        [(i, faces[int(rng.integers(0, len(faces)))]) for i in range(args.count)]
    manifest = []
    for i, face in jobs:
        name = f"{args.prefix}_{i:06d}"
        png = args.out / f"{name}.png"
        line_rng = np.random.default_rng([args.seed, i])  # each line reproducible on its own
        text = make_text(line_rng, slash[face.path], args.dates)
        img, info = render_line(line_rng, face, text, args.clean)
        img.save(png)
        (args.out / f"{name}.gt.txt").write_text(info["text"] + "\n")
        manifest.append("\t".join([name, face.family, face.style] + [f"{k}={v}" for k, v in info.items() if k not in ("face", "text")]))
    (args.out / "manifest.tsv").write_text("\n".join(manifest) + "\n")
    print(f"{args.out}: {len(jobs)} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
