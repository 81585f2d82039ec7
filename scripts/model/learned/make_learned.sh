#!/usr/bin/env bash
# Builds Models/card-digits.onnx (+ Models/card-digits.keys.txt), the learned card-line recognizer, from a
# clean clone on 2 CPU cores; figures in Models/README.md ("card-digits.onnx: the learned card-line recognizer").
#
#   1. makes a venv in .model-work/learned/venv with torch, onnx, openvino, numpy, Pillow (pinned, PyPI)
#   2. installs the fonts (scripts/model/install-deps.sh) and renders the data into .model-work/learned/data:
#      real-train  real_lines.py --split train --singles 6 --joined 6000 --seed 11 (../shared/cards-train)
#      syn1        render_lines.py --count 5000 --seed 101 (training typefaces)
#      real-eval   real_lines.py --split eval --plain (the 162 held-out crops, never trained on)
#      heldout-fonts  render_lines.py --fonts heldout --count 800 --seed 9001 (typefaces never trained on)
#   3. trains (train.py, one thread, seed 1, 4500 steps of 16 lines) and exports the ONNX
#   4. scores it and PP-OCRv4's recognizer (when .vendor/models has it) with OpenVINO (evaluate.py) and
#      writes .model-work/learned/record.md (figures, parameters, wall times)
#
# A step whose output exists is skipped. Settings (environment): STEPS, SEED, PYTHON (the python to base the
# venv on), VENV (use this existing venv instead; it needs the packages of step 1).
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD
m=$root/scripts/model
l=$m/learned
w=$root/.model-work/learned
d=$w/data
STEPS=${STEPS:-4500}
SEED=${SEED:-1}
export OMP_NUM_THREADS=1 OMP_THREAD_LIMIT=1 MKL_NUM_THREADS=1
mkdir -p "$w" "$d" "$root/Models"
times=$w/times.tsv
step() { echo "== $(date '+%F %T') $*"; }
timed() {
    local name=$1 start=$SECONDS
    shift
    "$@"
    printf '%s\t%d\n' "$name" $((SECONDS - start)) >>"$times"
}

# 1. Python environment
venv=${VENV:-$w/venv}
py=$venv/bin/python
if [ ! -x "$py" ]; then
    step "venv"
    "${PYTHON:-python3}" -m venv "$venv"
    "$py" -m pip install -q --upgrade pip
    "$py" -m pip install -q torch==2.15.0 onnx==1.23.2 openvino==2026.4.1 numpy==2.4.6 pillow==13.0.0
fi

# 2. Data (fonts first: render_lines.py needs the faces of fonts.txt / fonts-heldout.txt)
step "fonts"
bash "$m/install-deps.sh"
"$py" "$m/check_fonts.py"
gen() { # gen DIR COMMAND...: runs the command unless DIR is complete (manifest written last)
    local dir=$1
    shift
    [ -f "$dir/manifest.tsv" ] || timed "data $(basename "$dir")" "$@" --out "$dir"
}
step "data"
# two generators at a time (2 cores)
gen "$d/syn1" "$py" "$m/render_lines.py" --count 5000 --seed 101 --prefix s1 &
p1=$!
gen "$d/real-train" "$py" "$m/real_lines.py" --split train --singles 6 --joined 6000 --seed 11
gen "$d/real-eval" "$py" "$m/real_lines.py" --split eval --plain
gen "$d/heldout-fonts" "$py" "$m/render_lines.py" --count 800 --fonts heldout --seed 9001 --prefix hf
wait $p1

# 3. Training and export
if [ ! -f "$root/Models/card-digits.onnx" ] || [ ! -f "$w/card-digits.pt" ]; then
    step "training ($STEPS steps, seed $SEED)"
    timed training "$py" "$l/train.py" --data "$d/real-train" "$d/syn1" --steps "$STEPS" --seed "$SEED" \
        --out "$w/card-digits.pt" --onnx "$root/Models/card-digits.onnx" 2>&1 | tee "$w/train.log"
fi
printf '%s\n' 0 1 2 3 4 5 6 7 8 9 / ' ' >"$root/Models/card-digits.keys.txt"

# 4. Evaluation and record
step "evaluation"
compare=()
if [ -f "$root/.vendor/models/ch_PP-OCRv4_rec_infer.onnx" ]; then
    compare=(--compare "$root/.vendor/models/ch_PP-OCRv4_rec_infer.onnx" "$root/.vendor/models/ch_PP-OCRv4_rec_keys.txt")
fi
"$py" "$l/evaluate.py" --model "$root/Models/card-digits.onnx" --keys "$root/Models/card-digits.keys.txt" \
    "${compare[@]}" --set real-eval="$d/real-eval" --set heldout-fonts="$d/heldout-fonts" \
    --json "$w/eval.json" | tee "$w/eval.md"
{
    echo "# card-digits.onnx record ($(date -u '+%F %T UTC'))"
    echo
    grep -E '^parameters|^training lines|^training time|^exported' "$w/train.log" || true
    echo
    cat "$w/eval.md"
    echo
    echo "wall times (s):"
    cat "$times" 2>/dev/null || echo "(none: every step was skipped, its output already there)"
} >"$w/record.md"
step "done: Models/card-digits.onnx, record in $w/record.md"
