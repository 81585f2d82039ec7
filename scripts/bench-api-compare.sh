#!/usr/bin/env bash
# Two builds of capture-cli under the same API load, to tell whether a change made the API
# faster. On a shared machine the speed drifts by a quarter from one minute to the next, more
# than most changes move it, so one bench-api run of each build says little. This runs one
# bench-api round of each build per turn, alternating which goes first (A B, B A, A B, ...),
# with the disk's dirty pages written out before every round (a finished round's deleted vault
# otherwise leaves writeback that slows the next round's syncs), and gives for each build and
# route the median share of its own round's /healthz.
#
# Usage: scripts/bench-api-compare.sh OLD_BINARY NEW_BINARY [TURNS, default 6]
# CAPTURE_COMPARE_STORE=postgres-1 (or postgres-2) compares them on PostgreSQL (default sqlite).
# e.g.   git stash; swift build -c release; cp .build/release/capture-cli /tmp/old
#        git stash pop; swift build -c release
#        bash scripts/bench-api-compare.sh /tmp/old .build/release/capture-cli
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
    echo "usage: $0 OLD_BINARY NEW_BINARY [TURNS]" >&2
    exit 2
fi
old=$1 new=$2 turns=${3:-6}
store=${CAPTURE_COMPARE_STORE:-sqlite}
case $store in sqlite | postgres-1 | postgres-2) ;; *) echo "$0: CAPTURE_COMPARE_STORE is sqlite, postgres-1 or postgres-2" >&2; exit 2 ;; esac
for binary in "$old" "$new"; do
    [ -x "$binary" ] || { echo "$0: $binary is not an executable capture-cli" >&2; exit 2; }
done
results=$(mktemp)
trap 'rm -f "$results"' EXIT

round() { # name binary
    sync
    sleep 1
    CAPTURE_CLI=$2 CAPTURE_BENCH_STORES=$store bash scripts/bench-api.sh 5 32 1 |
        awk -v name="$1" '/^(SQLite|PostgreSQL) /{print name "|" $0}' >>"$results"
}
for turn in $(seq "$turns"); do
    if [ $((turn % 2)) -eq 1 ]; then round old "$old"; round new "$new"; else round new "$new"; round old "$old"; fi
    echo "turn $turn of $turns done" >&2
done

python3 - "$results" "$old" "$new" <<'PY'
import collections, statistics, sys
results, old, new = sys.argv[1:]
rows = collections.defaultdict(list)
routes = ["GET /healthz", "POST /v1/tokens", "POST /v1/transactions", "with Idempotency-Key"]
for line in open(results):
    # name|store (14 characters) route (22) req/s p50 p99 of-ceiling [of-pgbench] non-2xx
    name, row = line.rstrip("\n").split("|", 1)
    route, numbers = row[15:37].strip(), row[37:].split()
    if route not in routes:
        continue
    rate, p99, share, bad = float(numbers[0]), float(numbers[2]), float(numbers[3].rstrip("%")), int(numbers[-1])
    rows[(route, name)].append((rate, p99, share, bad))
print(f"old: {old}\nnew: {new}")
print(f"{'route':22} {'build':5} {'rounds':>6} {'req/s':>8} {'p99 ms':>7} {'of ceiling':>10}  per round")
for route in routes:
    for name in ("old", "new"):
        runs = rows[(route, name)]
        median = lambda index: statistics.median(run[index] for run in runs)
        shares = " ".join(f"{run[2]:.0f}" for run in runs)
        bad = sum(run[3] for run in runs)
        print(f"{route:22} {name:5} {len(runs):6d} {median(0):8.0f} {median(1):7.2f} {median(2):9.0f}%  {shares}" + (f"  non-2xx: {bad}" if bad else ""))
PY
