#!/usr/bin/env bash
# The scanner's figures on three sets, release build, one worker (what `make bench` runs):
#   1. Fixtures/cards: the regression suite, against the plain tesseract route in the same run;
#   2. the second generator's cards (scripts/gen2, fonts the model never trained on), made once into
#      .devsets/gen2 if missing;
#   3. the real labelled pictures in ../shared/cards-dev (or $CARDS_DEV), when that folder is there:
#      its own score.py, then per category (scripts/bench/score_dev.py). Numbers are never printed.
set -euo pipefail
cd "$(dirname "$0")/../.."
cli=.build/release/capture-cli
dev=${CARDS_DEV:-../shared/cards-dev}
gen2=.devsets/gen2

echo "== Fixtures/cards (regression suite)"
for engine in both learned; do
    echo "-- --engine $engine"
    "$cli" bench Fixtures/cards --jobs 2 --engine "$engine" --no-baseline
done
"$cli" bench Fixtures/cards --jobs 2 --engine tesseract

if [ ! -f "$gen2/manifest.json" ]; then
    echo "== making the second generator's set in $gen2"
    bash scripts/gen2/install-deps.sh
    python3 scripts/gen2/generate.py --out "$gen2" --seed 11 --count 240
fi
echo "== $gen2 (second generator, held-out typefaces)"
"$cli" bench "$gen2" --no-baseline --jobs 2

if [ -f "$dev/manifest.json" ]; then
    echo "== $dev (real pictures; scan --json --reveal --jobs 1, scored by its score.py)"
    mkdir -p .devsets
    # Each engine alone and together (--engine; both is the default).
    for engine in both learned tesseract; do
        echo "-- --engine $engine"
        "$cli" scan --json --reveal --jobs 1 --engine "$engine" "$dev"/*.png > ".devsets/cards-dev-$engine.jsonl" || true
        python3 "$dev/score.py" "$dev/manifest.json" ".devsets/cards-dev-$engine.jsonl"
        python3 "$dev/score.py" "$dev/manifest.json" ".devsets/cards-dev-$engine.jsonl" --exclude-overlap
        python3 scripts/bench/score_dev.py "$dev/manifest.json" ".devsets/cards-dev-$engine.jsonl"
    done
else
    echo "== $dev not found: set CARDS_DEV to the folder of real labelled pictures to score them"
fi
