#!/usr/bin/env bash
# serve's resident memory (VmRSS, VmHWM) when it starts, and after scans through POST /v1/scans have
# compiled the learned engine's models and warmed every scan worker (one scan per core, at once).
# usage: serve-memory.sh [CLI]
set -euo pipefail
cd "$(dirname "$0")/../.."
cli=${1:-.build/release/capture-cli}
work=$(mktemp -d)
port=${CAPTURE_BENCH_PORT:-18182}
"$cli" serve --port "$port" --database "$work/vault.sqlite" >"$work/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do
    (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
    sleep 0.1
done
memory() { awk '/^VmRSS|^VmHWM/ { printf "%s %d MB  ", $1, $2 / 1024 }' "/proc/$server/status"; echo; }
echo "started:      $(memory)"
keys=$("$cli" keys create --merchant bench --database "$work/vault.sqlite" --json 2>/dev/null)
pk=$(sed -n 's/.*"publishable_key":"\([^"]*\)".*/\1/p' <<<"$keys")
card=$(ls Fixtures/cards/*.png | head -1)
scan() {
    curl -s -o /dev/null -w '%{http_code} ' -H "Authorization: Bearer $pk" -H "Content-Type: image/png" \
        --data-binary @"$card" "http://127.0.0.1:$port/v1/scans"
}
echo "one scan:     $(scan)$(memory)"
pids=()
for i in $(seq "$(nproc)"); do
    scan >"$work/codes.$i" &
    pids+=($!)
done
wait "${pids[@]}"
echo "$(nproc) at once:  $(cat "$work"/codes.*)$(memory)"
