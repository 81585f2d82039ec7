#!/usr/bin/env bash
# The Swift tests, in two processes at once: the command-line tests, which wait on the
# capture-cli processes they start (a minute of waiting on two cores), and all the others.
# In one process those waits held Swift's concurrency threads (one per core), and the HTTP
# tests beside them stalled until a request to a test server went unanswered for 20 s.
# The command-line tests run from the built test bundle itself: a second `swift test`, even
# with --skip-build, waits on SwiftPM's lock on .build until the first ends (and with
# --ignore-lock the two collide on its build database), so the two ran one after the other.
set -uo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
# The tests that run on both stores need PostgreSQL: scripts/test.sh starts a cluster; run
# alone, this starts one of its own and stops it at the end.
if [ -z "${CAPTURE_TEST_POSTGRES:-}" ]; then
    pg_dir=$(mktemp -d /tmp/capture-test-postgres.XXXXXX)
    root=$(pwd)
    trap 'bash "$root/scripts/postgres-cluster.sh" stop "$pg_dir"; rm -rf "$pg_dir"' EXIT
    CAPTURE_TEST_POSTGRES=$(bash scripts/postgres-cluster.sh start "$pg_dir" --fast) || exit 1
    export CAPTURE_TEST_POSTGRES CAPTURE_TEST_POSTGRES_DIR=$pg_dir
fi
$SWIFT build --build-tests || exit 1
echo "==== swift-tests.sh: the build with the tests done in $SECONDS s"
log=.build/cli-tests.log
bundle="$($SWIFT build --show-bin-path)/card-capturePackageTests.xctest"
"$bundle" --testing-library swift-testing --filter CaptureCLITests >"$log" 2>&1 &
cli=$!
# The scanner in the other tests' process as capture-cli runs it (CaptureCLI.limitOpenMPThreads):
# Tesseract's OpenMP threads only spin against the scans beside them on a small machine. The
# fixture scans took half again as long without it. (Not for the command-line tests: the
# capture-cli they start sets it for itself.)
OMP_THREAD_LIMIT=${OMP_THREAD_LIMIT:-1} $SWIFT test --skip-build --disable-xctest --skip CaptureCLITests
main=$?
wait "$cli"
status=$?
echo "---- the command-line tests (in their own process):"
cat "$log"
# A filter that matches nothing passes quietly: the command-line tests must have run.
if ! grep -q "Test run with [1-9][0-9]* tests" "$log"; then
    echo "the command-line tests did not run (no test matched CaptureCLITests)" >&2
    status=1
fi
if [ "$main" -ne 0 ] || [ "$status" -ne 0 ]; then
    echo "swift tests failed: the others exited $main, the command-line tests $status" >&2
    exit 1
fi
