#!/usr/bin/env python3
"""Scores a Tesseract model on card text lines: character error rate and whole-line accuracy.

Sets (folders of NAME.png + NAME.gt.txt, made by make_model.sh):
  heldout-fonts  synthetic lines in the 8 held-out typefaces (scored per typeface and in all)
  real-eval      the held-out real embossed crops (../shared/cards-train, split by group hash)
  synth-eval     synthetic lines in the training typefaces, seeds never used for training
Each set is read with `tesseract --tessdata-dir DIR -l LANG --psm 7`, for the card model and for Debian's
`eng` limited to "0123456789 /" for comparison.

Scoring: runs of spaces count as one space and ends are trimmed, in the truth and the reading alike.
CER = edit distance / characters of truth, over the whole set; "CER no sp" ignores spaces (how the digits
alone fare); "lines" = readings equal to the truth.

    evaluate.py --tessdata-dir Sources/CardCapture/Resources --lang card --data .model-work/data [--json out.json] [--eng]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

SETS = ["heldout-fonts", "real-eval", "synth-eval"]
WHITELIST = "0123456789 /"


def norm(s: str) -> str:
    return " ".join(s.split())


def edits(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def read_lines(pngs: list[Path], tessdata: str, lang: str, whitelist: bool) -> list[str]:
    """One tesseract process for the whole list; pages come back separated by form feeds."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("".join(f"{p.resolve()}\n" for p in pngs))
        listfile = f.name
    cmd = ["tesseract", listfile, "stdout", "--tessdata-dir", tessdata, "-l", lang, "--psm", "7"]
    if whitelist:
        cmd += ["-c", f"tessedit_char_whitelist={WHITELIST}"]
    env = dict(os.environ, OMP_THREAD_LIMIT="1")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    os.unlink(listfile)
    # The text renderer puts the page separator (form feed) before every page but the first.
    pages = out.split("\f")
    if len(pages) != len(pngs):
        if len(pngs) == 1:
            return [norm(out.replace("\f", ""))]
        print(f"tesseract gave {len(pages)} pages for {len(pngs)} images: reading one by one", file=sys.stderr)
        return [read_lines([p], tessdata, lang, whitelist)[0] for p in pngs]
    return [norm(p) for p in pages]


class Score:
    def __init__(self):
        self.chars = self.errs = self.chars_ns = self.errs_ns = self.lines = self.right = 0

    def add(self, truth: str, got: str) -> None:
        self.chars += len(truth)
        self.errs += edits(got, truth)
        t, g = truth.replace(" ", ""), got.replace(" ", "")
        self.chars_ns += len(t)
        self.errs_ns += edits(g, t)
        self.lines += 1
        self.right += truth == got

    def row(self) -> dict:
        return {"lines": self.lines,
                "cer": round(100 * self.errs / max(1, self.chars), 2),
                "cer_nospace": round(100 * self.errs_ns / max(1, self.chars_ns), 2),
                "line_acc": round(100 * self.right / max(1, self.lines), 2)}


def face_of(folder: Path) -> dict[str, str]:
    manifest = folder / "manifest.tsv"
    out = {}
    if manifest.exists():
        for line in manifest.read_text().splitlines():
            cols = line.split("\t")
            if len(cols) >= 3 and folder.name == "heldout-fonts":
                out[cols[0]] = cols[1]
    return out


def evaluate(data: Path, tessdata: str, lang: str, whitelist: bool, errors_out: Path | None) -> dict:
    result = {}
    wrong = []
    for name in SETS:
        folder = data / name
        pngs = sorted(folder.glob("*.png"))
        if not pngs:
            continue
        got = read_lines(pngs, tessdata, lang, whitelist)
        faces = face_of(folder)
        total, per = Score(), defaultdict(Score)
        for png, g in zip(pngs, got):
            truth = norm(Path(f"{png.with_suffix('')}.gt.txt").read_text())
            total.add(truth, g)
            if png.stem in faces:
                per[faces[png.stem]].add(truth, g)
            if truth != g:
                wrong.append(f"{name}/{png.name}\t{truth}\t{g}")
        result[name] = total.row()
        for face in sorted(per):
            result[f"{name}: {face}"] = per[face].row()
    if errors_out:
        errors_out.write_text("\n".join(wrong) + "\n")
    return result


def table(results: dict[str, dict]) -> str:
    models = list(results)
    rows = list(dict.fromkeys(k for r in results.values() for k in r))
    head = "| set | lines | " + " | ".join(f"{m} CER % | {m} CER no sp % | {m} lines %" for m in models) + " |"
    sep = "|" + "---|" * (2 + 3 * len(models))
    body = []
    for k in rows:
        n = next(r[k]["lines"] for r in results.values() if k in r)
        cells = []
        for m in models:
            r = results[m].get(k)
            cells += [str(r["cer"]), str(r["cer_nospace"]), str(r["line_acc"])] if r else ["", "", ""]
        body.append(f"| {k} | {n} | " + " | ".join(cells) + " |")
    return "\n".join([head, sep] + body)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessdata-dir", required=True, help="folder holding LANG.traineddata")
    ap.add_argument("--lang", default="card")
    ap.add_argument("--data", type=Path, required=True, help="folder holding the evaluation sets")
    ap.add_argument("--eng", action="store_true", help="also score Debian's eng with a digit whitelist")
    ap.add_argument("--eng-tessdata", default="/usr/share/tesseract-ocr/5/tessdata")
    ap.add_argument("--json", type=Path, help="write the figures here too")
    ap.add_argument("--errors", type=Path, help="write the misread lines (file, truth, reading) here")
    args = ap.parse_args()

    results = {args.lang: evaluate(args.data, args.tessdata_dir, args.lang, False, args.errors)}
    if args.eng:
        results["eng"] = evaluate(args.data, args.eng_tessdata, "eng", True, None)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
