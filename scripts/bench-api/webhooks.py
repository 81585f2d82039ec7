#!/usr/bin/env python3
"""Webhook delivery under a backlog: how fast `serve` drains a queue of due deliveries to one
endpoint that answers in a few milliseconds, with one server and with two on one PostgreSQL vault.

    scripts/bench-api/webhooks.py --cli .build/release/capture-cli --postgres postgres://… \
        [--backlog 20000] [--answer-ms 3] [--servers 1 2] [--sqlite]

For each configuration: a new vault, one merchant with one endpoint (this script's own, an asyncio
HTTP/1.1 server answering 200 after --answer-ms), one real charge whose event is delivered, then
the servers stopped and --backlog copies of that delivery (each its own event and delivery id,
due now) written straight into the store; then the servers are started again and the endpoint
counts what arrives. Printed per configuration: deliveries a second (from the first delivery to
the last), the drain time (from the servers' start to the last delivery, start-up included),
deliveries received more than once, and what the store still holds pending.

Only test card numbers are used. Exit status 0 when every backlog was delivered, 1 otherwise.
"""
import argparse
import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from test_support import Serve, free_port, new_database  # noqa: E402

VISA = {"number": "4242424242424242", "exp_month": 12, "exp_year": 2031, "cvc": "123"}


class Endpoint:
    """A webhook endpoint on its own event loop: reads each request, waits `answer_ms`, answers
    200 on a kept-alive connection, and notes when each event id arrived."""

    def __init__(self, answer_ms: float):
        self.answer = answer_ms / 1000
        self.arrivals: list[tuple[float, str]] = []
        self.port = free_port()
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        ready.wait()

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", self.port, backlog=256))
        ready.set()
        self.loop.run_until_complete(server.serve_forever())

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length)
                self.arrivals.append((time.monotonic(), json.loads(body)["id"]))
                await asyncio.sleep(self.answer)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


class Server(Serve):
    def __init__(self, cli: str, database: str, options: list[str], log: str):
        super().__init__(cli, database, options, log, "webhooks bench: a server", ready="/livez", wait=60)

    def call(self, method: str, path: str, key: str, body: dict | None = None) -> tuple[int, dict]:
        request = urllib.request.Request(self.url + path, data=json.dumps(body).encode() if body is not None else None,
                                         headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
                                         method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")


def wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


class Store:
    """The vault's tables, written to directly: PostgreSQL through psql, SQLite through sqlite3."""

    def __init__(self, database: str):
        self.database = database
        self.sqlite = not database.startswith("postgres")

    def sql(self, statement: str) -> list[tuple]:
        if self.sqlite:
            with sqlite3.connect(self.database, timeout=30) as connection:
                return connection.execute(statement).fetchall()
        out = subprocess.run(["psql", self.database, "-XAtq", "-F", "\t", "-c", statement], check=True,
                             capture_output=True, text=True).stdout
        return [tuple(line.split("\t")) for line in out.splitlines()]

    def copy_delivery(self, count: int) -> None:
        """`count` copies of the one delivery in the store, each with an event of its own (its id in its body), due now."""
        if self.sqlite:
            with sqlite3.connect(self.database, timeout=30) as connection:
                (event_id, merchant, kind, body, created), = connection.execute(
                    "SELECT id, merchant_id, type, body, created_at FROM webhook_event").fetchall()
                (merchant_d, endpoint, event_type), = connection.execute(
                    "SELECT merchant_id, endpoint_id, event_type FROM webhook_delivery").fetchall()
                now = connection.execute("SELECT next_attempt_at FROM webhook_delivery").fetchone()[0] or created
                connection.executemany(
                    "INSERT INTO webhook_event (id, merchant_id, type, body, created_at) VALUES (?, ?, ?, ?, ?)",
                    [(f"evt_bench{i:06d}", merchant, kind, bytes(body).replace(event_id.encode(), f"evt_bench{i:06d}".encode()),
                      created) for i in range(count)])
                connection.executemany(
                    "INSERT INTO webhook_delivery (id, merchant_id, endpoint_id, event_id, event_type, status, attempts,"
                    " next_attempt_at, lease_until, created_at) VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, NULL, ?)",
                    [(f"whd_bench{i:06d}", merchant_d, endpoint, f"evt_bench{i:06d}", event_type, created, created)
                     for i in range(count)])
            return
        self.sql(f"""
            INSERT INTO webhook_event (id, merchant_id, type, body, created_at)
              SELECT 'evt_bench' || lpad(g::text, 6, '0'), merchant_id, type,
                convert_to(replace(convert_from(body, 'UTF8'), id, 'evt_bench' || lpad(g::text, 6, '0')), 'UTF8'), now()
              FROM webhook_event, generate_series(1, {count}) AS g;
            INSERT INTO webhook_delivery (id, merchant_id, endpoint_id, event_id, event_type, status, attempts,
                next_attempt_at, lease_until, created_at)
              SELECT 'whd_bench' || lpad(g::text, 6, '0'), merchant_id, endpoint_id, 'evt_bench' || lpad(g::text, 6, '0'),
                event_type, 'pending', 0, now(), NULL, now()
              FROM webhook_delivery, generate_series(1, {count}) AS g;
            ANALYZE webhook_delivery; ANALYZE webhook_event;""")

    def pending(self) -> int:
        return int(self.sql("SELECT count(*) FROM webhook_delivery WHERE status = 'pending'")[0][0])


def run(label: str, cli: str, database: str, servers: int, backlog: int, answer_ms: float, work: str) -> bool:
    store = Store(database)
    key_file = os.path.join(work, "master.key")
    common = ["--master-key-file", key_file] if not store.sqlite else []
    keys = json.loads(subprocess.run([cli, "keys", "create", "--merchant", "bench", "--database", database, "--json"] + common,
                                     check=True, capture_output=True, text=True).stdout)
    sk = keys["secret_key"]
    options = common + ["--sandbox-journal", os.path.join(work, f"{label}.journal"), "--webhook-allow-private",
                        "--token-rate-limit", "0"]
    log = os.path.join(work, f"{label}.log")
    endpoint = Endpoint(answer_ms)
    first = Server(cli, database, options, log)
    try:
        status, _ = first.call("POST", "/v1/webhook_endpoints", sk,
                               {"url": f"http://127.0.0.1:{endpoint.port}/hooks", "events": ["transaction.succeeded"]})
        assert status == 201, f"endpoint not made ({status})"
        status, token = first.call("POST", "/v1/tokens", sk, VISA)
        assert status == 201, f"token not made ({status})"
        status, _ = first.call("POST", "/v1/transactions", sk, {"token": token["id"], "amount": 1000, "currency": "EUR"})
        assert status == 201, f"charge not made ({status})"
        assert wait_until(lambda: len(endpoint.arrivals) == 1 and store.pending() == 0, 30), "the first event not delivered"
    finally:
        first.stop()
    store.copy_delivery(backlog)
    endpoint.arrivals.clear()
    started = time.monotonic()
    running = [Server(cli, database, options, log) for _ in range(servers)]
    try:
        wait_until(lambda: len({e for _, e in endpoint.arrivals}) >= backlog, 300)
        time.sleep(1)  # a second delivery of one already received would show now
    finally:
        for server in running:
            server.stop()
    arrivals = list(endpoint.arrivals)
    distinct = len({e for _, e in arrivals})
    pending = store.pending()
    if len(arrivals) > 1:
        rate = (len(arrivals) - 1) / (arrivals[-1][0] - arrivals[0][0])
        drain = arrivals[-1][0] - started
    else:
        rate, drain = 0.0, float("nan")
    print(f"{label:14} {servers:7d} {backlog:8d} {distinct:9d} {rate:9.0f} {drain:8.1f} {len(arrivals) - distinct:6d} {pending:7d}")
    sys.stdout.flush()
    return distinct == backlog and pending == 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", default=".build/release/capture-cli")
    parser.add_argument("--postgres", help="a PostgreSQL server's URL: each run's vault is a new database there")
    parser.add_argument("--backlog", type=int, default=20000)
    parser.add_argument("--answer-ms", type=float, default=3)
    parser.add_argument("--servers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--sqlite", action="store_true", help="also one server on a SQLite vault")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="bench-webhooks-")
    print(f"Webhook backlog drained to one endpoint answering in {args.answer_ms:g} ms (deliveries/s from the first to the "
          f"last delivery; drain s from the servers' start)")
    print(f"{'store':14} {'servers':>7} {'backlog':>8} {'delivered':>9} {'per s':>9} {'drain s':>8} {'twice':>6} {'pending':>7}")
    ok = True
    if args.sqlite:
        ok &= run("SQLite", args.cli, os.path.join(work, "vault.sqlite"), 1, args.backlog, args.answer_ms, work)
    if args.postgres:
        for servers in args.servers:
            ok &= run("PostgreSQL", args.cli, new_database(args.postgres, "bench_webhooks_"), servers, args.backlog,
                      args.answer_ms, work)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
