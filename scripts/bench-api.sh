#!/usr/bin/env bash
# The API under load: token creations and transactions per second over HTTP, with their
# latency, against the rate of a trivial route (GET /healthz) on the same server as the
# ceiling. Release build, a new vault in a temporary folder, wrk (Debian) on the same machine.
#
# The routes are measured in rounds, each round healthz, then tokens, then transactions, and
# each route's share of the ceiling is taken within its round: a shared 2-core machine's speed
# drifts by a quarter from one minute to the next, so one ceiling measured a minute before a
# route says little about it. The figures are the medians over the rounds.
# Usage: scripts/bench-api.sh [SECONDS per route and round] [CONNECTIONS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-5}
connections=${2:-32}
rounds=${3:-5}
threads=2
cli=${CAPTURE_CLI:-.build/release/capture-cli}

if ! command -v wrk >/dev/null; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq wrk
fi

work=$(mktemp -d)
port=${CAPTURE_BENCH_PORT:-18181}
"$cli" serve --port "$port" --database "$work/vault.sqlite" --token-ttl 3600 --token-rate-limit 0 >"$work/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do
    (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
    sleep 0.1
done
keys=$("$cli" keys create --merchant bench --database "$work/vault.sqlite" --json 2>/dev/null)
export CAPTURE_PK=$(sed -n 's/.*"publishable_key":"\([^"]*\)".*/\1/p' <<<"$keys")
export CAPTURE_SK=$(sed -n 's/.*"secret_key":"\([^"]*\)".*/\1/p' <<<"$keys")
export TOKENS_FILE="$work/tokens.txt" WRK_THREADS=$threads
url="http://127.0.0.1:$port"
run() { wrk -t"$threads" -c"$connections" -d"$1"s --latency "${@:2}"; }

# Warm up, then the rounds. Each transactions run spends tokens made just before it, by an
# unmeasured run that collects their ids.
run 2 "$url/healthz" >/dev/null
for round in $(seq "$rounds"); do
    run "$seconds" "$url/healthz" >"$work/healthz.$round"
    run "$seconds" -s scripts/bench-api/tokens.lua "$url/v1/tokens" >"$work/tokens.$round"
    COLLECT_TOKENS=1 run "$seconds" -s scripts/bench-api/tokens.lua "$url/v1/tokens" >/dev/null
    run "$seconds" -s scripts/bench-api/transactions.lua "$url/v1/transactions" >"$work/transactions.$round"
done

python3 - "$work" "$seconds" "$connections" "$rounds" <<'PY'
import re, statistics, sys
work, seconds, connections, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def parse(name):
    text = open(f"{work}/{name}").read()
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    def ms(p):
        value, unit = re.search(rf"\s{p}%\s+([\d.]+)(us|ms|s)", text).groups()
        return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    errors = re.search(r"Socket errors: (.*)", text)
    return dict(rate=rate, p50=ms(50), p99=ms(99), bad=int(bad.group(1)) if bad else 0, errors=errors.group(1) if errors else "")
routes = [("GET /healthz (ceiling)", "healthz"), ("POST /v1/tokens", "tokens"), ("POST /v1/transactions", "transactions")]
runs = {name: [parse(f"{name}.{r}") for r in range(1, rounds + 1)] for _, name in routes}
print(f"API load, {connections} connections, {rounds} rounds of {seconds} s per route, wrk -t2 on the same 2-core machine")
print("per round, req/s and share of that round's ceiling:")
for _, name in routes:
    cells = [f"{run['rate']:6.0f} {run['rate'] / ceiling['rate']:4.0%}" for run, ceiling in zip(runs[name], runs["healthz"])]
    print(f"  {name:13} " + "  ".join(cells))
print(f"medians over the rounds:")
print(f"{'route':28} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'of ceiling':>11} {'non-2xx':>8}")
for label, name in routes:
    median = lambda key: statistics.median(run[key] for run in runs[name])
    share = statistics.median(run["rate"] / ceiling["rate"] for run, ceiling in zip(runs[name], runs["healthz"]))
    errors = "; ".join(run["errors"] for run in runs[name] if run["errors"])
    print(f"{label:28} {median('rate'):9.0f} {median('p50'):8.2f} {median('p99'):8.2f} {share:10.0%} {sum(run['bad'] for run in runs[name]):8d}" + (f"  socket errors: {errors}" if errors else ""))
PY
