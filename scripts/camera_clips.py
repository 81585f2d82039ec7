#!/usr/bin/env python3
"""Clips for Chromium's fake camera (--use-file-for-fake-video-capture): a card held in front
of a phone, as a Y4M file (raw YUV 4:2:0, which Chromium loops).

Each frame puts the card on a table-coloured background, moving a little (shift, turn, scale,
as a hand holds it), some frames blurred (the hand moves, the focus hunts) and some with a
glare passing over the card. Also a specimen card (Pillow-drawn: SPECIMEN across it, by default a
number that fails the check digit, or a sample number that passes it) and a clip with no card at all.

    python3 scripts/camera_clips.py Fixtures/cards/t012-flat-visa.png /tmp/visa.y4m
    python3 scripts/camera_clips.py --specimen /tmp/specimen.y4m
    python3 scripts/camera_clips.py --empty /tmp/empty.y4m
"""

import argparse
import math
import random

from PIL import Image, ImageDraw, ImageFilter, ImageFont

WIDTH, HEIGHT = 1280, 720
FPS = 10


def background(seed: int) -> Image.Image:
    """A wooden-table brown with a little grain and a shadow, the same for every frame."""
    rng = random.Random(seed)
    image = Image.new("RGB", (WIDTH, HEIGHT), (122, 96, 70))
    draw = ImageDraw.Draw(image)
    for _ in range(160):
        y = rng.randrange(HEIGHT)
        shade = rng.randrange(-18, 18)
        draw.line([(0, y), (WIDTH, y + rng.randrange(-30, 30))], fill=(122 + shade, 96 + shade, 70 + shade), width=rng.randrange(1, 4))
    return image.filter(ImageFilter.GaussianBlur(1.2))


def specimen_card(number: str = "4000 1234 5678 9011", word: str = "SPECIMEN") -> Image.Image:
    """A sample card as banks print for advertising. By default its number is not a card's (the
    check digit fails); `number` may be a sample that passes it (issue 64: the camera took
    6225 7688 8888 8888, printed on a bank's sample card, and it was paid with)."""
    card = Image.new("RGB", (856, 540), (24, 62, 128))
    draw = ImageDraw.Draw(card)
    for y in range(540):
        draw.line([(0, y), (856, y)], fill=(24 + y // 12, 62 + y // 10, 128 + y // 8))
    bold = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
    sans = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
    draw.text((60, 50), "SAMPLE BANK", font=ImageFont.truetype(sans, 44), fill=(255, 255, 255))
    if word:
        draw.text((520, 140), word, font=ImageFont.truetype(sans, 56), fill=(255, 210, 90))
    draw.rounded_rectangle([(70, 160), (190, 250)], radius=12, fill=(212, 175, 55))
    draw.text((70, 300), number, font=ImageFont.truetype(bold, 64), fill=(255, 255, 255))
    draw.text((420, 400), "VALID THRU 12/30", font=ImageFont.truetype(bold, 34), fill=(255, 255, 255))
    draw.text((70, 460), "A. SAMPLE", font=ImageFont.truetype(bold, 34), fill=(255, 255, 255))
    return card


def frames(card, seed: int, count: int):
    """The clip's frames: the card (or nothing) on the table, moving, some blurred, some with glare."""
    rng = random.Random(seed)
    table = background(seed)
    for index in range(count):
        frame = table.copy()
        if card is not None:
            phase = 2 * math.pi * index / count
            scale = 0.62 + 0.03 * math.sin(phase)
            width = int(WIDTH * scale)
            height = int(card.height * width / card.width)
            held = card.convert("RGBA").resize((width, height), Image.LANCZOS).rotate(3 * math.sin(phase * 2), expand=True, resample=Image.BICUBIC)
            x = (WIDTH - held.width) // 2 + int(25 * math.sin(phase))
            y = (HEIGHT - held.height) // 2 + int(15 * math.cos(phase))
            shadow = Image.new("RGBA", held.size, (0, 0, 0, 0))
            shadow.paste((0, 0, 0, 90), mask=held.split()[3])
            frame.paste(shadow, (x + 8, y + 10), shadow)
            frame.paste(held, (x, y), held)
            if index % 4 == 1:
                # A glare: a bright soft ellipse sliding across the card.
                glare = Image.new("L", (WIDTH, HEIGHT), 0)
                gx = x + int(held.width * (0.2 + 0.6 * (index % 8) / 8))
                ImageDraw.Draw(glare).ellipse([(gx - 90, y + 20), (gx + 90, y + 140)], fill=150)
                glare = glare.filter(ImageFilter.GaussianBlur(40))
                frame = Image.composite(Image.new("RGB", (WIDTH, HEIGHT), (255, 255, 250)), frame, glare)
        if index % 5 == 2:
            frame = frame.filter(ImageFilter.GaussianBlur(rng.uniform(2.0, 3.5)))
        yield frame


def write_y4m(path: str, images) -> int:
    count = 0
    with open(path, "wb") as out:
        out.write(b"YUV4MPEG2 W%d H%d F%d:1 Ip A1:1 C420jpeg\n" % (WIDTH, HEIGHT, FPS))
        for image in images:
            y, cb, cr = image.convert("YCbCr").split()
            half = (WIDTH // 2, HEIGHT // 2)
            out.write(b"FRAME\n")
            out.write(y.tobytes())
            out.write(cb.resize(half, Image.BILINEAR).tobytes())
            out.write(cr.resize(half, Image.BILINEAR).tobytes())
            count += 1
    return count


def make(path: str, card_path: str = None, specimen: bool = False, seed: int = 1, count: int = 24, sample: str = None) -> int:
    """`sample`: the specimen card's printed number (by default one that fails the check digit)."""
    card = Image.open(card_path).convert("RGB") if card_path else specimen_card(*([sample] if sample else [])) if specimen else None
    return write_y4m(path, frames(card, seed, count))


def main():
    parser = argparse.ArgumentParser(description="a fake camera's clip of a card (Y4M)")
    parser.add_argument("card", nargs="?", help="the card's picture (PNG or JPEG)")
    parser.add_argument("out")
    parser.add_argument("--specimen", action="store_true", help="a specimen card instead")
    parser.add_argument("--empty", action="store_true", help="no card at all")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--frames", type=int, default=24)
    arguments = parser.parse_args()
    if not arguments.card and not arguments.specimen and not arguments.empty:
        parser.error("give a card's picture, --specimen or --empty")
    make(arguments.out, None if arguments.empty else arguments.card, arguments.specimen, arguments.seed, arguments.frames)


if __name__ == "__main__":
    main()
