#!/usr/bin/env bash
# The API under load, on each store: token creations and transactions per second over HTTP,
# with their latency, for SQLite, for PostgreSQL with one server and with two servers sharing
# the vault; and `pgbench -N` (its simple-update transactions) on the same PostgreSQL cluster,
# at the same client count, as the reference of what the database does alone. Release build,
# a new vault in a temporary folder, a new PostgreSQL cluster at its default settings
# (scripts/postgres-cluster.sh, fsync on), wrk (Debian) on the same machine.
#
# The routes are measured in rounds, each round healthz, then tokens, then transactions, then
# transactions each with an Idempotency-Key of its own, as a client that may retry sends them
# (then, on PostgreSQL, pgbench), and each route's share of the ceiling (GET /healthz on the same
# servers; on PostgreSQL it asks the database, as a load balancer's check does) and of pgbench
# is taken within its round: a shared 2-core machine's speed drifts by a quarter, at times by
# half, from one minute to the next. The figures are medians over the rounds. With two
# servers, wrk runs against each with half the connections at once; their rates are added, and
# the p50 and p99 are those of both runs' requests together (each run's latency distribution,
# written by scripts/bench-api/latency.lua, weighted by its request count).
# Usage: scripts/bench-api.sh [SECONDS per route and round] [CONNECTIONS] [ROUNDS]
# CAPTURE_BENCH_STORES="sqlite" (or any of sqlite postgres-1 postgres-2) measures only those.
# CAPTURE_BENCH_WEBHOOK_BACKLOG: the webhook backlog drained at the end (20000).
# CAPTURE_BENCH_POSTGRES_SOCKET=1: the servers and pgbench reach PostgreSQL through its Unix
# socket instead of TCP with TLS (sslmode=prefer), as servers on the database's machine would.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-5}
connections=${2:-32}
rounds=${3:-3}
cli=${CAPTURE_CLI:-.build/release/capture-cli}
stores=${CAPTURE_BENCH_STORES:-sqlite postgres-1 postgres-2}
wants() { [[ " $stores " == *" $1 "* ]]; }

missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v pgbench >/dev/null || ls /usr/lib/postgresql/*/bin/pgbench >/dev/null 2>&1 || missing+=(postgresql-contrib)
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
pgbench=$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench | sort -V | tail -1)

work=$(mktemp -d)
pg_dir=$(mktemp -d /tmp/capture-bench-postgres.XXXXXX)
servers=()
stop_servers() {
    for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${servers[@]}"; do wait "$pid" 2>/dev/null || true; done
    servers=()
}
trap 'stop_servers; bash scripts/postgres-cluster.sh stop "$pg_dir"; rm -rf "$work" "$pg_dir"' EXIT
postgres=""
via_socket=""
if wants postgres-1 || wants postgres-2; then
    postgres=$(bash scripts/postgres-cluster.sh start "$pg_dir")
    if [ "${CAPTURE_BENCH_POSTGRES_SOCKET:-0}" = 1 ]; then via_socket="?host=$pg_dir"; fi
    "$pgbench" -i -q -s 10 "$postgres$via_socket" >/dev/null 2>&1
fi

# Starts a server on the database; its URL in $started.
start_server() {
    local database=$1 port
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$cli" serve --port "$port" --database "$database" --token-ttl 3600 --token-rate-limit 0 \
        "${key_options[@]}" --sandbox-journal "$work/sandbox.journal" >>"$work/serve.log" 2>&1 &
    servers+=($!)
    for _ in $(seq 100); do
        (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
        sleep 0.1
    done
    started="http://127.0.0.1:$port"
}

# wrk against every URL at once, the connections split between them; output in $1.N, and
# each run's latency distribution in $1-latency.N (scripts/bench-api/latency.lua).
load() {
    local out=$1 path=$2 script=${3:-scripts/bench-api/latency.lua} count=${#urls[@]} i=0 pids=()
    for url in "${urls[@]}"; do
        i=$((i + 1))
        local threads=$((2 / count))
        TOKENS_FILE="$work/tokens.txt.$i" WRK_THREADS=$threads LATENCY_FILE="$out-latency.$i" \
            wrk -t"$threads" -c$((connections / count)) -d"$seconds"s --latency -s "$script" "$url$path" >"$out.$i" &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
}

# A transactions run, output in $1.N, spending tokens made just before it by an unmeasured run
# twice as long (charges on PostgreSQL run nearly as fast as token creations: a run that ran
# out of tokens would be measuring 404s).
charges() {
    COLLECT_TOKENS=1 seconds=$((seconds * 2)) load "$work/collect" /v1/tokens scripts/bench-api/tokens.lua
    load "$1" /v1/transactions scripts/bench-api/transactions.lua
}

# The rounds on the servers in $urls, for the configuration named $1.
measure() {
    local name=$1 database=$2
    keys=$("$cli" keys create --merchant "bench-$name" --database "$database" "${key_options[@]}" --json 2>/dev/null)
    export CAPTURE_PK=$(sed -n 's/.*"publishable_key":"\([^"]*\)".*/\1/p' <<<"$keys")
    export CAPTURE_SK=$(sed -n 's/.*"secret_key":"\([^"]*\)".*/\1/p' <<<"$keys")
    seconds=2 load "$work/warm" /healthz ""
    for round in $(seq "$rounds"); do
        load "$work/$name.healthz.$round" /healthz ""
        load "$work/$name.tokens.$round" /v1/tokens scripts/bench-api/tokens.lua
        charges "$work/$name.transactions.$round"
        IDEMPOTENCY_KEYS=1 charges "$work/$name.keyed.$round"
        if [ "$name" != sqlite ]; then pgbench_round "$work/$name.pgbench.$round"; fi
    done
    echo "${#urls[@]}" >"$work/$name.servers"
}

# The reference, in each PostgreSQL round right after the routes (the servers idle):
# pgbench -N at the same client count on the same cluster, its own tables in the cluster's
# first database. -N runs an update, a select and an insert per transaction, leaving out the
# contended branch and teller rows. A tenth of its transactions are logged with their latency
# (a sample costs pgbench nothing it would notice; logging every one would slow it). Output in
# $1 and $1.log.*.
pgbench_round() {
    (cd "$work" && "$pgbench" -N -c "$connections" -j 2 -T "$seconds" -l --sampling-rate 0.1 \
        --log-prefix "$(basename "$1").log" "$postgres$via_socket" >"$1" 2>&1)
}

# SQLite: one server on a file (its key beside it).
key_options=()
if wants sqlite; then
    start_server "$work/vault.sqlite"
    urls=("$started")
    measure sqlite "$work/vault.sqlite"
    stop_servers
fi

# PostgreSQL: one server, then two on one new database each (the key in a file both read).
key_options=(--master-key-file "$work/master.key")
for count in 1 2; do
    wants "postgres-$count" || continue
    database="capture_bench_$count"
    psql "$postgres" -XAtqc "CREATE DATABASE $database" >/dev/null
    url="${postgres%/*}/$database$via_socket"
    "$cli" migrate --database "$url" >/dev/null
    urls=()
    for _ in $(seq "$count"); do
        start_server "$url"
        urls+=("$started")
    done
    measure "postgres-$count" "$url"
    stop_servers
done

python3 - "$work" "$seconds" "$connections" "$rounds" <<'PY'
import glob, os, re, statistics, sys
work, seconds, connections, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def parse_one(path):
    text = open(path).read()
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    def ms(p):
        value, unit = re.search(rf"\s{p}%\s+([\d.]+)(us|ms|s)", text).groups()
        return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    return dict(rate=rate, p50=ms(50), p99=ms(99), bad=int(bad.group(1)) if bad else 0)
def distribution(path):
    """A run's request count and its latency quantiles, (quantile %, ms), from latency.lua."""
    lines = open(path).read().split("\n")
    count = int(lines[0].split()[1])
    return count, [(float(q), float(us) / 1000) for q, us in (line.split() for line in lines[1:] if line)]
def merged(distributions, q):
    """The q % quantile of the requests of every run together: the least latency that q % of
    them, counted over the runs by their request counts, took at most."""
    total = sum(count for count, _ in distributions)
    def share_within(ms):
        return sum(count * max((p for p, v in quantiles if v <= ms), default=0) for count, quantiles in distributions) / total
    candidates = sorted({v for _, quantiles in distributions for _, v in quantiles})
    return next((ms for ms in candidates if share_within(ms) >= q), candidates[-1])
def parse(prefix):
    """A route's run against one or more servers at once: the rates added, and the p50 and p99
    of all its requests (with one server, wrk's own)."""
    parts = [parse_one(p) for p in sorted(glob.glob(prefix + ".*"))]
    p50, p99 = parts[0]["p50"], parts[0]["p99"]
    if len(parts) > 1:
        distributions = [distribution(p) for p in sorted(glob.glob(prefix + "-latency.*"))]
        p50, p99 = merged(distributions, 50), merged(distributions, 99)
    return dict(rate=sum(p["rate"] for p in parts), p50=p50, p99=p99, bad=sum(p["bad"] for p in parts))
print(f"API load, {connections} connections, {rounds} rounds of {seconds} s per route, wrk on the same 2-core machine")
def pgbench(path):
    """A pgbench round: its transactions a second, and the p50 and p99 of its logged latencies
    (microseconds, each log line's third field)."""
    tps = float(re.search(r"tps = ([\d.]+)", open(path).read()).group(1))
    latencies = sorted(int(line.split()[2]) for log in glob.glob(path + ".log.*") for line in open(log))
    p50, p99 = (latencies[min(len(latencies) - 1, int(len(latencies) * q))] / 1000 for q in (0.5, 0.99))
    return dict(rate=tps, p50=p50, p99=p99)
print(f"{'store':14} {'route':22} {'req/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'of ceiling':>10} {'of pgbench':>10} {'non-2xx':>7}")
for store in [s for s in ["sqlite", "postgres-1", "postgres-2"] if os.path.exists(f"{work}/{s}.servers")]:
    label = {"sqlite": "SQLite", "postgres-1": "PostgreSQL x1", "postgres-2": "PostgreSQL x2"}[store]
    runs = {name: [parse(f"{work}/{store}.{name}.{r}") for r in range(1, rounds + 1)] for name in ["healthz", "tokens", "transactions", "keyed"]}
    references = [pgbench(f"{work}/{store}.pgbench.{r}") for r in range(1, rounds + 1)] if store != "sqlite" else None
    for name, route in [("healthz", "GET /healthz"), ("tokens", "POST /v1/tokens"), ("transactions", "POST /v1/transactions"),
                        ("keyed", "  with Idempotency-Key")]:
        median = lambda key: statistics.median(run[key] for run in runs[name])
        share = statistics.median(run["rate"] / ceiling["rate"] for run, ceiling in zip(runs[name], runs["healthz"]))
        of_pgbench = ""
        if references and name != "healthz":
            of_pgbench = f"{statistics.median(run['rate'] / ref['rate'] for run, ref in zip(runs[name], references)):9.2f}x"
        print(f"{label:14} {route:22} {median('rate'):8.0f} {median('p50'):7.2f} {median('p99'):7.2f} {share:9.0%} {of_pgbench:>10} {sum(r['bad'] for r in runs[name]):7d}")
    if references:
        median = lambda key: statistics.median(ref[key] for ref in references)
        print(f"{label:14} {'pgbench -N, same round':22} {median('rate'):8.0f} {median('p50'):7.2f} {median('p99'):7.2f}")
PY

# Webhook delivery (issue 65): a backlog of 20,000 due deliveries drained to one endpoint that
# answers in 3 ms, by one server and by two on one PostgreSQL vault (and one on SQLite);
# deliveries a second and the drain time (scripts/bench-api/webhooks.py).
webhook_options=()
if wants sqlite; then webhook_options+=(--sqlite); fi
webhook_servers=()
for count in 1 2; do if wants "postgres-$count"; then webhook_servers+=("$count"); fi; done
if [ ${#webhook_servers[@]} -gt 0 ]; then webhook_options+=(--postgres "$postgres$via_socket" --servers "${webhook_servers[@]}"); fi
python3 scripts/bench-api/webhooks.py --cli "$cli" --backlog "${CAPTURE_BENCH_WEBHOOK_BACKLOG:-20000}" "${webhook_options[@]}"

# A request's log line, by handler: swift-log's StreamLogHandler (the server's text line before
# --log-format) against the server's own, text and JSON, written to /dev/null, in interleaved
# rounds; medians. The servers above logged JSON (their standard error was a file).
logs=$("$cli" bench-logs --lines 100000 --rounds 7 2>/dev/null)
python3 - "$logs" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
us = lambda name: r[name + "_ns_per_line"] / 1000
print(f"Log line, {r['lines']} lines x {r['rounds']} rounds, medians: StreamLogHandler {us('stream_text'):.2f} us,"
      f" --log-format text {us('server_text'):.2f} us ({r['server_text_vs_stream']:.2f}x),"
      f" --log-format json {us('server_json'):.2f} us ({r['server_json_vs_stream']:.2f}x)")
PY
