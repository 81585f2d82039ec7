#!/usr/bin/env python3
"""Writes the latest figures into Models/README.md, between its `figures:start` and `figures:end` markers.

Reads .model-work: final/int.json and final/float.json (evaluate.py), times.tsv (wall time of each step of
make_model.sh) and the training logs (iterations reached). Everything outside the markers is left alone.
"""
import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / ".model-work"
README = ROOT / "Models" / "README.md"


def last_iteration(log: Path) -> str:
    if not log.exists():
        return "not run"
    its = re.findall(r"At iteration (\d+)/(\d+)/(\d+)", log.read_text(errors="replace"))
    evals = re.findall(r"Eval Char error rate=([\d.]+), Word error rate=([\d.]+)", log.read_text(errors="replace"))
    if not its:
        return "started"
    text = f"{int(its[-1][1]):,} iterations"
    if evals:
        text += f"; last lstmeval on its eval list: char error {float(evals[-1][0]):.2f} %, word error {float(evals[-1][1]):.2f} %"
    return text


def figures_table(final: Path) -> str:
    tables = []
    for name, label in (("int", "integer model"), ("float", "float model")):
        p = final / f"{name}.json"
        if p.exists():
            data = json.loads(p.read_text())
            tables.append((label, data))
    if not tables:
        return "No evaluation yet.\n"
    models = {}
    for label, data in tables:  # the card model's columns first, then the comparison (eng)
        models[f"card ({label})"] = data["card"]
    for _, data in tables:
        models.update({lang: rows for lang, rows in data.items() if lang != "card"})
    keys = list(dict.fromkeys(k for rows in models.values() for k in rows))
    head = "| set | lines | " + " | ".join(models) + " |"
    sep = "|---|---:|" + "---:|" * len(models)
    lines = [
        "Cells: character error % / character error ignoring spaces % / whole lines right %.",
        "",
        head,
        sep,
    ]
    for k in keys:
        n = next(rows[k]["lines"] for rows in models.values() if k in rows)
        cells = []
        for rows in models.values():
            r = rows.get(k)
            cells.append(f"{r['cer']} / {r['cer_nospace']} / {r['line_acc']}" if r else "")
        lines.append(f"| {k} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def times_table() -> str:
    p = WORK / "times.tsv"
    if not p.exists():
        return ""
    total: dict[str, int] = {}
    for line in p.read_text().splitlines():
        name, secs = line.rsplit("\t", 1)
        total[name] = total.get(name, 0) + int(secs)
    rows = [f"| {k} | {v / 3600:.2f} h |" if v >= 3600 else f"| {k} | {v / 60:.1f} min |" for k, v in total.items()]
    s = sum(total.values())
    return "\n".join(["| step (make_model.sh) | wall time |", "|---|---:|"] + rows + [f"| **total** | **{s / 3600:.2f} h** |"]) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--checkpoint", default="")
    ap.add_argument("--choice", default="")
    args = ap.parse_args()
    final = WORK / "final"
    model = ROOT / "Models" / "card.traineddata"
    block = [
        "<!-- figures:start (written by scripts/model/update_readme.py) -->",
        f"- Phase 1 (clean lines): {last_iteration(WORK / 'logs' / 'phase1.log')}.",
        f"- Phase 2 (hard mix): {last_iteration(WORK / 'logs' / 'phase2.log')}.",
    ]
    if not (WORK / "train" / "p2" / ".done").exists():
        block.append("- **Interim figures**: phase 2 was still running when they were written; "
                     "`bash scripts/model/finish_model.sh` refreshes them from the latest checkpoint.")
    if args.checkpoint:
        block.append(f"- Model made from `{Path(args.checkpoint).relative_to(ROOT)}`; kept the {args.choice} model"
                     + (f" ({model.stat().st_size:,} bytes)." if model.exists() else "."))
    block += ["", figures_table(final), times_table(), "<!-- figures:end -->"]
    text = README.read_text()
    new = re.sub(r"<!-- figures:start.*?<!-- figures:end -->", "\n".join(block), text, flags=re.S)
    if new == text and "figures:start" not in text:
        print("Models/README.md has no figures markers", file=sys.stderr)
        return 1
    README.write_text(new)
    print("updated", README.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
