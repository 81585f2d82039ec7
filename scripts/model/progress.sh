#!/usr/bin/env bash
# Shows how training is going: the last progress line of each phase and, with --eval, lstmeval of the
# latest checkpoint on phase 2's evaluation list (300 synthetic lines + the 162 held-out real crops).
set -euo pipefail
cd "$(dirname "$0")/../.."
w=.model-work
for phase in 1 2; do
    log=$w/logs/phase$phase.log
    [ -f "$log" ] || continue
    echo "phase $phase: $(grep -E '^At iteration' "$log" | tail -n 1 | cut -c1-160)"
    grep -E 'Finished' "$log" | tail -n 1 || true
done
if [ "${1:-}" = "--eval" ]; then
    for c in $w/train/p2/card_checkpoint $w/train/p1/card_checkpoint; do
        [ -f "$c" ] || continue
        for list in $w/train/p2/eval.txt $w/data/real-eval/list.txt; do
            [ -f "$list" ] || continue
            printf '%s on %s: ' "$c" "$list"
            OMP_THREAD_LIMIT=1 nice -n 10 lstmeval --model "$c" --traineddata $w/train/card/card.traineddata \
                --eval_listfile "$list" 2>&1 | tail -n 1
        done
        break
    done
fi
