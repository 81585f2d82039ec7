#!/usr/bin/env bash
# Two servers on one PostgreSQL vault, for trying the set-up of README's "Several instances on
# PostgreSQL" on one machine: a throwaway cluster (scripts/postgres-cluster.sh), the schema
# migrated once, a merchant, and two `capture-cli serve` on ports 8081 and 8082 sharing the
# vault, its master key and the sandbox's journal. Ctrl-C stops the servers and the cluster;
# the folder stays (its vault with it) until you delete it.
#
#   scripts/two-instances.sh [FOLDER]     (default /tmp/capture-two-instances)
set -euo pipefail
cd "$(dirname "$0")/.."
folder=${1:-/tmp/capture-two-instances}
cli=${CAPTURE_CLI:-}
if [ -z "$cli" ]; then
    cli=.build/release/capture-cli
    [ -x "$cli" ] || cli=.build/debug/capture-cli
fi
[ -x "$cli" ] || { echo "build first: make release (or swift build)" >&2; exit 1; }
mkdir -p "$folder"
url=$(bash scripts/postgres-cluster.sh start "$folder/postgres")
echo "database: ${url%%:*}://capture:…@${url#*@}  (its log: $folder/postgres/postgres.log)"
"$cli" migrate --database "$url"
options=(--database "$url" --master-key-file "$folder/master.key")
if ! "$cli" keys list "${options[@]}" | grep -q '^demo '; then
    "$cli" keys create --merchant demo "${options[@]}"
fi
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait; bash scripts/postgres-cluster.sh stop "$folder/postgres"' EXIT
for port in 8081 8082; do
    "$cli" serve --port "$port" "${options[@]}" --sandbox-journal "$folder/sandbox.journal" >"$folder/serve-$port.log" 2>&1 &
    pids+=($!)
done
sleep 2
for port in 8081 8082; do
    echo "server on http://127.0.0.1:$port: $(curl -s "http://127.0.0.1:$port/healthz")  (log: $folder/serve-$port.log)"
done
echo "a token made on one server is spent on the other; Ctrl-C stops both and the database"
wait
