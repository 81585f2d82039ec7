#!/usr/bin/env python3
"""The API against its own document: schemathesis (pinned in scripts/test-requirements.txt, in
.venv-test/) runs every check, in every phase (examples, coverage, fuzzing, and the stateful
phase that follows openapi.json's links from the objects it makes to the routes that read them),
against `capture-cli serve` on a new vault with a secret key. Any failure fails the run.

The settings are in scripts/fuzz/: schemathesis.toml (the statuses a valid request may get) and
hooks.py (a fresh Idempotency-Key per request). The server's log and the fuzzer's reports (JUnit,
and a pytest file that replays each failure) go to the artefacts folder.

Usage: python3 scripts/fuzz-api.py --cli .build/debug/capture-cli [--max-time 120] [--seed N]
       [--postgres URL] [--artifacts DIR]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

from test_support import free_port, new_database

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", required=True, help="the capture-cli binary")
    parser.add_argument("--max-time", type=int, default=120, help="seconds for the whole fuzzer run")
    parser.add_argument("--seed", type=int, help="the fuzzer's seed (default: a new one, printed)")
    parser.add_argument("--postgres", help="a PostgreSQL server's URL: the vault is a new database there, not a new SQLite file")
    parser.add_argument("--artifacts", default=os.path.join(ROOT, "test-artifacts", "fuzz"))
    parser.add_argument("--venv", default=os.path.join(ROOT, ".venv-test"))
    arguments = parser.parse_args()

    schemathesis = os.path.join(arguments.venv, "bin", "schemathesis")
    if not os.access(schemathesis, os.X_OK):
        print("fuzz-api: no %s; run `bash scripts/install-deps.sh test-only` first" % schemathesis, file=sys.stderr)
        return 1
    cli = os.path.abspath(arguments.cli)
    os.makedirs(arguments.artifacts, exist_ok=True)
    seed = arguments.seed if arguments.seed is not None else int.from_bytes(os.urandom(8), "big")

    with tempfile.TemporaryDirectory(prefix="capture-fuzz.") as folder:
        database = new_database(arguments.postgres, "fuzz_") if arguments.postgres else os.path.join(folder, "vault.sqlite")
        environment = dict(os.environ)
        # A PostgreSQL vault's master key: a file beside the run (made by `keys create`).
        vault = ["--database", database] + (["--master-key-file", os.path.join(folder, "master.key")] if arguments.postgres else [])
        made = subprocess.run([cli, "keys", "create", "--merchant", "Fuzz", "--json"] + vault,
                              check=True, capture_output=True, text=True, env=environment)
        secret = json.loads(made.stdout)["secret_key"]
        port = free_port()
        log_path = os.path.join(arguments.artifacts, "serve.log")
        with open(log_path, "w") as log:
            # The token limit is off: the fuzzer makes thousands of tokens from one address.
            server = subprocess.Popen(
                [cli, "serve", "--port", str(port), "--token-rate-limit", "0",
                 "--log-format", "text", "--webhook-allow-private",
                 # In the run's folder: a PostgreSQL vault's default is the working folder.
                 "--sandbox-journal", os.path.join(folder, "sandbox.journal")] + vault,
                stdout=log, stderr=subprocess.STDOUT, env=environment)
        try:
            base = "http://127.0.0.1:%d" % port
            deadline = time.time() + 30
            while True:
                try:
                    urllib.request.urlopen(base + "/readyz", timeout=1).read()
                    break
                except OSError:
                    if server.poll() is not None or time.time() > deadline:
                        print("fuzz-api: the server did not start; see " + log_path, file=sys.stderr)
                        return 1
                    time.sleep(0.2)
            command = [
                schemathesis, "--config-file", os.path.join(HERE, "fuzz", "schemathesis.toml"), "--no-color",
                "run", base + "/openapi.json",
                "--checks", "all",
                "--phases", "examples,coverage,fuzzing,stateful",
                "--max-time", str(arguments.max_time),
                "--seed", str(seed),
                # One worker: Python 3.11's ast module, which Hypothesis calls to describe a
                # strategy, is not safe across threads ("AST constructor recursion depth mismatch").
                "--workers", "1",
                "--report", "junit,pytest",
                "--report-dir", arguments.artifacts,
            ]
            print("fuzz-api: seed %d, %d s, against %s (%s); replay with --seed %d"
                  % (seed, arguments.max_time, base, "PostgreSQL" if arguments.postgres else "SQLite", seed), flush=True)
            environment["CAPTURE_FUZZ_SECRET_KEY"] = secret
            # The hooks open checkout sessions for the page's posts (scripts/fuzz/hooks.py).
            environment["CAPTURE_FUZZ_BASE_URL"] = base
            # The hooks module is found beside the settings.
            environment["PYTHONPATH"] = os.path.join(HERE, "fuzz")
            status = subprocess.run(command, cwd=folder, env=environment).returncode
            if server.poll() is not None:
                print("fuzz-api: the server exited (%d) during the run; see %s" % (server.returncode, log_path),
                      file=sys.stderr)
                return 1
            if status != 0:
                print("fuzz-api: schemathesis found failures (above); reports in " + arguments.artifacts,
                      file=sys.stderr)
                return 1
            print("fuzz-api: no failure; the server answered throughout")
            return 0
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()


if __name__ == "__main__":
    sys.exit(main())
