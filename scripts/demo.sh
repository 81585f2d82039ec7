#!/usr/bin/env bash
# The main job on the embedded defaults, as `make run` runs it: build the release binary, scan
# the bundled cards, then start the API on a new vault in a temporary folder, create a
# merchant's keys, tokenize cards (one read off an image) and charge them in the sandbox (one
# succeeds, one is declined by its test number), stop the server and sum up what was shown.
# Set CAPTURE_CLI to use a binary already built instead.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && { kill $server 2>/dev/null; wait $server 2>/dev/null; }; rm -rf "$work"' EXIT

# On a terminal, a line that rewrites itself; in a log, a line per tenth of the build.
tty=false
[ -t 1 ] && tty=true
step() { printf '\n== %s\n' "$*"; }

if [ -z "${CAPTURE_CLI:-}" ]; then
    step "building capture-cli (release: the scanner is 5 to 10 times faster than a debug build; the first build takes several minutes on 2 cores)"
    build_start=$(date +%s)
    shown=-1
    set +e
    swift build -c release --product capture-cli 2>&1 | tee "$work/build.log" | while IFS= read -r line; do
        if [[ $line =~ ^\[([0-9]+)/([0-9]+)\] ]]; then
            done_steps=${BASH_REMATCH[1]} total=${BASH_REMATCH[2]}
            percent=$((done_steps * 100 / total))
            elapsed=$(($(date +%s) - build_start))
            if $tty; then
                printf '\r\033[2Kbuilding: %3d%% (%d of %d steps, %d s)' "$percent" "$done_steps" "$total" "$elapsed"
            elif [ $((percent / 10)) -gt "$shown" ]; then
                shown=$((percent / 10))
                printf 'building: %3d%% (%d of %d steps, %d s)\n' "$percent" "$done_steps" "$total" "$elapsed"
            fi
        fi
    done
    status=${PIPESTATUS[0]}
    set -e
    $tty && printf '\r\033[2K'
    if [ "$status" -ne 0 ]; then
        echo "the build failed (exit $status); its last lines:" >&2
        grep -v '^\[[0-9]*/[0-9]*\]' "$work/build.log" | tail -30 >&2
        exit "$status"
    fi
    echo "built in $(($(date +%s) - build_start)) s: .build/release/capture-cli"
fi
cli=${CAPTURE_CLI:-.build/release/capture-cli}

images=(Fixtures/cards/*.png)
step "scanning the ${#images[@]} bundled card images (a progress bar on a terminal; some images hold no card number on purpose)"
scan_start=$(date +%s)
"$cli" scan "${images[@]}" | tee "$work/scan.txt" || [ "${PIPESTATUS[0]}" -eq 1 ] # 1: some images hold no number
scan_seconds=$(($(date +%s) - scan_start))
# Each row against the fixtures' manifest: the masked number (first 6, last 4) and the expiry.
scan_summary=$(python3 - "$work/scan.txt" Fixtures/cards/manifest.json <<'PY'
import json, sys
rows = [line.split() for line in open(sys.argv[1]).read().splitlines()[1:]]
cards = {card["file"]: card for card in json.load(open(sys.argv[2]))}
def mask(pan):
    return pan[:6] + "*" * (len(pan) - 10) + pan[-4:]
with_number = [row for row in rows if cards.get(row[0], {}).get("pan")]
found = [row for row in rows if len(row) > 4 and row[1] == "found"]
right = [row for row in found if cards.get(row[0], {}).get("pan") and row[2] == mask(cards[row[0]]["pan"])]
wrong = [row for row in found if row not in right]
dated = [row for row in right if row[4] == "%02d/%02d" % (cards[row[0]]["month"], cards[row[0]]["year"] % 100)]
print(f"{len(right)} of the {len(with_number)} images that show a number read right, {len(dated)} with the right expiry; {len(wrong)} misread")
PY
)

port=${CAPTURE_DEMO_PORT:-18080}
"$cli" serve --port "$port" --database "$work/vault.sqlite" >"$work/serve.log" 2>&1 &
server=$!
# The first start makes the vault and its key; wait until the server is ready (it listens at
# once and loads the scanner's models beside: /readyz says 200 once they have loaded).
ready() {
    (exec 3<>/dev/tcp/127.0.0.1/"$port" && printf 'GET /readyz HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3 && head -c 12 <&3 | grep -q " 200") 2>/dev/null
}
for _ in $(seq 600); do
    ready && break
    sleep 0.1
done

step "a merchant's keys (printed once)"
keys=$("$cli" keys create --merchant demo-shop --database "$work/vault.sqlite" --json)
publishable=$(sed -n 's/.*"publishable_key":"\([^"]*\)".*/\1/p' <<<"$keys")
secret=$(sed -n 's/.*"secret_key":"\([^"]*\)".*/\1/p' <<<"$keys")
echo "publishable $publishable, secret ${secret:0:7}…"
api=(--server "http://127.0.0.1:$port")
tokens=0 succeeded=0 declined=0

charge() {
    local line
    line=$("$cli" charge --token "$1" --amount "$2" --currency "$3" --key "$secret" "${api[@]}") || true
    echo "$line"
    case "$line" in
        *" succeeded "*) succeeded=$((succeeded + 1)) ;;
        *" declined "*) declined=$((declined + 1)) ;;
    esac
}

step "tokenize a card read off an image (t012-flat-visa.png), then charge it"
token=$("$cli" tokenize Fixtures/cards/t012-flat-visa.png --cvc 123 --key "$publishable" "${api[@]}")
echo "$token"
tokens=$((tokens + 1))
charge "${token%% *}" 1999 EUR

step "a sandbox decline (test number 4000 0000 0000 0002)"
token=$("$cli" tokenize --number 4000000000000002 --expiry 12/30 --cvc 123 --key "$publishable" "${api[@]}")
echo "$token"
tokens=$((tokens + 1))
charge "${token%% *}" 500 USD

step "the server's log (one line per request; no card data)"
cat "$work/serve.log"

step "summary"
echo "cards read:   $scan_summary ($scan_seconds s for ${#images[@]} images)"
echo "tokens made:  $tokens (single use, 5 minutes)"
echo "charges:      $succeeded succeeded, $declined declined (sandbox)"
echo "total time:   $(($(date +%s) - started)) s"
cat <<EOF

Next, try:
  $cli scan --json Fixtures/cards/t012-flat-visa.png     # one card, as JSON
  $cli enter                                             # type a card in, checked as you type
  $cli validate --number 4242424242424242 --expiry 12/30 --cvc 123
  $cli keys create --merchant my-shop && $cli serve      # the API on ./capture-vault.sqlite
  make test                                              # every test
EOF
