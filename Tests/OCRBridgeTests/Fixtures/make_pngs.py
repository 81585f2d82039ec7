#!/usr/bin/env python3
"""Writes the tiny PNG files the OCRBridge tests decode, byte by byte with zlib.

Every well-formed file shows the same 9 x 7 picture, so the tests can check pixels:
columns 0-3 black, columns 4-8 white; in colour files pixel (0, 0) is pure red; in
files with transparency pixel (0, 6) is fully transparent (white once composited).
Odd sizes make every Adam7 pass partial, which is what breaks naive interlace code.

Also writes broken files: empty, truncated, a bad CRC, a JPEG renamed .png, and a
header claiming 100000 x 100000 pixels.

    python3 Tests/OCRBridgeTests/Fixtures/make_pngs.py
"""

import os
import struct
import zlib

WIDTH, HEIGHT = 9, 7
HERE = os.path.dirname(os.path.abspath(__file__))


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def pixel(x, y, colour, alpha):
    """(r, g, b, a) as fractions of full scale."""
    value = 0.0 if x < 4 else 1.0
    r = g = b = value
    if colour and (x, y) == (0, 0):
        r, g, b = 1.0, 0.0, 0.0
    a = 0.0 if alpha and (x, y) == (0, HEIGHT - 1) else 1.0
    return r, g, b, a


def pack_samples(samples, depth):
    """Packs a row of integer samples at `depth` bits, most significant first."""
    if depth == 8:
        return bytes(samples)
    if depth == 16:
        return b"".join(struct.pack(">H", s) for s in samples)
    out, acc, bits = bytearray(), 0, 0
    for s in samples:
        acc = (acc << depth) | s
        bits += depth
        if bits == 8:
            out.append(acc)
            acc, bits = 0, 0
    if bits:
        out.append(acc << (8 - bits))
    return bytes(out)


def row_samples(y, xs, colour_type, depth):
    top = (1 << depth) - 1
    samples = []
    for x in xs:
        r, g, b, a = pixel(x, y, colour_type in (2, 3, 6), colour_type in (3, 4, 6))
        if colour_type == 0:
            samples.append(round(r * top))
        elif colour_type == 2:
            samples += [round(r * top), round(g * top), round(b * top)]
        elif colour_type == 3:
            # Palette: 0 black, 1 white, 2 red, 3 transparent.
            if a == 0:
                samples.append(3)
            elif (r, g, b) == (1.0, 0.0, 0.0):
                samples.append(2)
            else:
                samples.append(0 if r == 0 else 1)
        elif colour_type == 4:
            samples += [round(r * top), round(a * top)]
        elif colour_type == 6:
            samples += [round(r * top), round(g * top), round(b * top), round(a * top)]
    return samples


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def image_data(colour_type, depth, interlaced):
    raw = bytearray()
    if not interlaced:
        passes = [(0, 0, 1, 1)]
    else:
        passes = ADAM7
    for x0, y0, dx, dy in passes:
        xs = list(range(x0, WIDTH, dx))
        if not xs:
            continue
        for y in range(y0, HEIGHT, dy):
            raw.append(0)  # filter type None
            raw += pack_samples(row_samples(y, xs, colour_type, depth), depth)
    return zlib.compress(bytes(raw), 9)


def png(colour_type, depth, interlaced=False, width=WIDTH, height=HEIGHT, data=None):
    header = struct.pack(">IIBBBBB", width, height, depth, colour_type, 0, 0, 1 if interlaced else 0)
    chunks = [chunk(b"IHDR", header)]
    if colour_type == 3:
        chunks.append(chunk(b"PLTE", bytes([0, 0, 0, 255, 255, 255, 255, 0, 0, 0, 0, 0])))
        chunks.append(chunk(b"tRNS", bytes([255, 255, 255, 0])))
    chunks.append(chunk(b"IDAT", data if data is not None else image_data(colour_type, depth, interlaced)))
    chunks.append(chunk(b"IEND", b""))
    return b"\x89PNG\r\n\x1a\n" + b"".join(chunks)


def main():
    files = {
        "grey-1.png": png(0, 1), "grey-2.png": png(0, 2), "grey-4.png": png(0, 4),
        "grey-8.png": png(0, 8), "grey-16.png": png(0, 16),
        "grey-alpha-8.png": png(4, 8), "grey-alpha-16.png": png(4, 16),
        "rgb-8.png": png(2, 8), "rgb-16.png": png(2, 16),
        "rgba-8.png": png(6, 8), "rgba-16.png": png(6, 16),
        "palette-1.png": None, "palette-2.png": png(3, 2), "palette-4.png": png(3, 4), "palette-8.png": png(3, 8),
        "interlaced-grey-8.png": png(0, 8, True), "interlaced-rgb-8.png": png(2, 8, True),
        "interlaced-rgba-16.png": png(6, 16, True), "interlaced-palette-4.png": png(3, 4, True),
        "interlaced-grey-1.png": png(0, 1, True),
    }
    del files["palette-1.png"]  # four palette entries need two bits
    good = files["rgb-8.png"]
    files["broken-empty.png"] = b""
    files["broken-truncated.png"] = good[: len(good) // 2]
    corrupt = bytearray(good)
    idat = corrupt.index(b"IDAT")
    corrupt[idat + 6] ^= 0xFF  # a byte of compressed data, leaving the stored CRC wrong
    files["broken-bad-crc.png"] = bytes(corrupt)
    # 100000 x 100000 grey: a valid header and a tiny (wrong) data stream.
    files["broken-huge-header.png"] = png(0, 8, width=100000, height=100000, data=zlib.compress(b"\x00" * 16))
    files["broken-not-png.png"] = b"this is a text file, not an image\n"
    files["broken-jpeg.png"] = jpeg()
    files["text-digits.png"] = text_line("4111 1111 1111 1111")
    files["text-words.png"] = text_line("VALID THRU 12/27")
    for name, data in files.items():
        with open(os.path.join(HERE, name), "wb") as handle:
            handle.write(data)
    print(f"wrote {len(files)} files to {HERE}")


def text_line(text):
    """One line of dark OCR-B text on white, about 40 px high, for the engine tests."""
    import io

    from PIL import Image, ImageDraw, ImageFont

    fnt = ImageFont.truetype("/usr/share/fonts/opentype/ocr-b/OCRB.otf", 40)
    width = int(fnt.getlength(text)) + 40
    image = Image.new("L", (width, 70), 255)
    ImageDraw.Draw(image).text((20, 12), text, font=fnt, fill=0)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def jpeg():
    """A real 8 x 8 baseline JPEG, from Pillow (pip install pillow)."""
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


if __name__ == "__main__":
    main()
