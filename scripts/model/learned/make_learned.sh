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
#   3b. pseudo-labels the number rows of ../shared/cards-train2 (pseudo_rows.py: rows where
#      Models/card-digits.onnx and PP-OCRv4's recognizer read the same 13-19 digits passing the check
#      digit), by the split Models/data/cards-train2-split.json; skipped when ../shared/cards-train2 or
#      .vendor/models is missing:
#      train2-rows            --part train --copies 3 --seed 23 (plain + 3 augmented lines a kept row)
#      train2-heldout         --part heldout --plain: held-out detect/ rows, pseudo-labelled (evaluation only)
#      train2-heldout-whole   held-out whole/ rows with the manifest's true numbers (evaluation only)
#      Models/card-digits.onnx is not trained on train2-rows; with CANDIDATE=1 a candidate that is
#      (real-train + syn1 + train2-rows, same settings) is trained into .model-work/learned/candidate/.
#   4. scores it (and the candidate, when there is one) and PP-OCRv4's recognizer (when .vendor/models has
#      it) with OpenVINO (evaluate.py) and writes .model-work/learned/record.md (figures, parameters, wall
#      times)
#
# A step whose output exists is skipped. Settings (environment): STEPS, SEED, PYTHON (the python to base the
# venv on), VENV (use this existing venv instead; it needs the packages of step 1), CANDIDATE=1 (train the
# candidate of step 3b), CARDS_TRAIN2 (the cards-train2 folder, default ../shared/cards-train2).
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

# 3b. Pseudo-labelled rows of cards-train2 (read by the model above: redo them if it changes)
t2=${CARDS_TRAIN2:-$root/../shared/cards-train2}
pp_rec=$root/.vendor/models/ch_PP-OCRv4_rec_infer.onnx
if [ ! -f "$t2/detect/boxes.json" ] || [ ! -f "$t2/whole/manifest.json" ] || [ ! -f "$pp_rec" ] \
    || [ ! -f "$root/.vendor/models/ch_PP-OCRv4_rec_keys.txt" ]; then
    step "pseudo-labelled rows: SKIPPED ($t2 or PP-OCRv4's recognizer in .vendor/models is missing: train2-* data not made, no candidate)"
else
    step "pseudo-labelled rows of $t2"
    pseudo() { # pseudo DIR ARGS...: runs pseudo_rows.py unless DIR is complete (manifest written last)
        local dir=$1
        shift
        [ -f "$dir/manifest.tsv" ] || timed "data $(basename "$dir")" "$py" "$l/pseudo_rows.py" --data "$t2" "$@" --out "$dir"
    }
    pseudo "$d/train2-rows" --part train --copies 3 --seed 23
    pseudo "$d/train2-heldout" --part heldout --plain --whole-truth "$d/train2-heldout-whole"
    c=$w/candidate
    if [ "${CANDIDATE:-0}" = 1 ] && [ ! -f "$c/card-digits.onnx" ]; then
        step "training the candidate with train2-rows ($STEPS steps, seed $SEED)"
        mkdir -p "$c"
        timed "training candidate" "$py" "$l/train.py" --data "$d/real-train" "$d/syn1" "$d/train2-rows" \
            --steps "$STEPS" --seed "$SEED" --out "$c/card-digits.pt" --onnx "$c/card-digits.onnx" 2>&1 | tee "$c/train.log"
    fi
fi

# 4. Evaluation and record
step "evaluation"
compare=()
if [ -f "$root/.vendor/models/ch_PP-OCRv4_rec_infer.onnx" ]; then
    compare=(--compare "$root/.vendor/models/ch_PP-OCRv4_rec_infer.onnx" "$root/.vendor/models/ch_PP-OCRv4_rec_keys.txt")
fi
sets=(--set real-eval="$d/real-eval" --set heldout-fonts="$d/heldout-fonts")
for s in train2-heldout train2-heldout-whole; do
    if [ -f "$d/$s/manifest.tsv" ]; then sets+=(--set "$s=$d/$s"); fi
done
"$py" "$l/evaluate.py" --model "$root/Models/card-digits.onnx" --keys "$root/Models/card-digits.keys.txt" \
    "${compare[@]}" "${sets[@]}" --json "$w/eval.json" | tee "$w/eval.md"
if [ -f "$w/candidate/card-digits.onnx" ]; then
    echo "candidate (trained with train2-rows): $w/candidate/card-digits.onnx" | tee -a "$w/eval.md"
    "$py" "$l/evaluate.py" --model "$w/candidate/card-digits.onnx" --keys "$root/Models/card-digits.keys.txt" \
        "${sets[@]}" --json "$w/candidate/eval.json" | tee -a "$w/eval.md"
fi
{
    echo "# card-digits.onnx record ($(date -u '+%F %T UTC'))"
    echo
    grep -E '^parameters|^training lines|^training time|^exported' "$w/train.log" || true
    echo
    cat "$w/eval.md"
    if [ -f "$d/train2-rows/summary.json" ]; then
        echo
        echo "train2 held-out sets: train2-heldout is pseudo-labelled (the rows where Models/card-digits.onnx and"
        echo "PP-OCRv4 agree), so it flatters the model that labelled it; train2-heldout-whole holds the true"
        echo "numbers without group spaces: read its 'no sp' columns."
        echo "pseudo-labelled rows (counts): train $(tr -d '\n' <"$d/train2-rows/summary.json")"
        [ -f "$d/train2-heldout/summary.json" ] && echo "held out $(tr -d '\n' <"$d/train2-heldout/summary.json")"
    fi
    echo
    echo "wall times (s):"
    cat "$times" 2>/dev/null || echo "(none: every step was skipped, its output already there)"
} >"$w/record.md"
step "done: Models/card-digits.onnx, record in $w/record.md"
