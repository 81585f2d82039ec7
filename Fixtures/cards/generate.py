#!/usr/bin/env python3
"""Makes the card images in this folder and their manifest.json, deterministically.

Every image comes from a seeded random generator, so running this script again with the
same Pillow and fonts gives the same files. Only published test card numbers are used.

    python3 Fixtures/cards/generate.py            # rewrite Fixtures/cards
    python3 Fixtures/cards/generate.py --out DIR  # write somewhere else
    python3 Fixtures/cards/generate.py --out Fixtures/cards-large --seed 7 --scale 2
                                                  # a larger set the scanner has never seen
                                                  # (ignored by git; `capture-cli bench DIR`)

Kinds of image (the manifest's `kind`):
  flat      a flat scan: the card fills the frame, printed digits
  photo     a photo: the card at an angle on a plain or busy background
  embossed  raised, metallic-looking digits, flat or photographed
  back      the back of a card: stripe, signature panel, CVC, phone numbers; no card number
  other     not a card at all (a receipt, a letter) with digits but no card number
  specimen  a sample card (1234 5678 9012 3456, 4000 1234 5678 9010, runs of 0 or 8), some with
            SAMPLE/SPECIMEN/MUSTER printed, some without: never a card; the scanner answers status
            "specimen"
  failing   a genuine-looking UnionPay card whose printed 19-digit number fails the check digit:
            the scanner answers status "unverified", reason check_digit_failed, digits as printed

Sample and failing cards (files s000-...) have `pan` null and say what is printed in `printed`
(digits only), with `specimen`, `luhn_ok`, `embossed` and `word` (the SAMPLE-like word printed,
or null); they come from their own seeded generators after the main plan, so adding them left
the t/h images as they were.

Conditions (the manifest's `conditions`), applied on top of a kind:
  low_contrast, glare, blur, jpeg (saved as a JPEG, then as PNG), small (a small card in a
  large frame), rotated (a flat scan turned up to 10 degrees)

Splits (the manifest's `split`): `tune` images are what the scanner is developed against;
`holdout` images use variety the tune set never shows (number fonts, a striped card design,
another number position and label wording), so their figures say how the scanner does on
cards it has not seen.

Requires Pillow 13 (pip install pillow==13.0.0) and Debian's fonts-ocr-a, fonts-ocr-b,
fonts-dejavu-core and fonts-liberation2.
"""

import argparse
import json
import math
import os
import random

from PIL import Image, ImageDraw, ImageFilter, ImageFont

# Canonical card size used for drawing: 10 px per mm, ID-1 is 85.60 x 53.98 mm.
CARD_W, CARD_H = 856, 540

FONTS = {
    "ocr-a": "/usr/share/fonts/truetype/ocr-a/OCRA.ttf",
    "ocr-b": "/usr/share/fonts/opentype/ocr-b/OCRB.otf",
    "dejavu-mono": "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
    "dejavu-mono-bold": "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf",
    "liberation-mono": "/usr/share/fonts/truetype/liberation2/LiberationMono-Regular.ttf",
    "liberation-sans": "/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf",
    "liberation-sans-bold": "/usr/share/fonts/truetype/liberation2/LiberationSans-Bold.ttf",
    "dejavu-sans": "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
}
LABEL_FONT = "liberation-sans-bold"
TUNE_FONTS = ["ocr-a", "ocr-b", "dejavu-mono", "liberation-mono", "liberation-sans"]
HOLDOUT_FONTS = ["dejavu-mono-bold", "liberation-sans-bold", "dejavu-sans"]

# Published test numbers (processor sandboxes), by brand.
TEST_CARDS = {
    "visa": ["4111111111111111", "4242424242424242", "4012888888881881", "4000056655665556",
             "4000000000000002", "4000000000009995", "4000000000000069", "4000000000000127"],
    "mastercard": ["5555555555554444", "5105105105105100", "2223003122003222", "5200828282828210",
                   "2221000000000009"],
    "amex": ["378282246310005", "371449635398431", "378734493671000"],
    "discover": ["6011111111111117", "6011000990139424"],
    "diners": ["30569309025904", "38520000023237", "36227206271667"],
    "jcb": ["3530111333300000", "3566002020360505"],
    "unionpay": ["6200000000000005", "6200000000000047"],
    "maestro": ["6759649826438453"],
    "mir": ["2200000000000004"],
    "elo": ["5066991111111118"],
    "hipercard": ["6062828888666688"],
    "hiper": ["6370950000000005"],
}

BRAND_MARK = {
    "visa": "VISA", "mastercard": "mastercard", "amex": "AMERICAN EXPRESS", "discover": "DISCOVER",
    "diners": "Diners Club", "jcb": "JCB", "unionpay": "UnionPay", "maestro": "maestro", "mir": "MIR",
    "elo": "elo", "hipercard": "Hipercard", "hiper": "Hiper",
}

HOLDERS = ["JANE A DOE", "JOHN SMITH", "MARIA GARCIA", "LI WEI", "ALEX MORGAN", "SAM TAYLOR",
           "OLGA IVANOVA", "AMARA OKAFOR", "NOAH BROWN", "EMMA WILSON"]
BANKS = ["FIRST TEST BANK", "SANDBOX CREDIT UNION", "EXAMPLE SAVINGS", "DEMO BANK", "ACME FINANCIAL"]


def luhn_ok(number):
    total = 0
    for index, char in enumerate(reversed(number)):
        digit = int(char)
        if index % 2 == 1:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0


def group(number):
    """Splits a number the way its brand prints it."""
    if len(number) == 15:
        sizes = [4, 6, 5]
    elif len(number) == 14:
        sizes = [4, 6, 4]
    else:
        sizes = [4] * (len(number) // 4) + ([len(number) % 4] if len(number) % 4 else [])
    parts, start = [], 0
    for size in sizes:
        parts.append(number[start:start + size])
        start += size
    return parts


def font(name, size):
    return ImageFont.truetype(FONTS[name], size)


def lerp(a, b, t):
    return tuple(int(a[i] + (b[i] - a[i]) * t) for i in range(3))


def gradient(size, top, bottom, horizontal=False):
    width, height = size
    image = Image.new("RGB", size)
    draw = ImageDraw.Draw(image)
    steps = width if horizontal else height
    for i in range(steps):
        colour = lerp(top, bottom, i / max(1, steps - 1))
        if horizontal:
            draw.line([(i, 0), (i, height)], fill=colour)
        else:
            draw.line([(0, i), (width, i)], fill=colour)
    return image


def rounded_mask(size, radius):
    mask = Image.new("L", size, 0)
    ImageDraw.Draw(mask).rounded_rectangle([0, 0, size[0] - 1, size[1] - 1], radius=radius, fill=255)
    return mask


def card_palette(rng, embossed):
    if embossed:
        base = rng.choice([(150, 152, 160), (120, 130, 150), (170, 160, 130), (90, 100, 120)])
        return base, lerp(base, (230, 230, 235), 0.5), (235, 235, 240)
    light = rng.random() < 0.5
    if light:
        top = (rng.randint(200, 250), rng.randint(200, 250), rng.randint(200, 250))
        bottom = lerp(top, (rng.randint(120, 200), rng.randint(120, 200), rng.randint(150, 230)), 0.6)
        ink = rng.choice([(20, 20, 30), (40, 30, 60), (10, 40, 70)])
    else:
        top = (rng.randint(10, 80), rng.randint(10, 80), rng.randint(40, 120))
        bottom = lerp(top, (rng.randint(0, 60), rng.randint(60, 140), rng.randint(60, 160)), 0.7)
        ink = rng.choice([(245, 245, 245), (255, 230, 170), (220, 230, 255)])
    return top, bottom, ink


def draw_text(draw, xy, text, fnt, fill, embossed=False):
    if embossed:
        x, y = xy
        draw.text((x + 2, y + 2), text, font=fnt, fill=(40, 40, 45))
        draw.text((x - 1, y - 1), text, font=fnt, fill=(255, 255, 255))
        draw.text((x, y), text, font=fnt, fill=fill)
    else:
        draw.text(xy, text, font=fnt, fill=fill)


def decorate_front(card, draw, rng, ink):
    """Bank name, chip, contactless mark and some pattern, none of it a card number."""
    bank = rng.choice(BANKS)
    draw.text((48, 36), bank, font=font(LABEL_FONT, 30), fill=ink)
    # Chip.
    chip_x, chip_y = 80, 175
    draw.rounded_rectangle([chip_x, chip_y, chip_x + 110, chip_y + 85], radius=12, fill=(212, 175, 55),
                           outline=(150, 120, 40), width=2)
    for offset in (28, 56):
        draw.line([(chip_x, chip_y + offset), (chip_x + 110, chip_y + offset)], fill=(150, 120, 40), width=2)
    draw.line([(chip_x + 55, chip_y), (chip_x + 55, chip_y + 85)], fill=(150, 120, 40), width=2)
    # Contactless waves.
    for radius in (16, 28, 40):
        draw.arc([230 - radius, 217 - radius, 230 + radius, 217 + radius], start=-45, end=45, fill=ink, width=4)
    # Background circles for a little visual noise.
    for _ in range(rng.randint(0, 3)):
        cx, cy, r = rng.randint(400, 856), rng.randint(-100, 300), rng.randint(80, 260)
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], outline=lerp(ink, (128, 128, 128), 0.7), width=3)


def stripes(card, rng, ink):
    """A diagonal stripe pattern: the hold-out card design."""
    overlay = Image.new("RGB", card.size, lerp(ink, (128, 128, 128), 0.8))
    mask = Image.new("L", card.size, 0)
    draw = ImageDraw.Draw(mask)
    step = rng.randint(40, 70)
    for offset in range(-CARD_H, CARD_W, step):
        draw.polygon([(offset, 0), (offset + step // 3, 0), (offset + step // 3 + CARD_H, CARD_H),
                      (offset + CARD_H, CARD_H)], fill=rng.randint(25, 45))
    card.paste(overlay, (0, 0), mask)


def render_front(rng, number, brand, month, year, font_name, embossed=False, valid_from=None, holdout=False,
                 parts=None, word=None, word_style="corner", mark=None, expiry_text=None, holder=None):
    """A card's front. The keywords after `holdout` are for sample and failing cards only: `parts`
    prints the number in these groups, `word` prints SAMPLE or the like (`word_style` "corner": top
    right like the bank name, "banner": a red band right of the chip), `mark` replaces the brand's
    mark, `expiry_text` prints a literal expiry (month None and no expiry_text: no expiry at all),
    `holder` replaces the random holder name."""
    top, bottom, ink = card_palette(rng, embossed)
    card = gradient((CARD_W, CARD_H), top, bottom, horizontal=rng.random() < 0.5)
    if holdout and rng.random() < 0.6:
        stripes(card, rng, ink)
    draw = ImageDraw.Draw(card)
    decorate_front(card, draw, rng, ink)

    parts = parts or group(number)
    size = rng.randint(50, 58) if len(number) <= 16 else 46
    fnt = font(font_name, size)
    gap = fnt.getlength("  ")
    widths = [fnt.getlength(p) for p in parts]
    total = sum(widths) + gap * (len(parts) - 1)
    if total > CARD_W - 100:
        scale = (CARD_W - 100) / total
        fnt = font(font_name, int(size * scale))
        gap = fnt.getlength("  ")
        widths = [fnt.getlength(p) for p in parts]
        total = sum(widths) + gap * (len(parts) - 1)
    x = (CARD_W - total) / 2 if rng.random() < 0.5 else 60
    # Hold-out cards print the number a little higher, as some issuers do.
    y = rng.randint(270, 290) if holdout else rng.randint(300, 320)
    for part, width in zip(parts, widths):
        draw_text(draw, (x, y), part, fnt, ink, embossed)
        x += width + gap

    label_font = font(LABEL_FONT, 15)
    date_font = font(font_name if font_name.startswith("ocr") else "dejavu-mono", 34)
    date_y = y + size + 22
    date_x = 300
    if month is not None or expiry_text is not None:
        if expiry_text is None:
            expiry_text = f"{month:02d}/{year % 100:02d}" if rng.random() < 0.8 else f"{month:02d}/{year}"
        if valid_from:
            from_month, from_year = valid_from
            draw.multiline_text((150, date_y + 2), "VALID\nFROM", font=label_font, fill=ink, spacing=2)
            draw_text(draw, (205, date_y), f"{from_month:02d}/{from_year % 100:02d}", date_font, ink, embossed)
            date_x = 420
        label = rng.choice(["VALID\nUNTIL", "EXPIRY", "MONTH/YEAR"] if holdout else
                           ["VALID\nTHRU", "GOOD\nTHRU", "EXPIRES\nEND", "EXP"])
        draw.multiline_text((date_x, date_y + 2), label, font=label_font, fill=ink, spacing=2)
        label_width = max(label_font.getlength(line) for line in label.split("\n"))
        draw_text(draw, (date_x + label_width + 10, date_y), expiry_text, date_font, ink, embossed)

    holder = holder or rng.choice(HOLDERS)
    draw_text(draw, (60, CARD_H - 80), holder, font(font_name if font_name.startswith("ocr") else "liberation-sans", 34),
              ink, embossed)
    mark = mark if mark is not None else BRAND_MARK.get(brand)
    if mark:
        mark_font = font("liberation-sans-bold", 44 if len(mark) < 10 else 26)
        draw.text((CARD_W - 40 - mark_font.getlength(mark), CARD_H - 90), mark, font=mark_font, fill=ink)
    if word:
        draw_word(draw, word, word_style, ink)
    return card, holder


def draw_word(draw, word, style, ink):
    """SAMPLE, SPECIMEN or the like on a card's face, as readable as the bank name."""
    if style == "banner":
        word_font = font(LABEL_FONT, 40)
        left, top, right, bottom = 330, 168, CARD_W - 40, 236
        draw.rounded_rectangle([left, top, right, bottom], radius=10, fill=(190, 30, 35))
        width = word_font.getlength(word)
        draw.text(((left + right - width) / 2, top + 12), word, font=word_font, fill=(255, 255, 255))
    else:
        word_font = font(LABEL_FONT, 30)
        draw.text((CARD_W - 48 - word_font.getlength(word), 36), word, font=word_font, fill=ink)


def render_back(rng):
    top, bottom, ink = card_palette(rng, False)
    card = gradient((CARD_W, CARD_H), top, bottom)
    draw = ImageDraw.Draw(card)
    draw.rectangle([0, 50, CARD_W, 150], fill=(15, 15, 15))
    draw.rectangle([50, 190, 560, 250], fill=(245, 245, 235))
    for i in range(0, 510, 12):
        draw.line([(50 + i, 190), (50 + i + 30, 250)], fill=(220, 220, 200), width=2)
    small = font("dejavu-mono", 26)
    cvc = f"{rng.randint(100, 999)}"
    draw.text((580, 205), cvc, font=small, fill=(20, 20, 20))
    text_font = font("liberation-sans", 20)
    phone = f"1-800-555-{rng.randint(1000, 9999)}"
    lines = [
        "Customer service: " + phone,
        "This card is property of the issuing bank and must be returned on request.",
        f"Ref {rng.randint(1000, 9999)} {rng.randint(1000, 9999)} {rng.randint(10, 99)}",
        "Authorized signature - not valid unless signed",
    ]
    for index, line in enumerate(lines):
        draw.text((50, 290 + index * 40), line, font=text_font, fill=ink)
    return card


def not_luhn_number(rng, length=16):
    while True:
        digits = "".join(str(rng.randint(0, 9)) for _ in range(length))
        if not luhn_ok(digits) and digits[0] in "3456":
            return digits


def render_other(rng):
    """A receipt: totals, a date, a reference number that is not a card number."""
    width, height = 700, 900
    image = Image.new("RGB", (width, height), (250, 248, 240))
    draw = ImageDraw.Draw(image)
    mono = font("dejavu-mono", 26)
    lines = [
        "   CORNER STORE #042",
        "  12 HIGH STREET",
        f"  TEL 020 7946 {rng.randint(1000, 9999)}",
        "",
        f"DATE {rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/2026",
        f"COFFEE            {rng.randint(2, 5)}.{rng.randint(10, 99)}",
        f"BAGEL             {rng.randint(2, 5)}.{rng.randint(10, 99)}",
        f"TOTAL            {rng.randint(10, 20)}.{rng.randint(10, 99)}",
        "",
        "REF " + " ".join(group(not_luhn_number(rng))),
        f"AUTH {rng.randint(100000, 999999)}",
        "CARD ************" + str(rng.randint(1000, 9999)),
        "",
        "  THANK YOU",
    ]
    for index, line in enumerate(lines):
        draw.text((40, 40 + index * 52), line, font=mono, fill=(30, 30, 30))
    return image


def background(rng, size, busy):
    width, height = size
    if not busy:
        colour = (rng.randint(40, 230),) * 3 if rng.random() < 0.5 else (
            rng.randint(60, 200), rng.randint(60, 200), rng.randint(60, 200))
        return gradient(size, colour, lerp(colour, (0, 0, 0), 0.25))
    image = gradient(size, (rng.randint(0, 255), rng.randint(0, 255), rng.randint(0, 255)),
                     (rng.randint(0, 255), rng.randint(0, 255), rng.randint(0, 255)), horizontal=True)
    draw = ImageDraw.Draw(image)
    for _ in range(40):
        x, y = rng.randint(-100, width), rng.randint(-100, height)
        w, h = rng.randint(30, 300), rng.randint(30, 300)
        colour = (rng.randint(0, 255), rng.randint(0, 255), rng.randint(0, 255))
        if rng.random() < 0.5:
            draw.rectangle([x, y, x + w, y + h], fill=colour)
        else:
            draw.ellipse([x, y, x + w, y + h], fill=colour)
    for _ in range(6):
        draw.text((rng.randint(0, width - 200), rng.randint(0, height - 40)), str(rng.randint(10, 99999)),
                  font=font("dejavu-sans", rng.randint(20, 40)), fill=(rng.randint(0, 255),) * 3)
    return image


def perspective_coefficients(target, source):
    """Coefficients for Image.transform(PERSPECTIVE) mapping output corners `target` to input corners `source`."""
    matrix, vector = [], []
    for (x, y), (u, v) in zip(target, source):
        matrix.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        matrix.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        vector += [u, v]
    return solve(matrix, vector)


def solve(matrix, vector):
    n = len(vector)
    rows = [row[:] + [value] for row, value in zip(matrix, vector)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(rows[r][col]))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(n):
            if r != col:
                factor = rows[r][col] / rows[col][col]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col])]
    return [rows[i][n] / rows[i][i] for i in range(n)]


def photograph(rng, card, busy, angle_range=12.0, tilt=0.08, frame=(1200, 900), scale=(0.62, 0.8)):
    """Places a card on a background, rotated and in perspective, as a phone photo would."""
    width, height = frame
    scene = background(rng, frame, busy)
    card_width = rng.uniform(*scale) * width
    card_height = card_width * CARD_H / CARD_W
    centre_x = width / 2 + rng.uniform(-0.06, 0.06) * width
    centre_y = height / 2 + rng.uniform(-0.06, 0.06) * height
    angle = math.radians(rng.uniform(-angle_range, angle_range))
    corners = []
    for dx, dy in [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)]:
        # Perspective: shrink one side a little.
        squeeze = 1 - tilt * (dy + 0.5) * rng.uniform(0.2, 1.0)
        x = dx * card_width * squeeze
        y = dy * card_height
        corners.append((centre_x + x * math.cos(angle) - y * math.sin(angle),
                        centre_y + x * math.sin(angle) + y * math.cos(angle)))
    source = [(0, 0), (CARD_W, 0), (CARD_W, CARD_H), (0, CARD_H)]
    coefficients = perspective_coefficients(corners, source)
    warped = card.transform(frame, Image.PERSPECTIVE, coefficients, resample=Image.BICUBIC)
    mask = rounded_mask((CARD_W, CARD_H), 30).transform(frame, Image.PERSPECTIVE, coefficients,
                                                         resample=Image.BILINEAR)
    shadow = mask.filter(ImageFilter.GaussianBlur(12))
    scene.paste((20, 20, 20), (14, 14), shadow.point(lambda p: p // 2))
    scene.paste(warped, (0, 0), mask)
    # A little softness, as from a phone camera.
    return scene.filter(ImageFilter.GaussianBlur(0.6))


def flat_scan(rng, card):
    """A flatbed scan: the card fills the frame, with a thin margin."""
    margin = rng.randint(0, 12)
    scale = rng.uniform(0.9, 1.15)
    size = (int(CARD_W * scale), int(CARD_H * scale))
    scan = Image.new("RGB", (size[0] + 2 * margin, size[1] + 2 * margin), (250, 250, 250))
    scan.paste(card.resize(size, Image.LANCZOS), (margin, margin), rounded_mask(size, int(30 * scale)))
    return scan


CONDITIONS = ["low_contrast", "glare", "blur", "jpeg", "small", "rotated"]
COMMON_BRANDS = ["visa", "mastercard", "amex", "diners", "discover", "jcb", "unionpay"]


DEFAULT_SEED = 20261121


def plan(seed=DEFAULT_SEED, scale_all=1.0):
    """The list of images to make, each a dict of choices; deterministic for a seed."""
    rng = random.Random(seed)
    items = []
    brands = list(TEST_CARDS)

    def add(split, kind, count, **options):
        fonts = TUNE_FONTS if split == "tune" else HOLDOUT_FONTS
        for index in range(max(1, round(count * scale_all))):
            item = {"split": split, "kind": kind, "conditions": []}
            if kind in ("flat", "photo", "embossed"):
                if kind == "flat" and split == "tune" and index < len(brands):
                    item["brand"] = brands[index]
                else:
                    item["brand"] = rng.choice(COMMON_BRANDS if kind != "embossed" else ["visa", "mastercard", "amex", "diners"])
                item["font"] = fonts[index % len(fonts)] if kind != "embossed" else rng.choice(
                    ["ocr-a", "ocr-b", "dejavu-mono"] if split == "tune" else ["dejavu-mono-bold", "liberation-sans-bold"])
                item["valid_from"] = rng.random() < 0.25
            item["busy"] = rng.random() < 0.5
            item["photo"] = kind == "photo" or (kind in ("embossed", "back", "other") and rng.random() < 0.5)
            item.update(options)
            items.append(item)

    for split, scale in (("tune", 1.0), ("holdout", 0.4)):
        add(split, "flat", int(30 * scale))
        add(split, "photo", int(30 * scale))
        add(split, "embossed", int(15 * scale))
        # Harder images: each condition on flat, photo and embossed cards.
        for condition in CONDITIONS:
            for kind in ("flat", "photo", "embossed"):
                if condition == "rotated" and kind == "photo":
                    continue
                if split == "holdout" and kind == "embossed":
                    continue
                add(split, kind, 1 if split == "holdout" else 2, conditions=[condition])
        add(split, "back", int(8 * scale))
        add(split, "other", int(7 * scale))
    return items


def apply_before_photo(rng, card, conditions):
    """Conditions that belong to the card itself."""
    if "glare" in conditions:
        glare = Image.new("L", card.size, 0)
        draw = ImageDraw.Draw(glare)
        cx, cy = rng.randint(150, CARD_W - 150), rng.randint(150, CARD_H - 120)
        for radius in range(260, 0, -8):
            draw.ellipse([cx - radius * 1.6, cy - radius, cx + radius * 1.6, cy + radius],
                         fill=int(200 * (1 - radius / 260)))
        card = Image.composite(Image.new("RGB", card.size, (255, 255, 250)), card, glare.filter(ImageFilter.GaussianBlur(20)))
    if "low_contrast" in conditions:
        card = Image.blend(card, Image.new("RGB", card.size, (140, 140, 140)), rng.uniform(0.5, 0.62))
    return card


def apply_after(rng, image, conditions):
    """Conditions of the camera or scanner."""
    if "blur" in conditions:
        image = image.filter(ImageFilter.GaussianBlur(rng.uniform(1.4, 2.0)))
    if "jpeg" in conditions:
        import io
        buffer = io.BytesIO()
        image.save(buffer, "JPEG", quality=rng.randint(30, 55))
        buffer.seek(0)
        image = Image.open(buffer).convert("RGB")
    return image


def finish(rng, card, kind, conditions, photo, busy):
    """The card as scanned or photographed, with its conditions."""
    card = apply_before_photo(rng, card, conditions)
    if "small" in conditions:
        image = photograph(rng, card, busy, frame=(1600, 1200), scale=(0.3, 0.42))
    elif photo:
        image = photograph(rng, card, busy)
    elif kind == "other":
        image = card
    else:
        image = flat_scan(rng, card)
        if "rotated" in conditions:
            angle = rng.choice([-1, 1]) * rng.uniform(3, 10)
            image = image.rotate(angle, resample=Image.BICUBIC, expand=True, fillcolor=(250, 250, 250))
    return apply_after(rng, image, conditions)


# Sample cards: the printed number is a pattern, not a card's. Each: number, its printed groups,
# font, split, photographed, busy background, embossed, a SAMPLE-like word and where, a brand's
# mark printed for show (the manifest's brand stays null), expiry ((month, year), a literal or
# None for none), holder (None: a random name) and conditions.
SPECIMENS = [
    ("1234567890123456", None, "ocr-a", "tune", False, False, False, "SAMPLE", "corner", None, (12, 2028), "CARDHOLDER NAME", []),
    ("1234567800000000", None, "liberation-sans", "tune", True, False, False, None, None, None, (1, 2030), None, []),
    ("1234567890123456", None, "dejavu-mono-bold", "holdout", True, True, False, "SPECIMEN", "banner", None, None, None, []),
    ("0000000000000000", None, "ocr-b", "tune", False, False, False, None, None, None, "MM/YY", None, []),
    ("4000123456789010", None, "ocr-a", "tune", False, False, True, "SAMPLE CARD", "banner", "VISA", (12, 2029), "JOHN DOE", []),
    ("5412750000000000", None, "dejavu-mono", "tune", True, True, False, None, None, "mastercard", (6, 2029), None, ["jpeg"]),
    ("6225888888888888", None, "ocr-b", "tune", True, False, False, "SAMPLE", "corner", "UnionPay", (8, 2031), None, []),
    ("123456789012345", ["1234", "567890", "12345"], "liberation-sans-bold", "holdout", True, False, True, "SPECIMEN",
     "corner", "AMERICAN EXPRESS", (3, 2030), "CARDHOLDER NAME", []),
    ("6200000000000000000", None, "dejavu-mono", "tune", False, False, False, None, None, None, None, None, []),
    ("1234567890123456", None, "liberation-sans", "tune", False, False, False, "MUSTER", "corner", None, (10, 2029),
     "MAX MUSTERMANN", ["glare"]),
    ("4000123456789010", None, "dejavu-mono-bold", "holdout", True, False, False, None, None, "VISA", (5, 2030), None, []),
    ("0000000000000000", None, "liberation-sans-bold", "holdout", True, True, False, None, None, None, (9, 2028), None, []),
]

# Genuine-looking UnionPay cards whose printed 19-digit number fails the check digit: grouping,
# font, split, photographed, busy background.
FAILING = [
    (None, "ocr-a", "tune", False, False),
    ([6, 13], "dejavu-mono-bold", "holdout", True, False),
]

# Digits a reader may take one for another; a failing number that one such slip turns into a
# number that passes could be "repaired" into someone's card, so none is used.
CONFUSABLE = {"0": "8", "8": "0369", "1": "7", "7": "1", "3": "8", "5": "6", "6": "58", "9": "8"}


def failing_number(rng, length=19, prefix="62"):
    """A number that fails the check, and still fails after any one slip between confusable digits."""
    while True:
        digits = prefix + "".join(str(rng.randint(0, 9)) for _ in range(length - len(prefix)))
        if luhn_ok(digits):
            continue
        slips = (digits[:i] + other + digits[i + 1:] for i, char in enumerate(digits) for other in CONFUSABLE.get(char, ""))
        if not any(luhn_ok(slip) for slip in slips):
            return digits


def make_specimens(out_dir, seed=DEFAULT_SEED, scale_all=1.0):
    """Sample cards and cards whose number fails the check: files s000-... after the main plan.

    Their own generators, so the main plan's images stay as they were."""
    entries = []
    base = 5000 if seed == DEFAULT_SEED else seed * 100_000 + 50_000
    numbers = random.Random(base - 1)
    specs = [("specimen",) + spec for spec in SPECIMENS]
    for grouping, font_name, split, photo, busy in FAILING:
        number = failing_number(numbers)
        parts = group(number) if grouping is None else [number[:grouping[0]], number[grouping[0]:]]
        specs.append(("failing", number, parts, font_name, split, photo, busy, False, None, None, None, "random", None, []))
    specs = specs * max(1, round(scale_all))
    for index, spec in enumerate(specs):
        (kind, number, parts, font_name, split, photo, busy, embossed, word, word_style, mark, expiry, holder,
         conditions) = spec
        rng = random.Random(base + index)
        parts = parts or group(number)
        month = year = expiry_text = None
        if expiry == "random":
            month, year = rng.randint(1, 12), rng.randint(2026, 2031)
        elif isinstance(expiry, tuple):
            month, year = expiry
        elif expiry is not None:
            expiry_text = expiry
        brand = "unionpay" if kind == "failing" else None
        card, holder = render_front(rng, number, brand, month, year, font_name, embossed=embossed,
                                    holdout=(split == "holdout"), parts=parts, word=word,
                                    word_style=word_style or "corner", mark=mark, expiry_text=expiry_text, holder=holder)
        image = finish(rng, card, kind, conditions, photo, busy)
        name = f"s{index:03d}-{'-'.join([kind] + conditions + ([brand] if brand else []))}.png"
        image.save(os.path.join(out_dir, name), optimize=True)
        entries.append({"file": name, "pan": None, "month": month, "year": year, "brand": brand, "kind": kind,
                        "split": split, "conditions": conditions, "holder": holder, "font": font_name,
                        "validFrom": False, "grouping": "-".join(str(len(p)) for p in parts), "photo": photo,
                        "busy": busy if photo else False, "specimen": kind == "specimen", "printed": number,
                        "luhn_ok": luhn_ok(number), "embossed": embossed, "word": word})
    return entries


def make(out_dir, seed=DEFAULT_SEED, scale_all=1.0):
    os.makedirs(out_dir, exist_ok=True)
    for name in os.listdir(out_dir):
        if name.endswith(".png"):
            os.remove(os.path.join(out_dir, name))
    manifest = []
    used = {}
    # The default seed keeps the committed images exactly as they were.
    offset = 1000 if seed == DEFAULT_SEED else seed * 100_000
    for index, item in enumerate(plan(seed, scale_all)):
        rng = random.Random(offset + index)
        kind, split, conditions = item["kind"], item["split"], item["conditions"]
        entry = {"file": None, "pan": None, "month": None, "year": None, "brand": item.get("brand"), "kind": kind,
                 "split": split, "conditions": conditions}
        holdout = split == "holdout"
        if kind in ("flat", "photo", "embossed"):
            brand = item["brand"]
            numbers = TEST_CARDS[brand]
            number = numbers[used.get(brand, 0) % len(numbers)]
            used[brand] = used.get(brand, 0) + 1
            assert luhn_ok(number), number
            month, year = rng.randint(1, 12), rng.randint(2026, 2031)
            valid_from = (rng.randint(1, 12), year - rng.randint(3, 5)) if item["valid_from"] else None
            card, holder = render_front(rng, number, brand, month, year, item["font"], embossed=(kind == "embossed"),
                                        valid_from=valid_from, holdout=holdout)
            entry.update({"pan": number, "month": month, "year": year, "holder": holder, "font": item["font"],
                          "validFrom": bool(valid_from), "grouping": "-".join(str(len(p)) for p in group(number))})
        elif kind == "back":
            card = render_back(rng)
        else:
            card = render_other(rng).resize((CARD_W, CARD_H)) if item["photo"] else render_other(rng)
        image = finish(rng, card, kind, conditions, item["photo"], item["busy"])
        entry["photo"] = bool(item["photo"] or "small" in conditions)
        entry["busy"] = bool(item["busy"]) if entry["photo"] else False
        tag = "-".join([kind] + conditions + ([entry["brand"]] if entry["brand"] else []))
        name = f"{'h' if holdout else 't'}{index:03d}-{tag}.png"
        entry["file"] = name
        image.save(os.path.join(out_dir, name), optimize=True)
        manifest.append(entry)
    manifest += make_specimens(out_dir, seed, scale_all)
    with open(os.path.join(out_dir, "manifest.json"), "w") as handle:
        json.dump(manifest, handle, indent=1)
        handle.write("\n")
    return manifest


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)), help="output folder")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help="another seed makes other cards of the same kinds (default: the committed set)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the number of images of every kind")
    args = parser.parse_args()
    manifest = make(args.out, args.seed, args.scale)
    print(f"wrote {len(manifest)} images and manifest.json to {args.out}")


if __name__ == "__main__":
    main()
