#!/usr/bin/env python3
"""Runs the examples of README.md and docs/*.md (make test).

Every fenced `sh` block is run or checked, by its info string:
- `sh run`: run as written. The blocks of one file run in order in one bash (`set -euo
  pipefail`), so a variable set in one is there in the next, and a failing command fails the
  file. They run in a new folder (the checkout's Fixtures linked into it), with `capture-cli` on
  the PATH, and a server already serving a new vault: $API is its address, $PK and $SK a
  merchant's publishable and secret keys.
- `sh run adapted`: a block written for a reader's machine (a server's port, a database on
  another host, files under /etc), run here alone in a new folder after the changes in ADAPTED
  (each says why). A command that waits (`serve`, `webhooks listen`) is started, must answer as
  the docs say (serve: /livez, over TLS when given a certificate; listen: 400 to an unsigned
  event) and is stopped; it must then exit cleanly.
- `sh`: shown only (hours of training, a benchmark, a prompt for a person, files a reader has).
Every block, of any kind, is also checked against what it names: each `capture-cli` command and
its options (its --help), each `make` target (the Makefile), each script and its options.
A file whose example fails, a command or option that does not exist, or a README with no example
that runs, fails the test.
"""

import argparse
import functools
import glob
import json
import os
import re
import shlex
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from test_support import Serve, free_port, new_database

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FENCE = re.compile(r"^```(sh[^\n]*)\n(.*?)^```$", re.S | re.M)
KINDS = ("sh", "sh run", "sh run adapted")

# The reader's build folder: the capture-cli under test is on the PATH.
BUILT_CLI = (r"\.build/(debug|release)/capture-cli", "capture-cli")

# What an adapted block's text becomes here, and why: (pattern, replacement), in order.
ADAPTED = [
    BUILT_CLI,
    # Keys and secrets a reader copies from an earlier answer.
    (r"\bpk_…", "$PK"), (r"\bsk_…", "$SK"), (r"\bwhsec_…", "whsec_docs0example0secret"),
    # The reader's address on their network: this machine's loopback.
    (r"192\.168\.1\.20", "127.0.0.1"),
    # Setting up the database machine: the test's own PostgreSQL cluster stands in for it.
    (r"(?m)^(apt-get|runuser) .*$", ": database machine set up by make test"),
    (r"'choose-one'", '"$DOCS_DB_PASSWORD"'),
    (r"'postgres://capture@db\.internal/capture\?sslmode=verify-full'", '"$DOCS_DB"'),
    # Files under /etc: the block's own folder.
    (r"/etc/capture/", "etc/"),
]

# Commands that wait until stopped: started by `start()`, checked and stopped.
WAITING = (("serve",), ("webhooks", "listen"))


def blocks(path: str, kind: str = "sh run") -> list:
    with open(path, encoding="utf-8") as page:
        return [body for info, body in FENCE.findall(page.read()) if info == kind]


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
            failed = check_names(pages, cli)
            api = server.url
            environment = dict(os.environ, API=api, PK=keys["publishable_key"], SK=keys["secret_key"],
                               PATH=os.path.dirname(cli) + os.pathsep + os.environ.get("PATH", ""))
            failed += run_adapted(pages, cli, folder, keys)
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


def commands(block: str) -> list:
    """The commands of a block: each a list of words, lines joined at a trailing backslash,
    comments left out, split at ;, &, &&, | and redirections."""
    found = []
    for line in block.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            words = list(lexer)
        except ValueError:
            continue
        command: list = []
        for word in words + [";"]:
            if word and set(word) <= set(";&|<>()"):
                if command:
                    found.append(command)
                command = []
                # A redirection's target is not a command.
                if word in (">", ">>", "<"):
                    command = [None]
            elif command == [None]:
                command = []
            else:
                command.append(word)
    return [words for words in found if words and words[0] is not None]


@functools.cache
def usage(command: tuple) -> str:
    """What `command --help` prints, asked once per command; "" when it fails."""
    run = subprocess.run(list(command) + ["--help"], capture_output=True, text=True, timeout=60)
    return run.stdout if run.returncode == 0 else ""


def subcommands(help: str) -> set:
    names, inside = set(), False
    for line in help.splitlines():
        if line.startswith("SUBCOMMANDS:"):
            inside = True
        elif inside and re.match(r"^  [a-z]", line):
            names.add(line.split()[0])
        elif inside and line and not line.startswith(" "):
            inside = False
    return names


def options_missing(words: list, help: str) -> list:
    """The --options of `words` that `help` does not name."""
    named = set(re.findall(r"(--[a-z][a-z0-9-]*)", help))
    return [word.split("=")[0] for word in words if word.startswith("--") and word.split("=")[0] not in named]


def cli_problem(words: list, cli: str) -> str | None:
    """What is wrong with a `capture-cli` command line, if anything: its command (subcommands
    as far as each `--help` lists them, ending on one that takes no further subcommand), then
    its options (the last `--help`)."""
    path: list = []
    for word in words[1:]:
        if word.startswith("-") or word not in subcommands(usage((cli, *path))):
            break
        path.append(word)
    text = usage((cli, *path))
    if not path or not text or (subcommands(text) and "(default)" not in text):
        return "`%s`: no such capture-cli command" % " ".join(words[:3])
    missing = options_missing(words, text)
    return "`capture-cli %s` has no option %s" % (" ".join(path), ", ".join(missing)) if missing else None


def check_names(pages: list, cli: str) -> list:
    """Checks every block's commands against what exists: capture-cli's commands and options,
    the Makefile's targets, scripts and their options. The pages whose blocks name one that
    does not exist."""
    with open(os.path.join(ROOT, "Makefile")) as makefile:
        targets = set(re.findall(r"^([A-Za-z][A-Za-z0-9_-]*):", makefile.read(), re.M))
    failed, checked = [], 0
    for page in pages:
        name = os.path.relpath(page, ROOT)
        with open(page, encoding="utf-8") as text:
            fences = FENCE.findall(text.read())
        problems = ["a block marked %r (not one of %s)" % (info, ", ".join(KINDS)) for info, _ in fences if info not in KINDS]
        for _, body in fences:
            for words in commands(re.sub(*BUILT_CLI, body)):
                if os.path.basename(words[0]) == "capture-cli":
                    problem = cli_problem(words, cli)
                    if problem:
                        problems.append(problem)
                elif words[0] == "make":
                    problems += ["`make %s`: no such target in the Makefile" % word for word in words[1:]
                                 if not word.startswith("-") and "=" not in word and word not in targets]
                elif words[0] in ("python3", "bash") and len(words) > 1 and words[1].startswith("scripts/"):
                    script = os.path.join(ROOT, words[1])
                    if not os.path.isfile(script):
                        problems.append("`%s`: no such script" % words[1])
                    elif words[0] == "python3":
                        missing = options_missing(words[2:], usage((sys.executable, script)))
                        if missing:
                            problems.append("`%s` has no option %s" % (words[1], ", ".join(missing)))
                else:
                    continue
                checked += 1
        for problem in problems:
            print("doc-examples: %s: %s" % (name, problem), file=sys.stderr)
        if problems:
            failed.append(name)
    print("doc-examples: %d commands of the docs' blocks checked against what exists (capture-cli, make, scripts)%s" % (
        checked, "" if not failed else "; wrong in " + ", ".join(failed)))
    return failed


def run_adapted(pages: list, cli: str, folder: str, keys: dict) -> list:
    """Runs each `sh run adapted` block alone, changed as ADAPTED says, in a new folder, with
    the commands that wait started, checked and stopped (`start`). The pages whose block failed."""
    failed = []
    postgres = os.environ.get("CAPTURE_TEST_POSTGRES", "")
    for page in pages:
        name = os.path.relpath(page, ROOT)
        for index, body in enumerate(blocks(page, "sh run adapted")):
            for pattern, replacement in ADAPTED:
                body = re.sub(pattern, replacement, body)
            here = os.path.join(folder, "adapted-%s-%d" % (re.sub(r"\W", "-", name), index))
            os.makedirs(os.path.join(here, "etc"))
            os.symlink(os.path.join(ROOT, "Fixtures"), os.path.join(here, "Fixtures"))
            environment = dict(os.environ, PK=keys["publishable_key"], SK=keys["secret_key"], DOCS_CLI=cli,
                               PATH=os.path.dirname(cli) + os.pathsep + os.environ.get("PATH", ""))
            if "$DOCS_DB" in body:
                if not postgres:
                    print("doc-examples: %s: a PostgreSQL block needs CAPTURE_TEST_POSTGRES (make test starts a cluster)" % name,
                          file=sys.stderr)
                    failed.append(name)
                    continue
                # A new database on the test cluster, by the block's own URL form: its password in
                # the block's file, the cluster's certificate the authority verify-full checks.
                url = urllib.parse.urlsplit(new_database(postgres, "docs"))
                certificate = os.path.join(os.environ.get("CAPTURE_TEST_POSTGRES_DIR", ""), "server.crt")
                environment["DOCS_DB_PASSWORD"] = url.password or ""
                environment["DOCS_DB"] = "postgres://%s@%s:%d%s?sslmode=verify-full&sslrootcert=%s" % (
                    url.username, url.hostname, url.port, url.path, certificate)
            wrapper = ('capture-cli() { case "$1 ${2:-}" in serve\ *|"webhooks listen") python3 %s --start "$@";; '
                       '*) command capture-cli "$@";; esac; }\n' % shlex.quote(os.path.abspath(__file__)))
            # A command the block sends to the background (`&`) must succeed too: `wait` alone
            # would answer 0 whatever it did.
            script = "set -euo pipefail\n" + wrapper + body + '\nfor job in $(jobs -p); do wait "$job"; done\n'
            started = time.time()
            run = subprocess.run(["bash", "-c", script], cwd=here, env=environment, capture_output=True, text=True, timeout=300)
            print("doc-examples: %s: adapted block %d, %.1f s, exit %d" % (name, index + 1, time.time() - started, run.returncode))
            for line in (run.stdout + run.stderr).splitlines()[:30]:
                if "sk_" not in line:
                    print("    " + line[:200])
            if run.returncode != 0:
                failed.append(name)
    return failed


def start(arguments: list) -> int:
    """`capture-cli ARGUMENTS` for a command that waits, on a free port: answering as the docs
    say within 60 s, then stopped with SIGTERM, after which it must exit cleanly."""
    cli = os.environ["DOCS_CLI"]
    arguments = list(arguments)
    port = free_port()
    if "--port" in arguments:
        arguments[arguments.index("--port") + 1] = str(port)
    else:
        arguments += ["--port", str(port)]
    serving = arguments[0] == "serve"
    tls = "--tls-cert" in arguments
    address = "%s://127.0.0.1:%d" % ("https" if tls else "http", port)
    # Its output to a file: a pipe nobody reads while it is probed could fill and stop it.
    log = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen([cli] + arguments, stdout=log, stderr=subprocess.STDOUT, text=True)
    context = ssl.create_default_context()
    if tls:
        # The block's own certificate, made for this address.
        context.load_verify_locations(arguments[arguments.index("--tls-cert") + 1])
    answered, deadline = None, time.time() + 60
    while time.time() < deadline and process.poll() is None and answered is None:
        try:
            if serving:
                with urllib.request.urlopen(address + "/livez", timeout=2, context=context) as answer:
                    answered = answer.status
            else:
                request = urllib.request.Request(address + "/", data=b"{}", headers={"Content-Type": "application/json"})
                urllib.request.urlopen(request, timeout=2)
                answered = 200
        except urllib.error.HTTPError as error:
            answered = error.code
        except OSError:
            time.sleep(0.05)
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    log.seek(0)
    output = log.read()
    expected = 200 if serving else 400
    shown = "capture-cli " + " ".join(arguments[:2])
    clean = process.returncode in (0, -15)
    print("%s: answered %s (expected %d), exit %s after SIGTERM" % (shown, answered, expected, process.returncode))
    if answered != expected or not clean:
        print(output[-3000:], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--start":
        sys.exit(start(sys.argv[2:]))
    sys.exit(main())
