#!/usr/bin/env bash
# The scanner's figures on four sets, release build, one worker, each engine alone and together
# (--engine both|learned|tesseract; both is the default) and the first pass alone (--first-pass), the
# yardstick beside them (what `make bench` runs):
#   1. Fixtures/cards: the regression suite;
#   2. the second generator's cards (scripts/gen2, fonts the model never trained on), made once into
#      .devsets/gen2 if missing;
#   3. the real labelled pictures in ../shared/cards-dev (or $CARDS_DEV), when that folder is there,
#      scored by its own score.py and per category (scripts/bench/score_dev.py);
#   4. the held-out whole/ pictures of ../shared/cards-train2 (or $CARDS_TRAIN2), when it is there: the
#      part of Models/data/cards-train2-split.json nothing is trained or tuned on, scored the same way.
# The yardstick (scripts/bench/yardstick.py: PyPI's rapidocr-onnxruntime, PP-OCRv4 with a check-digit
# filter and no card logic) is installed into .vendor/yardstick unless YARDSTICK=0. Each engine's answers
# are kept in .devsets/SET-ENGINE.jsonl; numbers are never printed, only counts.
# The first picture's time includes compiling the models: their loading is timed apart, first.
# Each engine's scans give their time by stage (scan --timings; scripts/bench/stages.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
cli=.build/release/capture-cli
dev=${CARDS_DEV:-../shared/cards-dev}
train2=${CARDS_TRAIN2:-../shared/cards-train2}
gen2=.devsets/gen2
# Each run's options: the engines alone and together, and the first pass alone (scan --first-pass);
# scripts/bench/paths.py then sets the first pass beside the whole scan (its fallback's share).
engines=(both first-pass learned tesseract)
engine_args() {
    if [ "$1" = first-pass ]; then echo "--engine both --first-pass"; else echo "--engine $1"; fi
}
mkdir -p .devsets

yardstick=""
if [ "${YARDSTICK:-1}" != 0 ]; then
    bash scripts/bench/install-yardstick.sh && yardstick=.vendor/yardstick/bin/python
fi

if [ ! -f "$gen2/manifest.json" ]; then
    echo "== making the second generator's set in $gen2"
    bash scripts/gen2/install-deps.sh
    python3 scripts/gen2/generate.py --out "$gen2" --seed 11 --count 240
fi

echo "== loading: the models compiled (OpenVINO) and one small card scanned, first run of the process"
first=$(ls Fixtures/cards/*.png | head -1)
for engine in "${engines[@]}"; do
    start=$(date +%s%N)
    # shellcheck disable=SC2046
    "$cli" scan --json $(engine_args "$engine") "$first" >/dev/null
    echo "$(engine_args "$engine"): $(( ($(date +%s%N) - start) / 1000000 )) ms for the process, of which the scan's own is in its ms"
done

# score_set SET NAME FOLDER: every engine and the yardstick on a generated set with a fixture manifest.
score_set() {
    local name=$1 folder=$2
    echo "== $name ($folder)"
    for engine in "${engines[@]}"; do
        echo "-- $(engine_args "$engine")"
        # shellcheck disable=SC2046
        "$cli" scan --json --timings --reveal --jobs 1 $(engine_args "$engine") "$folder"/*.png >".devsets/$name-$engine.jsonl" 2>/dev/null || true
        python3 scripts/bench/score_set.py "$folder/manifest.json" ".devsets/$name-$engine.jsonl"
        python3 scripts/bench/stages.py ".devsets/$name-$engine.jsonl"
    done
    echo "-- paths: the first pass alone, the whole scan, and the fallback's share"
    python3 scripts/bench/paths.py ".devsets/$name-first-pass.jsonl" ".devsets/$name-both.jsonl" || true
    if [ -n "$yardstick" ]; then
        echo "-- yardstick (rapidocr-onnxruntime, one thread)"
        "$yardstick" scripts/bench/yardstick.py "$folder"/*.png >".devsets/$name-yardstick.jsonl" 2>/dev/null
        python3 scripts/bench/score_set.py "$folder/manifest.json" ".devsets/$name-yardstick.jsonl"
    fi
}
score_set fixtures Fixtures/cards
score_set gen2 "$gen2"

# scan_real NAME MANIFEST EXTRA PICTURE...: every engine and the yardstick on real labelled
# pictures, each run kept in .devsets/NAME-RUN.jsonl and scored by cards-dev's score.py (with
# EXTRA, when not empty, as a second scoring's option) and per category.
scan_real() {
    local name=$1 manifest=$2 extra=$3
    shift 3
    local runs=("${engines[@]}")
    [ -n "$yardstick" ] && runs+=(yardstick)
    for run in "${runs[@]}"; do
        echo "-- $run"
        local out=".devsets/$name-$run.jsonl"
        if [ "$run" = yardstick ]; then
            "$yardstick" scripts/bench/yardstick.py "$@" >"$out" 2>/dev/null
        else
            # shellcheck disable=SC2046
            "$cli" scan --json --timings --reveal --jobs 1 $(engine_args "$run") "$@" >"$out" 2>/dev/null || true
        fi
        if [ -f "$dev/score.py" ]; then
            python3 "$dev/score.py" "$manifest" "$out"
            [ -n "$extra" ] && python3 "$dev/score.py" "$manifest" "$out" "$extra"
        else
            echo "($dev/score.py not found: the per-category table only)"
        fi
        python3 scripts/bench/score_dev.py "$manifest" "$out"
        if [ "$run" != yardstick ]; then python3 scripts/bench/stages.py "$out"; fi
    done
    echo "-- paths: the first pass alone, the whole scan, and the fallback's share"
    python3 scripts/bench/paths.py ".devsets/$name-first-pass.jsonl" ".devsets/$name-both.jsonl" || true
}

if [ -f "$dev/manifest.json" ]; then
    echo "== $dev (real pictures; scored by its score.py, then per category)"
    scan_real cards-dev "$dev/manifest.json" --exclude-overlap "$dev"/*.png
else
    echo "== $dev not found: set CARDS_DEV to the folder of real labelled pictures to score them"
fi

# The held-out part of cards-train2 (Models/data/cards-train2-split.json, scripts/data/split_train2.py: split by
# card, nothing trained or tuned on it): its whole/ pictures scanned in place, scored against their labels.
if [ -f "$train2/whole/manifest.json" ]; then
    echo "== $train2, held-out whole/ pictures (real photos; scored by cards-dev's score.py, then per category)"
    heldout_manifest=.devsets/train2-heldout-manifest.json
    paths=$(python3 scripts/bench/subset_manifest.py Models/data/cards-train2-split.json heldout \
        "$train2/whole/manifest.json" "$heldout_manifest")
    mapfile -t heldout <<<"$paths"
    echo "${#heldout[@]} pictures"
    scan_real train2-heldout "$heldout_manifest" "" "${heldout[@]}"
else
    echo "== $train2 not found: set CARDS_TRAIN2 to score its held-out pictures"
fi

echo "== serve's resident memory with the models loaded (after one scan through POST /v1/scans)"
bash scripts/bench/serve-memory.sh "$cli"
