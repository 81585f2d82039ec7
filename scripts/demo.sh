#!/usr/bin/env bash
# The main job on the embedded defaults, as `make run` runs it: scan the bundled cards, then
# start the API on a new vault in a temporary folder, create a merchant's keys, tokenize cards
# read off images and charge them in the sandbox (one succeeds, one is declined by its test
# number), and stop the server.
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${CAPTURE_CLI:-.build/debug/capture-cli}

echo "== scanning the bundled cards"
"$cli" scan Fixtures/cards/*.png || [ $? -eq 1 ]   # 1: some images hold no card number

work=$(mktemp -d)
port=${CAPTURE_DEMO_PORT:-18080}
"$cli" serve --port "$port" --database "$work/vault.sqlite" >"$work/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
# The first start makes the vault and its key; wait until the server listens.
for _ in $(seq 100); do
    (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
    sleep 0.1
done

echo "== a merchant's keys (printed once)"
keys=$("$cli" keys create --merchant demo-shop --database "$work/vault.sqlite" --json)
publishable=$(sed -n 's/.*"publishable_key":"\([^"]*\)".*/\1/p' <<<"$keys")
secret=$(sed -n 's/.*"secret_key":"\([^"]*\)".*/\1/p' <<<"$keys")
echo "publishable $publishable, secret ${secret:0:7}…"
api=(--server "http://127.0.0.1:$port")

echo "== tokenize a card read off an image, then charge it"
token=$("$cli" tokenize Fixtures/cards/t012-flat-visa.png --cvc 123 --key "$publishable" "${api[@]}")
echo "$token"
"$cli" charge --token "${token%% *}" --amount 1999 --currency EUR --key "$secret" "${api[@]}"

echo "== a sandbox decline (test number 4000 0000 0000 0002)"
token=$("$cli" tokenize --number 4000000000000002 --expiry 12/30 --cvc 123 --key "$publishable" "${api[@]}")
"$cli" charge --token "${token%% *}" --amount 500 --currency USD --key "$secret" "${api[@]}" || true

echo "== the server's log"
cat "$work/serve.log"
