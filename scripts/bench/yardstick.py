#!/usr/bin/env python3
"""The yardstick: a generic deep-learning OCR (PyPI's rapidocr-onnxruntime, PP-OCRv4's detector and
recognizer on ONNX Runtime) with a check-digit filter and no card logic, writing what it reads in the
form of `capture-cli scan --json --reveal`, so that the same scorers score both.

usage: yardstick.py IMAGE... > OUT.jsonl      (run with the interpreter of .vendor/yardstick,
                                               which scripts/bench/install-yardstick.sh makes)

Per picture: every detected line is recognized, and the lines on one row are joined left to right (the
detector often cuts a number into its groups); consecutive digit groups of a line or row that make 13 to
19 digits and pass the check digit are a number, the longest such one is reported; the first MM/YY in any
line is the expiry. One picture at a time, on one thread, timed from the file's
decoding to the answer, as `scan --jobs 1` is.
"""
import json
import os
import re
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")


def luhn_ok(digits):
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


DATE = re.compile(r"(?<!\d)(0[1-9]|1[0-2])\s?[/-]\s?(\d{2})(?!\d)")


def rows(result):
    """The detected lines joined into rows, left to right: boxes whose vertical middles lie within
    half a line's height of each other (the detector often cuts a number into its groups)."""
    boxes = []
    for points, text, _ in result or []:
        ys = [p[1] for p in points]
        xs = [p[0] for p in points]
        boxes.append(((min(ys) + max(ys)) / 2, max(ys) - min(ys), min(xs), text))
    joined = []
    for middle, height, left, text in sorted(boxes):
        for row in joined:
            if abs(row["middle"] - middle) < 0.5 * min(height, row["height"]):
                row["parts"].append((left, text))
                break
        else:
            joined.append({"middle": middle, "height": height, "parts": [(left, text)]})
    return [" ".join(text for _, text in sorted(row["parts"])) for row in joined]


def numbers_in(text):
    """Runs of digit groups (split at anything that is not a digit) making 13 to 19 digits that
    pass the check digit."""
    groups = re.findall(r"\d+", text)
    found = []
    for start in range(len(groups)):
        digits = ""
        for group in groups[start:]:
            digits += group
            if len(digits) > 19:
                break
            if len(digits) >= 13 and luhn_ok(digits):
                found.append(digits)
    return found


def read(engine, path):
    start = time.perf_counter()
    result, _ = engine(path)
    lines = [item[1] for item in (result or [])] + rows(result)
    numbers = [number for text in lines for number in numbers_in(text)]
    expiry = None
    for text in lines:
        match = DATE.search(text)
        if match:
            expiry = {"month": int(match.group(1)), "year": 2000 + int(match.group(2))}
            break
    ms = (time.perf_counter() - start) * 1000
    pan = max(numbers, key=len) if numbers else None
    out = {"file": path, "status": "found" if pan else "not_found", "expiry": expiry, "ms": round(ms, 1)}
    if pan:
        out["pan"] = pan
    return out


def main():
    paths = sys.argv[1:]
    if not paths:
        sys.exit(__doc__)
    from rapidocr_onnxruntime import RapidOCR

    engine = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1)
    for path in paths:
        print(json.dumps(read(engine, path)), flush=True)


if __name__ == "__main__":
    main()
