#!/usr/bin/env python3
"""Pseudo-labels the number rows of ../shared/cards-train2 for the learned card-line recognizer.

cards-train2 (README.md there) comes from the CherryCQ0/2026-BankCardScan-YOLO-PaddleOCR repository,
commit f693816686861c0d4d4a3714690a3afe5630a033, datasets/bank_num; licence Apache-2.0 (that repository's
LICENSE file). Keep this notice with anything derived from it: the lines this script writes are derived.

Only the part of Models/data/cards-train2-split.json named by --part is read (the split is by card; train on
"train" only, "heldout" is for the final report). The pictures stay in ../shared; crops are written to the
(git-ignored) output folder only.

Rows:
- detect/: every number-row box of detect/boxes.json. A box taller than wide (a card photographed on its
  side) is skipped.
- whole/: these pictures have no boxes; a whole/ picture whose detect/ copy is found (the pHash of
  scripts/data/split_train2.py, distance <= 4 over the eight turns and flips, aspect ratios within 0.02, as
  that script pairs them) gets that copy's largest box, scaled: the row is found without reading it. A
  whole/ picture without such a copy is skipped. Kept whole/ rows join the training lines; with --plain (an
  evaluation set) the pseudo-labelled lines are detect/ rows only, and whole/ rows go to --whole-truth.
Each row is cut as the scanner cuts a detector's box for the recognizer (Scanning/Read/LineCrops.swift,
learnedLineImage): max(4, 3/5 of the box height) left and right, 1/10 of the height above and below,
clipped to the picture; then grey, height 48 (lines.py).

Two independent readers, OpenVINO on CPU, one thread, greedy CTC (evaluate.Reader): the project's
Models/card-digits.onnx and PP-OCRv4's recognizer (.vendor/models/ch_PP-OCRv4_rec_infer.onnx), whose
reading is restricted to digits and spaces. Categories, in this order:
  disagreed   the two readings' digits (spaces removed) differ, or one holds a character other than a digit
  too short   they agree on fewer than 13 digits (or more than 19: "too long")
  Luhn-failed they agree on 13-19 digits that fail the check digit
  agreed      they agree on 13-19 digits that pass it: kept. The Luhn check only filters; it never changes
              or chooses a digit.
With --ppocr-alone SURE (training lines only), a row they disagree on is still kept ("PP-OCRv4 alone") where
PP-OCRv4's whole reading is nothing but 13-19 digits and spaces, passing the check digit, each character read
with a probability of SURE or more: the rows the card-digit network misreads, which the two rules above
never show it. (With --third-reader, two of three readers alike comes first.)
The label's digits are the agreed digits. Its group spaces come from where the two readers put the digits,
not from either reader's spaces: card-digits.onnx drops the narrow group gaps of many printed cards
(four groups of four read as "dddddddd dddd dddd") and PP-OCRv4 drops most spaces. Each reader is run on the row
shifted right by 0-7 pixels (edge columns prepended); the centre of each digit's run of frames (8 px a
frame) is averaged over the shifts that read the same digits (at least 4 of 8), then over both readers.
A step between two digits of 1.3 times the row's median step or more is a group gap (a space), under 1.2
none; a step from 1.2 to 1.3, or too few consistent shifts, counts the row as "spacing unclear" and it is
not kept. A kept label with a group of one or two digits is counted as "odd spacing" and not kept.
(On the training part the rows where these spaces differ from card-digits.onnx's were all looked at by
eye: the gaps were right each time; see Models/README.md.)

Writes into --out: NAME.png + NAME.gt.txt per line and manifest.tsv (NAME <tab> source), as real_lines.py
does; rows.tsv (every row: source, box, category, both readings) and disagreed.tsv (the disagreed rows
with both readings); summary.json (counts). Prints counts only, never a number.

    pseudo_rows.py --part train --out DIR --copies 3 --seed 23        # training lines: plain + 3 augmented
    pseudo_rows.py --part heldout --out DIR --plain [--whole-truth DIR2]  # evaluation: each row once
With --whole-truth, also writes every whole/ row of the part (plain, whatever the readers say) labelled
with the manifest's number (digits only, as printed: no group spaces) for scoring against true numbers.
"""
import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import openvino as ov
from PIL import Image

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "data"))  # split_train2.py
sys.path.insert(0, str(HERE.parent))  # real_lines.py
sys.path.insert(0, str(HERE))  # first: this folder's evaluate.py, not scripts/model/evaluate.py
import evaluate  # noqa: E402
import lines  # noqa: E402
import real_lines  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "cards-train2"
TWIN_PHASH = 4
TWIN_ASPECT = 0.02


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def cut(img: Image.Image, box) -> Image.Image | None:
    """The scanner's cut of a detector's box (learnedLineImage), clipped to the picture."""
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    w, h = x1 - x0, y1 - y0
    if w <= 0 or h <= 0 or h > w:
        return None
    mx, my = max(4, h * 3 // 5), h // 10
    left, top = max(0, x0 - mx), max(0, y0 - my)
    right, bottom = min(img.width, x1 + mx), min(img.height, y1 + my)
    if right <= left or bottom <= top:
        return None
    return img.crop((left, top, right, bottom))


def grey48(img: Image.Image) -> np.ndarray:
    """As lines.scaled_grey, from an image in memory."""
    g = img.convert("L")
    w = max(1, round(g.width * lines.HEIGHT / g.height))
    return np.asarray(g.resize((w, lines.HEIGHT), Image.BILINEAR), dtype=np.uint8)


# How cards print numbers of each length (CardBrand.groupings, and the 6-6-6 of 18-digit cards seen in this
# set). A label may miss a gap of its layout (a narrow gap the positions do not show), never add one.
LAYOUTS = {13: [[4, 4, 5], [4, 3, 3, 3]], 14: [[4, 6, 4]], 15: [[4, 6, 5], [4, 4, 4, 3]], 16: [[4, 4, 4, 4], [6, 10]],
           17: [[4, 4, 4, 5], [6, 11]], 18: [[6, 6, 6], [4, 4, 4, 4, 2], [6, 12]],
           19: [[4, 4, 4, 4, 3], [6, 13], [6, 3, 3, 7]]}


def odd_spacing(text: str) -> bool:
    """Whether the label's gaps are not all gaps of a layout cards print its length in."""
    groups = [len(g) for g in text.split(" ")]

    def ends(sizes):
        return set(np.cumsum(sizes)[:-1].tolist())

    return not any(ends(groups) <= ends(layout) for layout in LAYOUTS.get(sum(groups), []))


KEPT = {"agreed", "truth", "two of three (card-digits wrong)", "two of three (PP-OCRv4 wrong)", "PP-OCRv4 alone"}
GAP, NO_GAP = 1.3, 1.2  # step / median step: a space at GAP or more, none under NO_GAP, unclear between


def forced_path(probs: np.ndarray, classes: list[int]) -> np.ndarray | None:
    """CTC Viterbi alignment of `classes` (no blanks) on `probs` [T, C]: the label state of every frame
    (2i+1 for the i-th character, even numbers for blanks), or None when the line is too short for them."""
    logp = np.log(np.maximum(probs, 1e-12))
    states = [0]
    for k in classes:
        states += [k, 0]
    S, T = len(states), len(probs)
    if T < len(classes):
        return None
    emit = logp[:, states]  # [T, S]
    score = np.full((T, S), -np.inf)
    back = np.zeros((T, S), np.int8)  # 0 stay, 1 from s-1, 2 from s-2
    score[0, 0], score[0, 1] = emit[0, 0], emit[0, 1]
    skip = np.array([s >= 2 and states[s] != 0 and states[s] != states[s - 2] for s in range(S)])
    for t in range(1, T):
        stay = score[t - 1]
        one = np.concatenate([[-np.inf], score[t - 1, :-1]])
        two = np.where(skip, np.concatenate([[-np.inf, -np.inf], score[t - 1, :-2]]), -np.inf)
        best = np.stack([stay, one, two])
        back[t] = best.argmax(0)
        score[t] = best.max(0) + emit[t]
    s = S - 1 if score[-1, S - 1] >= score[-1, S - 2] else S - 2
    if not np.isfinite(score[-1, s]):
        return None
    path = np.zeros(T, np.int64)
    for t in range(T - 1, -1, -1):
        path[t] = s
        s -= int(back[t, s])
    return path


def digit_centres(reader, grey: np.ndarray, digits: str) -> np.ndarray | None:
    """x of each digit's centre (pixels of the 48-high line): the frames CTC's forced alignment of the
    digits gives each (8 px a frame), averaged over 8 one-pixel shifts. The alignment places the known
    digits whatever the reader would read there, so a reader that misreads a digit still shows where it is."""
    classes = [reader.table.index(c) + 1 for c in digits]
    found = []
    for s in range(8):
        g = np.concatenate([np.repeat(grey[:, :1], s, axis=1), grey], axis=1) if s else grey
        path = forced_path(reader.model(lines.to_input(g))[0][0], classes)
        if path is None:
            return None
        found.append([(np.nonzero(path == 2 * i + 1)[0].mean() + 0.5) * 8 - s for i in range(len(digits))])
    return np.mean(found, axis=0)


def spaced(readers, grey: np.ndarray, digits: str) -> str | None:
    """The digits with a space at each group gap, or None when the gaps are unclear."""
    centres = [digit_centres(r, grey, digits) for r in readers]
    if any(c is None for c in centres):
        return None
    steps = np.mean([np.diff(c) for c in centres], axis=0)
    ratio = steps / np.median(steps)
    if np.any((ratio >= NO_GAP) & (ratio < GAP)):
        return None
    return "".join(d + (" " if i < len(ratio) and ratio[i] >= GAP else "") for i, d in enumerate(digits))


def sure_reading(reader, grey: np.ndarray) -> tuple[str, float]:
    """The reader's whole greedy reading, every character it reads (not only digits), and how sure it is of
    its weakest character: the highest probability among the frames that emitted that character."""
    probs = reader.model(lines.to_input(grey))[0][0]
    best = probs.argmax(-1)
    out, sure, prev = [], [], 0
    for t, k in enumerate(best):
        k = int(k)
        if k != 0 and k == prev:
            sure[-1] = max(sure[-1], float(probs[t, k]))
        elif k != 0:
            out.append(reader.table[k - 1])
            sure.append(float(probs[t, k]))
        prev = k
    return " ".join("".join(out).split()), min(sure, default=0.0)


def tesseract_digits(tessdata: Path, crop: Image.Image) -> str:
    """The row read by the project's Tesseract card model (Sources/CardCapture/Resources/card.traineddata),
    a third reader independent of both networks: grey, height 64, one line (--psm 7); digits only."""
    import subprocess
    import tempfile

    g = crop.convert("L")
    g = g.resize((max(1, round(g.width * 64 / g.height)), 64), Image.BILINEAR)
    with tempfile.NamedTemporaryFile(suffix=".png") as f:
        g.save(f.name)
        out = subprocess.run(["tesseract", f.name, "stdout", "--tessdata-dir", str(tessdata), "-l", "card", "--psm", "7"],
                             capture_output=True, text=True, check=True).stdout
    return "".join(c for c in out if c.isdigit())


def truth_groups(data: Path, part: dict, manifest: dict) -> dict[str, str]:
    """detect/ file -> the number of the one whole/ picture of the part in its near-copy group (64-bit pHash
    distance <= 8 over the eight turns and flips, split_train2.py's link, union-find over the part's detect/
    and whole/ pictures). Groups holding whole/ pictures of two different numbers are left out."""
    import split_train2 as st

    files = [("detect", f) for f in sorted(part["detect"])] + [("whole", f) for f in sorted(part["whole"])]
    views = []
    for folder, f in files:
        with Image.open(data / folder / f) as im:
            views.append(st.phash_views(im.convert("L")))
    dist = st.hamming_min(np.array(views))
    uf = st.UnionFind(len(files))
    for i, j in zip(*np.nonzero(np.triu(dist <= st.PHASH_LINK, 1))):
        uf.union(int(i), int(j))
    numbers: dict[int, set] = {}
    for i, (folder, f) in enumerate(files):
        if folder == "whole":
            numbers.setdefault(uf.find(i), set()).add((manifest[f].get("number") or "").replace(" ", ""))
    out = {}
    for i, (folder, f) in enumerate(files):
        group = numbers.get(uf.find(i), set())
        if folder == "detect" and len(group) == 1 and next(iter(group)):
            out[f] = next(iter(group))
    return out


def edits(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def whole_twins(data: Path, whole: list[str], boxes: dict) -> dict[str, list]:
    """whole/ file -> its detect/ copy's boxes scaled to the whole/ picture (split_train2.py's pairing)."""
    import split_train2 as st

    detect = sorted(boxes)
    views, sizes = [], []
    for part, names in (("whole", whole), ("detect", detect)):
        for f in names:
            with Image.open(data / part / f) as im:
                g = im.convert("L")
            views.append(st.phash_views(g))
            sizes.append(g.size)
    dist = st.hamming_min(np.array(views))
    nw = len(whole)
    out = {}
    for i, f in enumerate(whole):
        j = nw + int(np.argmin(dist[i, nw:]))
        if dist[i, j] <= TWIN_PHASH and abs(sizes[i][0] / sizes[i][1] - sizes[j][0] / sizes[j][1]) < TWIN_ASPECT:
            s = sizes[i][0] / sizes[j][0]
            box = max(boxes[detect[j - nw]], key=lambda b: (b[2] - b[0]) * (b[3] - b[1]))  # the number row
            out[f] = [[v * s for v in box]]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the cards-train2 folder")
    ap.add_argument("--split", type=Path, default=ROOT / "Models" / "data" / "cards-train2-split.json")
    ap.add_argument("--part", choices=["train", "heldout"], required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--plain", action="store_true", help="each kept row once, grey, height 48 (evaluation)")
    ap.add_argument("--copies", type=int, default=3, help="augmented copies of each kept row besides the plain one")
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("--whole-truth", type=Path, help="also write the part's whole/ rows with the manifest's numbers")
    ap.add_argument("--model", type=Path, default=ROOT / "Models" / "card-digits.onnx")
    ap.add_argument("--keys", type=Path, default=ROOT / "Models" / "card-digits.keys.txt")
    ap.add_argument("--other", nargs=2, type=Path, metavar=("ONNX", "KEYS"),
                    default=[ROOT / ".vendor/models/ch_PP-OCRv4_rec_infer.onnx", ROOT / ".vendor/models/ch_PP-OCRv4_rec_keys.txt"])
    ap.add_argument("--third-reader", type=Path, metavar="TESSDATA",
                    help="also read each row with Tesseract's card model from this tessdata folder, and keep rows "
                         "two of the three readers read alike (13-19 digits passing the check)")
    ap.add_argument("--ppocr-alone", type=float, metavar="SURE",
                    help="also keep rows PP-OCRv4 alone reads as 13-19 digits passing the check, with nothing but digits "
                         "and spaces in its whole reading and each character read at least this surely (0-1): rows the "
                         "card-digit network misreads (training lines only)")
    ap.add_argument("--truth-groups", action="store_true",
                    help="label detect/ rows with the number of the whole/ picture in their near-copy group, and the "
                         "part's whole/ rows with their own (training lines only)")
    args = ap.parse_args()

    split = json.loads(args.split.read_text())[args.part]
    boxes = json.loads((args.data / "detect" / "boxes.json").read_text())
    manifest = {e["file"]: e for e in json.loads((args.data / "whole" / "manifest.json").read_text())}
    twins = whole_twins(args.data, split["whole"], boxes)
    group_truth = truth_groups(args.data, split, manifest) if args.truth_groups else {}

    core = ov.Core()
    ours = evaluate.Reader(core, args.model, args.keys)
    other = evaluate.Reader(core, *args.other)
    digits_space = set("0123456789 ")

    rng = np.random.default_rng(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.whole_truth:
        args.whole_truth.mkdir(parents=True, exist_ok=True)
    count = Counter()
    rows, disagreed, out_manifest, truth_manifest = [], [], [], []
    truth_check = Counter()
    n = 0

    def emit(name: str, img: Image.Image, text: str, source: str) -> None:
        img.save(args.out / f"{name}.png")
        (args.out / f"{name}.gt.txt").write_text(text + "\n")
        out_manifest.append(f"{name}\t{source}")

    jobs = [("detect", f, boxes[f]) for f in split["detect"]]
    for f in split["whole"]:
        if f in twins:
            jobs.append(("whole", f, twins[f]))
        else:
            count["whole/ without a detect/ copy (skipped)"] += 1
    for part, f, bs in jobs:
        with Image.open(args.data / part / f) as im:
            img = im.convert("RGB")
        for k, box in enumerate(bs):
            source = f"{part}/{f}#{k}"
            crop = cut(img, box)
            if crop is None:
                count["box taller than wide or empty (skipped)"] += 1
                continue
            grey = grey48(crop)
            a = ours.read(grey)
            b = "".join(c for c in other.read(grey) if c in digits_space).strip()
            b = " ".join(b.split())
            da, db = a.replace(" ", ""), b.replace(" ", "")
            dt = tesseract_digits(args.third_reader, crop) if args.third_reader else ""
            label = ""
            truth = None
            if args.truth_groups and not args.plain:
                truth = group_truth.get(f) if part == "detect" else (manifest[f].get("number") or "").replace(" ", "") or None

            def labelled(digits: str, kept: str) -> str:
                nonlocal label
                label = spaced((ours, other), grey, digits)
                return "spacing unclear" if label is None else "odd spacing" if odd_spacing(label) else kept

            votes = Counter(d for d in (da, db, dt) if d)
            top, top_votes = votes.most_common(1)[0] if votes else ("", 0)
            if truth:
                # The group's printed number, where a reader saw nearly that row (a near-copy link to
                # another card, or a box on another row, is left out).
                cat = labelled(truth, "truth") if min(edits(d, truth) for d in (da, db, dt)) <= 3 else "truth: no reader near"
            elif da == db and da.isdigit():
                if len(da) < 13:
                    cat = "too short"
                elif len(da) > 19:
                    cat = "too long"
                elif not luhn_ok(da):
                    cat = "Luhn-failed"
                else:
                    cat = labelled(da, "agreed")
                    if cat == "agreed" and label != a:
                        count["agreed rows whose spaces differ from card-digits.onnx's"] += 1
            elif args.third_reader and top_votes >= 2 and top.isdigit() and 13 <= len(top) <= 19 and luhn_ok(top):
                # Two of three readers read the same 13-19 digits, passing the check: the third was wrong.
                cat = labelled(top, "two of three (card-digits wrong)" if da != top else
                               "two of three (PP-OCRv4 wrong)" if db != top else "two of three")
            elif args.ppocr_alone and not args.plain and (alone := sure_reading(other, grey)) and alone[1] >= args.ppocr_alone \
                    and set(alone[0]) <= digits_space and 13 <= len(db) <= 19 and db == alone[0].replace(" ", "") and luhn_ok(db):
                # PP-OCRv4 alone, sure of every character and passing the check; the check only filters.
                cat = labelled(db, "PP-OCRv4 alone")
            else:
                cat = "disagreed"
                disagreed.append(f"{source}\t{a}\t{b}\t{dt}")
            count[cat] += 1
            count[f"{part} rows"] += 1
            rows.append(f"{source}\t{','.join(f'{v:.1f}' for v in box)}\t{cat}\t{a}\t{b}\t{label or ''}\t{dt}")
            if part == "whole":
                truth = (manifest[f].get("number") or "").replace(" ", "")
                if args.whole_truth and truth:
                    name = f"w_{len(truth_manifest):05d}"
                    Image.fromarray(grey).save(args.whole_truth / f"{name}.png")
                    (args.whole_truth / f"{name}.gt.txt").write_text(truth + "\n")
                    truth_manifest.append(f"{name}\t{source}")
                if cat in ("agreed", "PP-OCRv4 alone"):  # how often a kept pseudo-label is the printed number (whole/ only)
                    kept = da if cat == "agreed" else db
                    truth_check[f"{cat} whole/ rows equal to the manifest's number" if kept == truth
                                else f"{cat} whole/ rows NOT equal to the manifest's number"] += 1
            if cat not in KEPT or (args.plain and part == "whole"):
                continue
            if args.plain:
                emit(f"p2_{n:06d}", Image.fromarray(grey), label, source); n += 1
                continue
            emit(f"p2_{n:06d}", Image.fromarray(grey), label, source); n += 1
            for _ in range(args.copies):
                # real_lines.augment: edge padding, rotation, scale (20-60 px), contrast, polarity, blur, JPEG, noise
                emit(f"p2_{n:06d}", real_lines.augment(rng, crop), label, source); n += 1

    (args.out / "rows.tsv").write_text("source\tbox\tcategory\tcard-digits\tPP-OCRv4\tlabel\tTesseract\n" + "\n".join(rows) + "\n")
    (args.out / "disagreed.tsv").write_text("source\tcard-digits\tPP-OCRv4\tTesseract\n" + "\n".join(disagreed) + "\n")
    if args.whole_truth:
        (args.whole_truth / "manifest.tsv").write_text("\n".join(truth_manifest) + "\n")
    summary = {"part": args.part, "lines written": n, **count, **truth_check,
               "kept lengths": dict(sorted(Counter(len(r.split("\t")[5].replace(" ", "")) for r in rows
                                                   if r.split("\t")[2] in KEPT).items())),
               "kept group patterns": dict(Counter("-".join(str(len(g)) for g in r.split("\t")[5].split(" "))
                                                   for r in rows if r.split("\t")[2] in KEPT).most_common())}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    (args.out / "manifest.tsv").write_text("\n".join(out_manifest) + "\n")  # last: marks the folder complete
    for k, v in summary.items():
        print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
