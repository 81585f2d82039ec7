#!/usr/bin/env python3
"""Turns line images with ground truth (NAME.png + NAME.gt.txt) into Tesseract training files (NAME.lstmf).

For each line: a WordStr box file (the whole line's text on one box covering the image, then the tab
end-of-line line), then `tesseract NAME.png NAME --psm 13 lstm.train`. Lines that already have their .lstmf
are skipped. Writes DIR/list.txt, the absolute paths of all .lstmf files in the folder.

    make_lstmf.py DIR [DIR...] [-j JOBS]
"""
import argparse
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PIL import Image


def box_text(png: Path, text: str) -> str:
    w, h = Image.open(png).size
    # Box coordinates have their origin at the bottom left; one box for the whole line, page 0.
    return f"WordStr 0 0 {w} {h} 0 #{text}\n\t 0 0 {w} {h} 0\n"


def one(png: Path) -> str | None:
    base = png.with_suffix("")
    lstmf = base.with_suffix(".lstmf")
    if lstmf.exists():
        return None
    text = Path(f"{base}.gt.txt").read_text().strip()
    base.with_suffix(".box").write_text(box_text(png, text))
    env = dict(os.environ, OMP_THREAD_LIMIT="1")
    run = subprocess.run(["tesseract", str(png), str(base), "--psm", "13", "lstm.train"],
                         capture_output=True, text=True, env=env)
    if not lstmf.exists():
        return f"{png.name}: no .lstmf ({run.stderr.strip()[-200:]})"
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("-j", "--jobs", type=int, default=1)
    args = ap.parse_args()
    failed = 0
    for d in args.dirs:
        pngs = sorted(p for p in d.glob("*.png") if Path(f"{p.with_suffix('')}.gt.txt").exists())
        with ThreadPoolExecutor(args.jobs) as pool:
            for err in pool.map(one, pngs):
                if err:
                    failed += 1
                    print(err, file=sys.stderr)
        lstmfs = sorted(p.resolve() for p in d.glob("*.lstmf"))
        (d / "list.txt").write_text("".join(f"{p}\n" for p in lstmfs))
        print(f"{d}: {len(lstmfs)} .lstmf of {len(pngs)} lines")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
