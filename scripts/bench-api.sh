#!/usr/bin/env bash
# The API under load: token creations and transactions per second over HTTP, with their
# latency, against the rate of a trivial route (GET /healthz) on the same server in the same
# run as the ceiling. Release build, a new vault in a temporary folder, wrk (Debian) on the
# same machine. Usage: scripts/bench-api.sh [SECONDS] [CONNECTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
connections=${2:-32}
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

# Warm up, then measure each route. The transactions run spends tokens made beforehand, by an
# unmeasured run that collects their ids.
run 2 "$url/healthz" >/dev/null
run "$seconds" "$url/healthz" >"$work/healthz.txt"
run "$seconds" -s scripts/bench-api/tokens.lua "$url/v1/tokens" >"$work/tokens.txt.out"
COLLECT_TOKENS=1 run "$seconds" -s scripts/bench-api/tokens.lua "$url/v1/tokens" >/dev/null
run "$seconds" -s scripts/bench-api/transactions.lua "$url/v1/transactions" >"$work/transactions.txt.out"

python3 - "$work" "$seconds" "$connections" <<'PY'
import re, sys
work, seconds, connections = sys.argv[1], sys.argv[2], sys.argv[3]
def parse(name):
    text = open(f"{work}/{name}").read()
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    def ms(p):
        value, unit = re.search(rf"\s{p}%\s+([\d.]+)(us|ms|s)", text).groups()
        return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    errors = re.search(r"Socket errors: (.*)", text)
    return rate, ms(50), ms(99), int(bad.group(1)) if bad else 0, errors.group(1) if errors else ""
ceiling = parse("healthz.txt")
print(f"API load, {connections} connections, {seconds} s per route, wrk -t2 on the same 2-core machine")
print(f"{'route':28} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'of ceiling':>11} {'non-2xx':>8}")
for label, name in [("GET /healthz (ceiling)", "healthz.txt"), ("POST /v1/tokens", "tokens.txt.out"), ("POST /v1/transactions", "transactions.txt.out")]:
    rate, p50, p99, bad, errors = parse(name)
    print(f"{label:28} {rate:9.0f} {p50:8.2f} {p99:8.2f} {rate / ceiling[0]:10.0%} {bad:8d}" + (f"  socket errors: {errors}" if errors else ""))
PY
