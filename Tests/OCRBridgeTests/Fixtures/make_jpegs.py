#!/usr/bin/env python3
"""Writes the small JPEG files the OCRBridge tests decode, with Pillow (libjpeg-turbo inside,
an encoder apart from the project's own), so the decoder is tested on files it did not write.

Every well-formed file shows the same 48 x 32 picture, in flat 8 x 8 blocks so that JPEG's
loss leaves the block centres exact to a few levels: columns 0-23 black, 24-47 white, and the
top-left block (0-7, 0-7) pure red in colour files (mid grey in grey ones).

Also writes a CMYK file (refused), a file cut in half, one with its coded data scrambled,
one whose header claims 60000 x 60000 pixels (a decompression bomb), a real JPEG named .png
(read by its content), and one with an EXIF orientation written by Pillow.

    python3 -m venv /tmp/pil && /tmp/pil/bin/pip install pillow==11.3.0
    /tmp/pil/bin/python Tests/OCRBridgeTests/Fixtures/make_jpegs.py
"""

import os

from PIL import Image

WIDTH, HEIGHT = 48, 32
HERE = os.path.dirname(os.path.abspath(__file__))


def picture(mode):
    image = Image.new("RGB", (WIDTH, HEIGHT), (255, 255, 255))
    for y in range(HEIGHT):
        for x in range(WIDTH // 2):
            image.putpixel((x, y), (0, 0, 0))
    for y in range(8):
        for x in range(8):
            image.putpixel((x, y), (255, 0, 0))
    if mode == "L":
        image = image.convert("L")
        for y in range(8):
            for x in range(8):
                image.putpixel((x, y), 128)
    return image


def save(image, name, **options):
    image.save(os.path.join(HERE, name), "JPEG", **options)


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as file:
        file.write(data)


def main():
    save(picture("RGB"), "jpeg-baseline-rgb.jpg", quality=95, subsampling=0)
    save(picture("RGB"), "jpeg-progressive-rgb.jpg", quality=90, subsampling=2, progressive=True)
    save(picture("L"), "jpeg-baseline-grey.jpg", quality=95)
    save(picture("L"), "jpeg-progressive-grey.jpg", quality=90, progressive=True)
    save(picture("RGB").convert("CMYK"), "jpeg-cmyk.jpg", quality=95)
    # Stored on its side, as a phone held upright stores it: EXIF 6 turns it back clockwise.
    exif = Image.Exif()
    exif[0x0112] = 6
    save(picture("RGB").transpose(Image.Transpose.ROTATE_90), "jpeg-exif-6.jpg", quality=95, subsampling=0, exif=exif)

    with open(os.path.join(HERE, "jpeg-baseline-rgb.jpg"), "rb") as file:
        whole = file.read()
    write("broken-jpeg-truncated.jpg", whole[: len(whole) // 2])
    write("jpeg-named.png", whole)
    # Scramble the entropy-coded data after the start-of-scan header, keeping the markers.
    scan = whole.index(b"\xff\xda")
    body = bytearray(whole)
    for index in range(scan + 20, len(whole) - 2, 3):
        body[index] = 0xFF if body[index] != 0xFF else 0x00
    write("broken-jpeg-corrupt.jpg", bytes(body))
    # The frame header (SOF0) claims 60000 x 60000 pixels; the file stays tiny.
    bomb = bytearray(whole)
    frame = whole.index(b"\xff\xc0")
    bomb[frame + 5 : frame + 9] = (60000).to_bytes(2, "big") + (60000).to_bytes(2, "big")
    write("broken-jpeg-bomb.jpg", bytes(bomb))


if __name__ == "__main__":
    main()
