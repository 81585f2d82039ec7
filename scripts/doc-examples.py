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

from test_support import Serve

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
        log = os.path.join(folder, "serve.log")
        try:
            server = Serve(cli, database, ["--webhook-allow-private", "--sandbox-journal", os.path.join(folder, "sandbox.journal")],
                           log, "doc-examples: the server", wait=60)
        except SystemExit:
            # The log goes with the temporary folder: shown here.
            print(open(log).read(), file=sys.stderr)
            raise
        try:
            api = server.url
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
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
