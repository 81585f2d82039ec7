#!/usr/bin/env bash
# A small number-row detector for a payment card, for the scanner's first pass (Models/README.md,
# "number-rows.onnx"; measured, not yet used by the scanner).
# Builds .model-work/rows/number-rows.onnx from ../shared/cards-train2 (read there only) on the CPU and scores it.
#   1. data.py      train / validation / held-out detect/ photos (Models/data/cards-train2-split.json; validation
#                   carved by group from its training part) and a cache of the training photos
#   2. train.py     one thread, nice -n 19, seed 1, 5000 steps of 16 (resumable: run again after a stop)
#   3. evaluate.py  OpenVINO f32 on the validation part and the held-out photos, PP-OCRv4's detector beside it
#                   when .vendor/models has it; writes .model-work/rows/eval.json and eval.txt
# Settings (environment): VENV (default .model-work/learned/venv: torch, onnx, openvino, numpy, Pillow), STEPS, SEED.
# Nothing is written into Models/.
set -euo pipefail
cd "$(dirname "$0")/../../.."
venv=${VENV:-.model-work/learned/venv}
py=$venv/bin/python
# The learned recognizer's venv (scripts/model/learned/make_learned.sh), made here when missing: the
# same pinned packages from PyPI.
if [ ! -x "$py" ]; then
    "${PYTHON:-python3}" -m venv "$venv"
    "$py" -m pip install -q --upgrade pip
    "$py" -m pip install -q torch==2.15.0 onnx==1.23.2 openvino==2026.4.1 numpy==2.4.6 pillow==13.0.0
fi
w=.model-work/rows
r=scripts/model/rows
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
mkdir -p "$w"
[ -f "$w/cache-val.pkl" ] || nice -n 19 "$py" "$r/data.py"
if [ ! -f "$w/number-rows.onnx" ]; then
    start=$SECONDS
    nice -n 19 "$py" "$r/train.py" --steps "${STEPS:-5000}" --seed "${SEED:-1}" --out "$w/run" \
        --onnx "$w/number-rows.onnx" 2>&1 | grep -v Warning | tee -a "$w/run/train.log"
    echo "training wall time: $(( (SECONDS - start) / 60 )) min" | tee -a "$w/run/train.log"
fi
pp=()
[ -f .vendor/models/ch_PP-OCRv4_det_infer.onnx ] && pp=(--ppocr .vendor/models/ch_PP-OCRv4_det_infer.onnx)
nice -n 19 "$py" "$r/evaluate.py" --model "$w/number-rows.onnx" "${pp[@]}" --json "$w/eval.json" 2>&1 \
    | grep -v Warning | tee "$w/eval.txt"
