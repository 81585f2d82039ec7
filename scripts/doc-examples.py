#!/usr/bin/env python3
"""Runs the examples of README.md and docs/*.md that say they run (make test).

A fenced block whose info string is `sh run` is run; any other block is shown only (a command
that waits, such as `serve`, or one that needs what a reader has and the test has not). The
blocks of one file run in order in one bash (`set -euo pipefail`), so a variable set in one is
there in the next, and a failing command fails the file. They run in a new folder (the checkout's
Fixtures linked into it), with `capture-cli` on the PATH, and a server already serving a new
vault: $API is its address, $PK and $SK a merchant's publishable and secret keys. A file whose
example fails, or a README with no example that runs, fails the test.
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

from test_support import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = re.compile(r"^```sh run\n(.*?)^```$", re.S | re.M)


def blocks(path: str) -> list:
    with open(path, encoding="utf-8") as page:
        return BLOCK.findall(page.read())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True, help="the capture-cli to run")
    arguments = parser.parse_args()
    cli = os.path.abspath(arguments.cli)
    pages = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    if not blocks(pages[0]):
        print("doc-examples: README.md has no example that runs (```sh run)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="doc-examples.") as folder:
        os.symlink(os.path.join(ROOT, "Fixtures"), os.path.join(folder, "Fixtures"))
        database = os.path.join(folder, "docs-vault.sqlite")
        made = subprocess.run([cli, "keys", "create", "--merchant", "Docs", "--json", "--database", database],
                              check=True, capture_output=True, text=True)
        keys = json.loads(made.stdout)
        port = free_port()
        log_path = os.path.join(folder, "serve.log")
        with open(log_path, "w") as log:
            server = subprocess.Popen([cli, "serve", "--port", str(port), "--database", database, "--webhook-allow-private",
                                       "--sandbox-journal", os.path.join(folder, "sandbox.journal")],
                                      stdout=log, stderr=subprocess.STDOUT)
        try:
            api = "http://127.0.0.1:%d" % port
            deadline = time.time() + 60
            while True:
                try:
                    urllib.request.urlopen(api + "/readyz", timeout=1).read()
                    break
                except OSError:
                    if server.poll() is not None or time.time() > deadline:
                        print("doc-examples: the server did not start:\n" + open(log_path).read(), file=sys.stderr)
                        return 1
                    time.sleep(0.3)
            environment = dict(os.environ, API=api, PK=keys["publishable_key"], SK=keys["secret_key"],
                               PATH=os.path.dirname(cli) + os.pathsep + os.environ.get("PATH", ""))
            failed = []
            for page in pages:
                found = blocks(page)
                if not found:
                    continue
                name = os.path.relpath(page, ROOT)
                script = "set -euo pipefail\n" + "\n".join(found)
                started = time.time()
                run = subprocess.run(["bash", "-c", script], cwd=folder, env=environment, capture_output=True, text=True,
                                     timeout=600)
                print("doc-examples: %s: %d block%s, %.1f s, exit %d" % (name, len(found), "" if len(found) == 1 else "s",
                                                                        time.time() - started, run.returncode))
                for line in run.stdout.splitlines()[:60]:
                    print("    " + line[:200])
                if run.returncode != 0:
                    failed.append(name)
                    print(run.stderr[-4000:], file=sys.stderr)
            if failed:
                print("doc-examples: the examples of %s failed (above)" % ", ".join(failed), file=sys.stderr)
                return 1
            return 0
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
