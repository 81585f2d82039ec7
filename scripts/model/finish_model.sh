#!/usr/bin/env bash
# Turns the latest training checkpoint into Sources/CardCapture/Resources/card.traineddata (the package resource the scanner loads) and scores it.
#
# Writes the float model (lstmtraining --stop_training) and the integer model (--convert_to_int), scores
# both and Debian's eng with evaluate.py, keeps the integer model unless it is worse than the float one by
# more than INT_TOLERANCE percentage points of character error on any set, and writes the figures and wall
# times into Models/README.md (between the figures markers).
# Can run while training goes on: CHECKPOINT picks the checkpoint (default: the latest phase's).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
m=$root/scripts/model
w=$root/.model-work
t=$w/train
out=$w/final
INT_TOLERANCE=${INT_TOLERANCE:-0.5}
export OMP_THREAD_LIMIT=1

checkpoint=${CHECKPOINT:-}
if [ -z "$checkpoint" ]; then
    for c in "$t/p3/card_checkpoint" "$t/p2/card_checkpoint" "$t/p1/card_checkpoint"; do
        if [ -f "$c" ]; then checkpoint=$c; break; fi
    done
fi
[ -n "$checkpoint" ] || { echo "no checkpoint yet" >&2; exit 1; }
echo "== $(date '+%F %T') final model from $checkpoint"
start=$SECONDS

mkdir -p "$out/float" "$out/int"
lstmtraining --stop_training --continue_from "$checkpoint" --traineddata "$t/card/card.traineddata" \
    --model_output "$out/float/card.traineddata"
lstmtraining --stop_training --convert_to_int --continue_from "$checkpoint" \
    --traineddata "$t/card/card.traineddata" --model_output "$out/int/card.traineddata"

nice -n 10 python3 "$m/evaluate.py" --tessdata-dir "$out/float" --data "$w/data" --json "$out/float.json" \
    --errors "$out/float-errors.tsv" >"$out/float.md"
nice -n 10 python3 "$m/evaluate.py" --tessdata-dir "$out/int" --data "$w/data" --json "$out/int.json" \
    --errors "$out/int-errors.tsv" --eng >"$out/int.md"

choice=$(python3 - "$out" "$INT_TOLERANCE" <<'EOF'
import json, sys
out, tol = sys.argv[1], float(sys.argv[2])
f = json.load(open(f"{out}/float.json"))["card"]
i = json.load(open(f"{out}/int.json"))["card"]
worse = [k for k in f if k in i and i[k]["cer"] > f[k]["cer"] + tol and ":" not in k]
print("float" if worse else "int")
EOF
)
cp "$out/$choice/card.traineddata" "$root/Sources/CardCapture/Resources/card.traineddata"
printf '%s\t%s\n' "final model and evaluation" $((SECONDS - start)) >>"$w/times.tsv"
echo "kept the $choice model: Sources/CardCapture/Resources/card.traineddata ($(stat -c %s "$root/Sources/CardCapture/Resources/card.traineddata") bytes)"
python3 "$m/update_readme.py" --checkpoint "$checkpoint" --choice "$choice"
