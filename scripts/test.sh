#!/usr/bin/env bash
# `make test`, after `make deps` and the lint: every test. The packages only the tests need
# (Chromium, its driver; Selenium and the schema fuzzer in .venv-test/: scripts/install-deps.sh
# test-only) are installed beside the
# Swift build rather than before it: on a new machine that is a minute of downloading and
# unpacking, and the build keeps both cores busy for ten.
set -uo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
# Each step's wall time, so that a slow CI run shows where its minutes went.
started=$SECONDS
lap() { echo "==== test.sh: $1 done at $((SECONDS - started)) s"; }
mkdir -p .build
extras_log=.build/test-deps.log
bash scripts/install-deps.sh test-only >"$extras_log" 2>&1 &
extras=$!

# A throwaway PostgreSQL cluster for every test that runs on both stores, stopped at the end,
# also on failure (scripts/postgres-cluster.sh; under /tmp, which its owner, not root, can reach).
pg_dir=$(mktemp -d /tmp/capture-test-postgres.XXXXXX)
root=$(pwd)
asan=""
cluster=""
api=""
# set +e first: under set -e a kill of a job that has ended (a failure after the sanitized tests
# finished) ended the trap there, and the cluster outlived the run.
trap 'set +e; for job in $asan $cluster $api; do kill "$job" 2>/dev/null; done; bash "$root/scripts/postgres-cluster.sh" stop "$pg_dir"; rm -rf "$pg_dir"' EXIT
if ! CAPTURE_TEST_POSTGRES=$(bash scripts/postgres-cluster.sh start "$pg_dir" --fast); then
    echo "the test PostgreSQL cluster did not start (above)" >&2
    exit 1
fi
export CAPTURE_TEST_POSTGRES
export CAPTURE_TEST_POSTGRES_DIR=$pg_dir

SWIFT=$SWIFT bash scripts/swift-tests.sh
swift_status=$?
lap "the Swift build and tests"
wait "$extras"
extras_status=$?
echo "---- the test-only packages (scripts/install-deps.sh test-only):"
cat "$extras_log"
if [ "$swift_status" -ne 0 ]; then exit 1; fi
if [ "$extras_status" -ne 0 ]; then
    echo "the test-only packages could not be installed (above)" >&2
    exit 1
fi

# The steps after the Swift tests run in two lanes at once (about two minutes instead of four):
# each waits mostly on the servers it starts, and on two cores neither lane's checks are bound
# to the other's pace. The lanes are split by what they share: the test cluster is stopped and
# started by the two-instance test, so every step that uses it is in the first lane.
lanes=.build/test-lanes
rm -rf "$lanes"
mkdir -p "$lanes"
cluster_lane() {
    set -e
    # kill -9 while charging, restart, retry: nothing stuck, orphaned or charged twice.
    python3 scripts/crash-test.py --cli .build/debug/capture-cli
    lap "the crash test on SQLite"
    # The same on PostgreSQL, with two servers sharing the vault: each round kills one of them.
    python3 scripts/crash-test.py --cli .build/debug/capture-cli --postgres "$CAPTURE_TEST_POSTGRES" --instances 2
    lap "the crash test on PostgreSQL"
    # Two servers on one PostgreSQL vault: spends, Idempotency-Keys, webhooks, revocation, limits,
    # and PostgreSQL stopped and started again under load.
    python3 scripts/instances-test.py --cli .build/debug/capture-cli --postgres "$CAPTURE_TEST_POSTGRES" --cluster-dir "$pg_dir"
    lap "the two-instance test"
    # The examples of README.md and docs/ that say they run (```sh run), against a server on a new
    # vault (the PostgreSQL ones on the test cluster, so after the two-instance test).
    python3 scripts/doc-examples.py --cli .build/debug/capture-cli
    lap "the docs' examples"
}
api_lane() {
    set -e
    # The API against its own openapi.json: schemathesis, every check and phase (the stateful one
    # follows the document's links), 60 s on a new SQLite vault; any finding fails
    # (test-artifacts/fuzz).
    .venv-test/bin/python scripts/fuzz-api.py --cli .build/debug/capture-cli --max-time 60
    lap "the schema fuzzer"
    # A client generated from openapi.json by openapi-python-client, default configuration, no
    # warning, driving a server through a checkout backend's flow, typed (issue 66).
    .venv-test/bin/python scripts/python-client-test.py --cli .build/debug/capture-cli
    lap "the generated Python client"
    # The hosted checkout page in headless Chromium: pay, decline, phone width, no JavaScript,
    # cancel; screenshots in test-artifacts/browser.
    .venv-test/bin/python scripts/browser-test.py --cli .build/debug/capture-cli --artifacts test-artifacts/browser
    lap "the browser test"
}
# The C bridges again under AddressSanitizer (leaks included): scripts/asan is a package of
# OCRBridge and its tests alone, so the sanitized build leaves out the server's libraries. It
# starts here too, beside the lanes.
asan_log=.build/asan-tests.log
(cd scripts/asan && exec $SWIFT test --disable-xctest --sanitize=address --scratch-path ../../.build-asan) >"$asan_log" 2>&1 &
asan=$!
(cluster_lane) >"$lanes/cluster.log" 2>&1 &
cluster=$!
(api_lane) >"$lanes/api.log" 2>&1 &
api=$!
cluster_status=0
wait "$cluster" || cluster_status=$?
api_status=0
wait "$api" || api_status=$?
asan_status=0
wait "$asan" || asan_status=$?
asan=""
echo "---- the crash tests, the two-instance test and the docs' examples (one lane):"
cat "$lanes/cluster.log"
echo "---- the schema fuzzer, the generated client and the browser test (the other lane):"
cat "$lanes/api.log"
echo "---- the C bridges under AddressSanitizer:"
cat "$asan_log"
lap "the lanes and the AddressSanitizer tests"
status=0
if [ "$cluster_status" -ne 0 ]; then
    echo "the crash tests, the two-instance test or the docs' examples failed (above)" >&2
    status=1
fi
if [ "$api_status" -ne 0 ]; then
    echo "the schema fuzzer, the generated client or the browser test failed (above)" >&2
    status=1
fi
if [ "$asan_status" -ne 0 ]; then
    echo "the C bridges failed under AddressSanitizer (above)" >&2
    status=1
fi
exit "$status"
