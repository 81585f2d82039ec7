#!/usr/bin/env bash
# The Swift tests, in two processes at once: the command-line tests, which wait on the
# capture-cli processes they start (a minute of waiting on two cores), and all the others.
# In one process those waits held Swift's concurrency threads (one per core), and the HTTP
# tests beside them stalled until a request to a test server went unanswered for 20 s.
# Both skip the build, which is done first, and so ignore SwiftPM's lock on .build: with it
# the second process waited for the first to finish, a minute and more each run.
set -uo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
$SWIFT build --build-tests || exit 1
log=.build/cli-tests.log
$SWIFT test --skip-build --ignore-lock --disable-xctest --filter CaptureCLITests >"$log" 2>&1 &
cli=$!
$SWIFT test --skip-build --ignore-lock --disable-xctest --skip CaptureCLITests
main=$?
wait "$cli"
status=$?
echo "---- the command-line tests (in their own process):"
cat "$log"
if [ "$main" -ne 0 ] || [ "$status" -ne 0 ]; then
    echo "swift tests failed: the others exited $main, the command-line tests $status" >&2
    exit 1
fi
