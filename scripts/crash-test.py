#!/usr/bin/env python3
"""Kills the server (SIGKILL) while it charges, restarts it, retries every charge left unanswered, and checks
the vault: every retry answered, no token used without exactly one transaction, no card charged twice, no
transaction left pending, and SQLite's integrity_check ok. `make test` runs it on both stores.

    scripts/crash-test.py [--cli .build/debug/capture-cli] [--rounds 5] [--charges 12]
    scripts/crash-test.py --postgres postgres://… [--instances 2]

With --postgres the vault is a new database on that server, and --instances servers share it: charges go to
them in turn, each round kills one of them, and the retries of its unanswered charges go to the others while
it restarts (a load balancer's behaviour).

The sandbox is given a latency (serve --sandbox-latency) so that the kill lands while charges are at the
processor, and a short idempotency lease (serve --idempotency-lease) so that retries are answered quickly.
Only test card numbers are used. Exit status 0 when every check holds, 1 otherwise.
"""
import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from test_support import free_port, new_database

CARDS = ["4242424242424242", "5555555555554444", "4000000000000002", "378282246310005", "4000000000000119"]
LEASE_SECONDS = 2


class Server:
    def __init__(self, cli: str, database: str, log: str, options: list[str]):
        self.cli, self.database, self.log, self.options = cli, database, log, options
        self.port = free_port()
        self.process = None

    def start(self) -> None:
        self.port = free_port()
        with open(self.log, "a") as log:
            self.process = subprocess.Popen(
                [self.cli, "serve", "--port", str(self.port), "--database", self.database,
                 "--idempotency-lease", str(LEASE_SECONDS), "--sandbox-latency", "300",
                 "--token-rate-limit", "0"] + self.options,
                stdout=log, stderr=log)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/readyz", timeout=1) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("crash-test: the server did not start; see " + self.log)

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class Database:
    """The vault read directly: SQLite through sqlite3, PostgreSQL through psql."""

    def __init__(self, sqlite_path: str | None, postgres_url: str | None):
        self.sqlite = sqlite3.connect(sqlite_path) if sqlite_path else None
        self.url = postgres_url

    def rows(self, sql: str, parameters: tuple = ()) -> list[tuple]:
        if self.sqlite:
            return self.sqlite.execute(sql, parameters).fetchall()
        for value in parameters:  # the test's own keys: letters, digits and dashes only
            assert all(c.isalnum() or c == "-" for c in value)
            sql = sql.replace("?", f"'{value}'", 1)
        output = subprocess.run(["psql", self.url, "-XAtq", "-F", "\t", "-c", sql],
                                check=True, capture_output=True, text=True).stdout
        return [tuple(int(f) if f.isdigit() else (None if f == "" else f) for f in line.split("\t"))
                for line in output.splitlines()]


def post(server: Server, path: str, body: dict, key: str, idempotency_key: str | None = None):
    """(status, json) or None when the server never answered (killed)."""
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    if idempotency_key:
        headers["Idempotency-Key"] = idempotency_key
    request = urllib.request.Request(server.url + path, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")
    except (OSError, json.JSONDecodeError):
        return None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", default=".build/debug/capture-cli")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--charges", type=int, default=12)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--postgres", help="a PostgreSQL server's URL: the vault is a new database there")
    parser.add_argument("--instances", type=int, default=1, help="servers sharing the vault (PostgreSQL only)")
    args = parser.parse_args()
    if args.instances > 1 and not args.postgres:
        parser.error("several instances share a PostgreSQL vault: give --postgres")
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="crash-test-")
    journal_path = os.path.join(work, "sandbox.journal")
    options = ["--sandbox-journal", journal_path]
    if args.postgres:
        database = new_database(args.postgres, "crash_")
        options += ["--master-key-file", os.path.join(work, "master.key")]
        store = "PostgreSQL"
    else:
        database = os.path.join(work, "vault.sqlite")
        store = "SQLite"
    keys = json.loads(subprocess.run([args.cli, "keys", "create", "--merchant", "crash-test", "--database", database, "--json"]
                                     + options[2:], check=True, capture_output=True, text=True).stdout)
    pk, sk = keys["publishable_key"], keys["secret_key"]
    servers = [Server(args.cli, database, os.path.join(work, f"serve-{i}.log"), options) for i in range(args.instances)]
    turn = [0]

    def next_server(avoid: Server | None = None) -> Server:
        """The servers in turn, as a load balancer sends requests, passing over one that is down."""
        for _ in range(len(servers)):
            turn[0] += 1
            server = servers[turn[0] % len(servers)]
            if server is not avoid and server.process and server.process.poll() is None:
                return server
        return servers[0]

    charges: dict[str, dict] = {}      # Idempotency-Key -> the charge's body
    answers: dict[str, dict] = {}      # Idempotency-Key -> the transaction answered
    failures: list[str] = []
    interrupted = 0

    def charge(key: str, server: Server | None = None) -> None:
        result = post(server or next_server(), "/v1/transactions", charges[key], sk, idempotency_key=key)
        if result is None:
            return
        status, body = result
        if status == 201:
            answers[key] = body
        elif status == 409 and body.get("error", {}).get("code") == "idempotency_key_in_use":
            return  # still held by the killed request: retried after the restart
        else:
            failures.append(f"charge {key}: {status} {body.get('error', {}).get('code')}")

    def retry_unanswered() -> None:
        deadline = time.time() + 30
        for key in [k for k in charges if k not in answers]:
            while key not in answers and time.time() < deadline:
                before = len(failures)
                charge(key)
                if len(failures) > before:
                    break
                if key not in answers:
                    time.sleep(0.2)
            if key not in answers and not any(f.startswith(f"charge {key}:") for f in failures):
                failures.append(f"charge {key}: no final answer within 30 s of the restart (stuck key)")

    for server in servers:
        server.start()
    for round_number in range(args.rounds):
        for server in servers:
            if server.process.poll() is not None:
                server.start()
        retry_unanswered()
        tokens = []
        for i in range(args.charges):
            number = rng.choice(CARDS)
            result = post(next_server(), "/v1/tokens", {"number": number, "exp_month": 12, "exp_year": 2030,
                                                 "cvc": "1234" if number.startswith("37") else "123"}, pk)
            if result is None or result[0] != 201:
                failures.append(f"token: {result}")
                continue
            tokens.append(result[1]["id"])
        threads = []
        for i, token in enumerate(tokens):
            key = f"round{round_number}-charge{i}"
            charges[key] = {"token": token, "amount": 1000 + i, "currency": "EUR"}
            thread = threading.Thread(target=charge, args=(key, servers[i % len(servers)]))
            thread.start()
            threads.append(thread)
        time.sleep(rng.uniform(0.05, 0.45))
        # One server dies; with several, the others go on and take the retries.
        rng.choice(servers).kill()
        for thread in threads:
            thread.join()
        interrupted += sum(1 for key in charges if key.startswith(f"round{round_number}-") and key not in answers)

    for server in servers:
        if server.process.poll() is not None:
            server.start()
    retry_unanswered()
    for server in servers:
        server.stop()

    # The vault, read directly.
    db = Database(None if args.postgres else database, database if args.postgres else None)
    integrity = db.rows("PRAGMA integrity_check")[0][0] if not args.postgres else "ok"
    if integrity != "ok":
        failures.append(f"integrity_check: {integrity}")
    pending = db.rows("""SELECT count(*) FROM "transaction" WHERE status = 'pending'""")[0][0]
    if pending:
        failures.append(f"{pending} transactions left pending")
    orphans = db.rows("""SELECT count(*) FROM token t WHERE used_at IS NOT NULL
                            AND (SELECT count(*) FROM "transaction" x WHERE x.token_id = t.id) != 1""")[0][0]
    if orphans:
        failures.append(f"{orphans} used tokens without exactly one transaction")
    per_key = dict(db.rows("""SELECT idempotency_key, count(*) FROM "transaction" GROUP BY idempotency_key"""))
    for key, answer in answers.items():
        row = db.rows("""SELECT id, status FROM "transaction" WHERE idempotency_key = ?""", (key,))
        if per_key.get(key) != 1 or row[0][0] != answer["id"] or row[0][1] != answer["status"]:
            failures.append(f"charge {key}: answered {answer['id']} {answer['status']}, vault has {row}")
    stuck = db.rows("SELECT count(*) FROM idempotency_key WHERE status IS NULL")[0][0]
    if stuck:
        failures.append(f"{stuck} idempotency keys still in progress")
    # The processor's side: each authorization once, and each one on record in the vault.
    journal = [line.split("\t") for line in open(journal_path).read().splitlines() if line]
    references = [fields[0] for fields in journal]
    if len(references) != len(set(references)):
        failures.append("an authorization reference was sent to the processor twice")
    recorded = dict(db.rows("""SELECT id, processor_reference FROM "transaction" WHERE status = 'succeeded'"""))
    for reference, outcome, value in journal:
        if outcome == "succeeded" and recorded.get(reference) != value:
            failures.append(f"processor charged {reference} but the vault has {recorded.get(reference)}")
    recovered = db.rows("""SELECT count(*) FROM "transaction" WHERE idempotency_key IS NOT NULL""")[0][0]

    print(f"crash-test ({store}, {args.instances} server{'s' if args.instances > 1 else ''}): "
          f"{args.rounds} rounds of kill -9 under {args.charges} concurrent idempotent charges: "
          f"{len(charges)} charges, {interrupted} interrupted and retried, {len(answers)} answered, "
          f"{len(journal)} authorizations at the processor, {recovered} transactions; "
          f"{stuck} stuck keys, {orphans} orphaned tokens, {pending} pending, integrity {integrity}")
    for failure in failures:
        print("crash-test: FAIL " + failure, file=sys.stderr)
    if failures:
        print("crash-test: the servers' logs are in " + work, file=sys.stderr)
        return 1
    subprocess.run(["rm", "-rf", work])
    return 0


if __name__ == "__main__":
    sys.exit(main())
