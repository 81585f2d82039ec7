#!/usr/bin/env bash
# Builds Sources/CardCapture/Resources/card.traineddata (figures in Models/README.md), the card-digit LSTM for Tesseract 5, from a clean clone (`make model`).
#
#   1. installs the Debian packages (fonts, tesseract-ocr) and Pillow/numpy; checks the fonts' glyphs
#   2. renders the line sets into .model-work/data (synthetic: render_lines.py; real: real_lines.py over
#      ../shared/cards-train) and makes their .lstmf files
#   3. builds the starter traineddata (unicharset_extractor + combine_lang_model)
#   4. phase 1: trains from scratch on clean lines
#   5. phase 2: continues from phase 1 on the hard mix (synthetic hard lines + real crops, ~28 % real)
#   6. phase 3: continues from phase 2 on a mix where the real crops weigh most (~66 % real)
#   7. writes the float and integer models, scores both (evaluate.py), keeps the integer one if it holds
#      up, and records figures and wall times in Models/README.md
#
# Resumable: a step whose output exists is skipped, and training continues from its latest checkpoint
# (lstmtraining loads <model_output>_checkpoint by itself). Training runs niced on one thread.
# Settings (environment): PHASE1_ITERS, PHASE2_ITERS, PHASE3_ITERS, NET_SPEC, JOBS (parallel tesseract runs for .lstmf).
# `make_model.sh --data-only` makes only the data (e.g. beside a running make_model.sh, to overlap work).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
m=$root/scripts/model
w=$root/.model-work
d=$w/data
t=$w/train
logs=$w/logs
mkdir -p "$d" "$t" "$logs" "$root/Models"

PHASE1_ITERS=${PHASE1_ITERS:-20000}
PHASE2_ITERS=${PHASE2_ITERS:-150000}
PHASE3_ITERS=${PHASE3_ITERS:-20000}
NET_SPEC=${NET_SPEC:-'[1,36,0,1 Ct3,3,16 Mp3,3 Lfys48 Lfx96 Lrx96 Lfx128 O1c###]'}
JOBS=${JOBS:-2}
export OMP_THREAD_LIMIT=1
nice="nice -n 10"
times=$w/times.tsv

step() { echo "== $(date '+%F %T') $*"; }
# timed NAME COMMAND...: runs the command and adds its wall time to times.tsv.
timed() {
    local name=$1 start=$SECONDS
    shift
    "$@"
    printf '%s\t%s\n' "$name" $((SECONDS - start)) >>"$times"
}

# --- 1. dependencies
step "dependencies"
bash "$m/install-deps.sh"
python3 "$m/check_fonts.py"

# --- 2. data
# Each data step holds a lock on its folder, so a second make_model.sh (say, one started with --data-only
# to render while phase 1 trains) waits for it and then skips it.
once() { # once STAMP NAME COMMAND...: runs the command unless STAMP exists, then creates STAMP
    local stamp=$1 name=$2
    shift 2
    mkdir -p "$(dirname "$stamp")"
    exec 9>"$stamp.lock"
    flock 9
    if [ ! -f "$stamp" ]; then
        step "$name"
        timed "$name" "$@"
        touch "$stamp"
    fi
    exec 9>&-
}
render() { # render DIR ARGS...: synthetic lines
    local dir=$1
    shift
    once "$d/$dir/.done" "render $dir" $nice python3 "$m/render_lines.py" --out "$d/$dir" "$@"
}
real() { # real DIR ARGS...: lines from the real crops
    local dir=$1
    shift
    once "$d/$dir/.done" "real lines $dir" $nice python3 "$m/real_lines.py" --out "$d/$dir" "$@"
}
lstmf() { # lstmf DIR: .lstmf files and DIR/list.txt
    once "$d/$1/.lstmf-done" "lstmf $1" $nice python3 "$m/make_lstmf.py" -j "$JOBS" "$d/$1"
}
hard_data() {
    render synth-train --count 30000 --seed 201 --prefix syn
    render synth-eval --count 600 --seed 202 --prefix syneval
    render heldout-fonts --count 100 --per-font --fonts heldout --seed 301 --prefix held
    real real-train --split train --singles 5 --joined 7000 --seed 401
    real real-eval --split eval --plain
    lstmf synth-train
    lstmf synth-eval
    lstmf real-train
    lstmf real-eval
}
tune_data() {
    render synth-tune --count 6000 --seed 203 --prefix tune
    lstmf synth-tune
}

render clean-train --count 8000 --clean --seed 101 --prefix clean
render clean-eval --count 300 --clean --seed 102 --prefix cleval
lstmf clean-train
lstmf clean-eval

# --- 3. starter traineddata
starter=$t/card/card.traineddata
if [ ! -f "$starter" ]; then
    step "starter traineddata"
    mkdir -p "$t/lang"
    cat "$d"/clean-train/*.gt.txt "$d"/clean-eval/*.gt.txt >"$t/lang/all-gt.txt"
    unicharset_extractor --output_unicharset "$t/lang/card.unicharset" --norm_mode 1 "$t/lang/all-gt.txt"
    # The model's characters: the ten digits, "/" and space (unichar 0), nothing else.
    for ch in 0 1 2 3 4 5 6 7 8 9 /; do
        grep -q "^$ch " "$t/lang/card.unicharset" || { echo "unicharset lacks $ch" >&2; exit 1; }
    done
    combine_lang_model --input_unicharset "$t/lang/card.unicharset" --script_dir "$m/langdata" \
        --output_dir "$t" --lang card
fi
# combine_lang_model names the recoder's output size in a file name: card.charset_size=N.txt.
classes=$(ls "$t/card" | sed -n 's/^card\.charset_size=\([0-9]*\)\.txt$/\1/p')
net_spec=${NET_SPEC//###/$classes}

if [ "${1:-}" = "--data-only" ]; then
    hard_data
    tune_data
    exit 0
fi

# continue_phase N FROM ITERS: phase N, from checkpoint FROM, on $t/pN/train.txt (evaluated on phase 2's
# list), up to ITERS iterations, unless it is done. lstmtraining prefers pN/card_checkpoint when it exists,
# so a rerun resumes the phase.
continue_phase() {
    local n=$1 from=$2 iterations=$3
    if [ -f "$t/p$n/.done" ]; then return 0; fi
    step "phase $n: up to $iterations iterations (log: $logs/phase$n.log)"
    timed "phase $n training" $nice lstmtraining \
        --traineddata "$starter" --continue_from "$from" --model_output "$t/p$n/card" \
        --train_listfile "$t/p$n/train.txt" --eval_listfile "$t/p2/eval.txt" \
        --max_iterations "$iterations" >>"$logs/phase$n.log" 2>&1
    touch "$t/p$n/.done"
}

# --- 4. phase 1: clean lines, from scratch
mkdir -p "$t/p1" "$t/p2" "$t/p3"
if [ ! -f "$t/p1/.done" ]; then
    step "phase 1: $net_spec, up to $PHASE1_ITERS iterations (log: $logs/phase1.log)"
    timed "phase 1 training" $nice lstmtraining \
        --traineddata "$starter" --net_spec "$net_spec" --model_output "$t/p1/card" \
        --train_listfile "$d/clean-train/list.txt" --eval_listfile "$d/clean-eval/list.txt" \
        --learning_rate 0.001 --max_iterations "$PHASE1_ITERS" --target_error_rate 1 \
        >>"$logs/phase1.log" 2>&1
    touch "$t/p1/.done"
fi

# --- 5. phase 2: the hard mix, continuing from phase 1
hard_data
cat "$d/synth-train/list.txt" "$d/real-train/list.txt" >"$t/p2/train.txt"
{ head -n 300 "$d/synth-eval/list.txt"; cat "$d/real-eval/list.txt"; } >"$t/p2/eval.txt"
continue_phase 2 "$t/p1/card_checkpoint" "$PHASE2_ITERS"

# --- 6. phase 3: the real crops weigh most, continuing from phase 2
# After phase 2 the model still read the embossing typeface's 7 (a bar and a straight stem) as a 1 in
# 40 % of the 7s of its own training crops and half of the held-out ones: at 28 % of the lines, the real
# crops were outweighed by printed 7s of other shapes. Phase 3 trains on all real-crop lines and 6,000 new
# synthetic lines (about two real lines in three), so the model keeps the typefaces it has.
tune_data
cat "$d/real-train/list.txt" "$d/synth-tune/list.txt" >"$t/p3/train.txt"
continue_phase 3 "$t/p2/card_checkpoint" "$PHASE3_ITERS"

# --- 7. final model, scored
bash "$m/finish_model.sh"
