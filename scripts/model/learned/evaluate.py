#!/usr/bin/env python3
"""Scores ONNX CTC line recognizers with OpenVINO (CPU, 1 thread): the learned card-digit model and, for
comparison, PP-OCRv4's recognizer.

Each line goes through the runtime's preprocessing (lines.py: height 48, aspect kept, left-aligned, padded
with 0.0 to a multiple of 32 and at least 320), one image per call, greedy CTC decode. Readings of a model
with a larger character table are restricted to digits, '/' and space afterwards. Scoring as in
scripts/model/evaluate.py: runs of spaces count as one, ends trimmed; CER = edit distance / characters of
truth over the whole set; "CER no sp" compares with all spaces removed; "lines" = readings equal to the truth.

    evaluate.py --model Models/card-digits.onnx --keys Models/card-digits.keys.txt \\
        --set real-eval=DIR --set heldout-fonts=DIR [--compare ONNX KEYS] [--json out.json]
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import openvino as ov

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lines  # noqa: E402


def edits(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def read_keys(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n")


class Reader:
    def __init__(self, core, onnx: Path, keys: Path):
        self.model = core.compile_model(str(onnx), "CPU", {"INFERENCE_NUM_THREADS": 1})
        self.table = read_keys(keys)

    def read(self, grey: np.ndarray) -> str:
        probs = self.model(lines.to_input(grey))[0][0]
        raw = lines.greedy(probs, self.table)
        return lines.norm("".join(c for c in raw if c in lines.CHARS))

    def ms_per_line(self, width: int = 320, runs: int = 200) -> float:
        x = np.random.default_rng(0).uniform(-1, 1, (1, 3, lines.HEIGHT, width)).astype(np.float32)
        for _ in range(10):
            self.model(x)
        t = time.perf_counter()
        for _ in range(runs):
            self.model(x)
        return (time.perf_counter() - t) * 1000 / runs


def score(reader: Reader, items) -> dict:
    e = e_ns = n = n_ns = ok = ok_ns = 0
    for grey, truth in items:
        got = reader.read(grey)
        e += edits(got, truth); n += len(truth); ok += got == truth
        g2, t2 = got.replace(" ", ""), truth.replace(" ", "")
        e_ns += edits(g2, t2); n_ns += len(t2); ok_ns += g2 == t2
    return {
        "lines": len(items),
        "cer": round(100 * e / n, 2), "line_acc": round(100 * ok / len(items), 2),
        "cer_nospace": round(100 * e_ns / n_ns, 2), "line_acc_nospace": round(100 * ok_ns / len(items), 2),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--keys", type=Path, required=True)
    ap.add_argument("--set", action="append", default=[], help="NAME=DIR")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("ONNX", "KEYS"))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    core = ov.Core()
    readers = {args.model.name: Reader(core, args.model, args.keys)}
    if args.compare:
        readers[args.compare[0].name] = Reader(core, *args.compare)
    sets = {}
    for s in args.set:
        name, d = s.split("=", 1)
        sets[name] = [(lines.scaled_grey(p), t) for p, t in lines.read_set(Path(d))]

    result = {}
    print("| model | set | lines | CER % | line acc % | CER no sp % | line acc no sp % |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for mname, r in readers.items():
        result[mname] = {"ms_per_48x320_line": round(r.ms_per_line(), 2)}
        for sname, items in sets.items():
            s = score(r, items)
            result[mname][sname] = s
            print(f"| {mname} | {sname} | {s['lines']} | {s['cer']} | {s['line_acc']} | {s['cer_nospace']} | {s['line_acc_nospace']} |")
    for mname in readers:
        print(f"{mname}: {result[mname]['ms_per_48x320_line']} ms per 48x320 line (OpenVINO CPU, 1 thread)")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
