#!/usr/bin/env python3
"""Two `capture-cli serve` processes on one PostgreSQL vault, as behind a load balancer: what is once stays
once, whichever server a request reaches. `make test` runs it on the test cluster.

    scripts/instances-test.py --postgres postgres://… [--cluster-dir DIR] [--cli .build/debug/capture-cli]

Checks, each with its counts printed:
  1. 40 tokens, 12 spenders each, split across both servers: exactly 40 spends, the rest 409.
  2. An Idempotency-Key replayed on the other server gives the first answer; 8 requests racing on one key
     across both make one transaction.
  3. Webhooks: 30 charges' events, each delivered once, though both servers' dispatchers lease from one queue.
  4. A key revoked through `keys revoke` is refused by both servers within 2 s (their caches' bound).
  5. The card-testing limit (--token-rate-limit) is per server: one server's refusals leave the other's
     budget whole.
  6. With --cluster-dir, PostgreSQL is restarted under load (token creations, each followed by a charge of
     the token), once stopped by its administrator and once as a crash: requests during the outage are
     answered 201 or 503 storage_unavailable with Retry-After within
     the servers' 5 s wait for a connection (none hangs, none crashes a server), the servers reconnect by
     themselves, every token answered 201 is in the vault, every charge answered 201 is settled there,
     and nothing is spent twice.
Only test card numbers are used. Exit status 0 when every check holds, 1 otherwise.
"""
import argparse
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from test_support import free_port, new_database

VISA = {"number": "4242424242424242", "exp_month": 12, "exp_year": 2031, "cvc": "123"}


class Server:
    def __init__(self, cli: str, database: str, work: str, name: str, options: list[str]):
        self.port = free_port()
        self.log = os.path.join(work, f"serve-{name}.log")
        with open(self.log, "a") as log:
            self.process = subprocess.Popen(
                [cli, "serve", "--port", str(self.port), "--database", database] + options, stdout=log, stderr=log)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"instances-test: server {name} exited; see {self.log}")
            try:
                with urllib.request.urlopen(f"{self.url}/readyz", timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        raise SystemExit(f"instances-test: server {name} did not start; see {self.log}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def call(server: Server, method: str, path: str, key: str | None, body: dict | None = None,
         idempotency_key: str | None = None, timeout: float = 30) -> tuple[int, dict, dict]:
    """(status, json, headers); status 0 when no answer came."""
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    if idempotency_key:
        headers["Idempotency-Key"] = idempotency_key
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(server.url + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"{}"), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}"), dict(error.headers)
    except (OSError, json.JSONDecodeError):
        return 0, {}, {}


def psql(url: str, sql: str) -> list[list[str]]:
    output = subprocess.run(["psql", url, "-XAtq", "-F", "\t", "-c", sql], check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in output.splitlines()]


def in_threads(jobs: list) -> list:
    results = [None] * len(jobs)

    def run(index: int) -> None:
        results[index] = jobs[index]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


class Hooks(http.server.BaseHTTPRequestHandler):
    """A webhook endpoint that takes every delivery and counts it by event id."""
    received: dict[str, int] = {}
    lock = threading.Lock()

    def do_POST(self) -> None:
        event = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        with Hooks.lock:
            Hooks.received[event["id"]] = Hooks.received.get(event["id"], 0) + 1
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", default=".build/debug/capture-cli")
    parser.add_argument("--postgres", required=True, help="a PostgreSQL server's URL: the vault is a new database there")
    parser.add_argument("--cluster-dir", help="the cluster's folder (scripts/postgres-cluster.sh), to restart it under load")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="instances-test-")
    database = new_database(args.postgres, "instances_")
    # The tests' cluster commits without waiting for its log (--fast); this vault waits, as a real
    # one does, so that PostgreSQL's crash below loses nothing it answered.
    psql(args.postgres, f"ALTER DATABASE {urllib.parse.urlsplit(database).path[1:]} SET synchronous_commit = on")
    key_file = os.path.join(work, "master.key")
    common = ["--master-key-file", key_file]
    failures: list[str] = []

    def check(condition: bool, message: str) -> None:
        print(("instances-test: " if condition else "instances-test: FAIL ") + message,
              file=sys.stdout if condition else sys.stderr)
        if not condition:
            failures.append(message)

    keys = json.loads(subprocess.run([args.cli, "keys", "create", "--merchant", "shop", "--database", database, "--json"] + common,
                                     check=True, capture_output=True, text=True).stdout)
    pk, sk = keys["publishable_key"], keys["secret_key"]
    options = common + ["--sandbox-journal", os.path.join(work, "sandbox.journal"), "--webhook-allow-private",
                        "--token-rate-limit", "60"]
    a = Server(args.cli, database, work, "a", options)
    b = Server(args.cli, database, work, "b", options)
    servers = [a, b]
    try:
        # 1. 40 tokens, 12 spenders each, across both servers.
        tokens = in_threads([lambda i=i: call(servers[i % 2], "POST", "/v1/tokens", sk, VISA)[1]["id"] for i in range(40)])
        spends = in_threads([
            (lambda t=t, j=j: call(servers[j % 2], "POST", "/v1/transactions", sk,
                                   {"token": t, "amount": 700, "currency": "EUR"})[0])
            for t in tokens for j in range(12)])
        spent = spends.count(201)
        check(spent == 40 and spends.count(409) == 440,
              f"40 tokens x 12 spenders on two servers: {spent} spends, {spends.count(409)} refused 409, "
              f"{len(spends) - spent - spends.count(409)} other")
        per_token = psql(database, """SELECT count(*) FROM "transaction" GROUP BY token_id HAVING count(*) != 1""")
        check(not per_token, f"every token has exactly one transaction in the vault ({len(per_token)} have not)")

        # 2. Idempotency-Key across servers.
        token = call(a, "POST", "/v1/tokens", sk, VISA)[1]["id"]
        body = {"token": token, "amount": 900, "currency": "EUR"}
        first = call(a, "POST", "/v1/transactions", sk, body, idempotency_key="replay-1")
        again = call(b, "POST", "/v1/transactions", sk, body, idempotency_key="replay-1")
        check(first[0] == 201 and again[0] == 201 and first[1] == again[1],
              f"a key replayed on the other server gives the first answer ({first[0]}, {again[0]}, same body: {first[1] == again[1]})")
        token = call(a, "POST", "/v1/tokens", sk, VISA)[1]["id"]
        body = {"token": token, "amount": 901, "currency": "EUR"}
        racing = in_threads([lambda i=i: call(servers[i % 2], "POST", "/v1/transactions", sk, body, idempotency_key="race-1")
                             for i in range(8)])
        made = psql(database, """SELECT count(*) FROM "transaction" WHERE idempotency_key = 'race-1'""")[0][0]
        ids = {r[1].get("id") for r in racing if r[0] == 201}
        check(made == "1" and len(ids) == 1 and all(r[0] in (201, 409) for r in racing),
              f"8 requests racing on one key across both servers: {made} transaction, answers "
              f"{sorted(r[0] for r in racing)}, {len(ids)} distinct transaction id")

        # 3. Webhooks: each event once.
        hooks = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hooks)
        threading.Thread(target=hooks.serve_forever, daemon=True).start()
        status, _, _ = call(a, "POST", "/v1/webhook_endpoints", sk, {"url": f"http://127.0.0.1:{hooks.server_port}/hooks",
                                                                     "events": ["transaction.succeeded"]})
        check(status == 201, f"webhook endpoint made ({status})")
        charged = in_threads([
            (lambda i=i: call(servers[i % 2], "POST", "/v1/transactions", sk,
                              {"token": call(servers[i % 2], "POST", "/v1/tokens", sk, VISA)[1]["id"],
                               "amount": 1000 + i, "currency": "EUR"})[0])
            for i in range(30)])
        deadline = time.time() + 30
        while time.time() < deadline and len(Hooks.received) < 30:
            time.sleep(0.2)
        time.sleep(2)  # a second delivery of any of them would come within the dispatchers' next polls
        with Hooks.lock:
            counts = dict(Hooks.received)
        twice = sum(1 for n in counts.values() if n > 1)
        check(charged.count(201) == 30 and len(counts) == 30 and twice == 0,
              f"30 charges' events through both servers' dispatchers: {len(counts)} delivered, {twice} delivered twice")
        hooks.shutdown()

        # 4. Key revocation honoured by both servers within 2 s.
        started = time.time()
        spare = json.loads(subprocess.run([args.cli, "keys", "rotate", "--merchant", "shop", "--kind", "secret", "--grace", "0",
                                           "--database", database, "--json"] + common,
                                          capture_output=True, text=True).stdout or "{}")
        new_sk = spare.get("secret_key")
        refused_by = {}
        while time.time() - started < 5 and len(refused_by) < 2:
            for name, server in (("a", a), ("b", b)):
                if name not in refused_by and call(server, "GET", "/v1/transactions?limit=1", sk)[0] == 401:
                    refused_by[name] = time.time() - started
            time.sleep(0.05)
        slowest = max(refused_by.values()) if len(refused_by) == 2 else None
        check(new_sk is not None and slowest is not None and slowest <= 2.5,
              f"a rotated-out key is refused by both servers after {slowest if slowest is None else round(slowest, 2)} s (bound 2 s)")
        sk = new_sk or sk

        # 5. The card-testing limit, per server.
        burst_a = [call(a, "POST", "/v1/tokens", pk, VISA)[0] for _ in range(30)]
        burst_b = [call(b, "POST", "/v1/tokens", pk, VISA)[0] for _ in range(5)]
        check(429 in burst_a and burst_b.count(201) == 5,
              f"--token-rate-limit is per server: {burst_a.count(201)} then {burst_a.count(429)} refused on one, "
              f"{burst_b.count(201)} of 5 taken on the other")

        # 6. PostgreSQL restarted under load: stopped as an administrator does (its connections
        # told so), then as a crash (its processes killed, their connections cut without a
        # word: over TLS, no goodbye).
        for mode in ("fast", "crash") if args.cluster_dir else ():
            answered_tokens: list[str] = []
            outcomes: dict[int, int] = {}
            charges: dict[int, int] = {}
            answered_charges: list[str] = []
            # Charges answered 202: sent to the processor, their outcome not written (issue 65).
            pending_charges: list[str] = []
            slow: list[float] = []
            retry_after: set[str] = set()
            stop = threading.Event()
            lock = threading.Lock()

            def timed(server: Server, path: str, body: dict, outcomes: dict[int, int], answered: list[str]) -> dict | None:
                """One request of the load, counted; its answer's body when it was 201."""
                began = time.time()
                status, answer, headers = call(server, "POST", path, sk, body, timeout=20)
                took = time.time() - began
                with lock:
                    outcomes[status] = outcomes.get(status, 0) + 1
                    if took > 10:
                        slow.append(took)
                    if status == 201:
                        answered.append(answer["id"])
                    elif status == 202 and answer.get("status") == "pending":
                        pending_charges.append(answer["id"])
                    elif status == 503:
                        retry_after.add(headers.get("Retry-After", ""))
                return answer if status == 201 else None

            def load(index: int) -> None:
                server = servers[index % 2]
                while not stop.is_set():
                    token = timed(server, "/v1/tokens", VISA, outcomes, answered_tokens)
                    if token is None:
                        time.sleep(0.1)
                        continue
                    # And a charge of the token: the spend and the settlement are prepared
                    # statements, which must not wait forever on a connection that closed.
                    timed(server, "/v1/transactions", {"token": token["id"], "amount": 1999, "currency": "EUR"},
                          charges, answered_charges)

            workers = [threading.Thread(target=load, args=(i,)) for i in range(6)]
            for worker in workers:
                worker.start()
            time.sleep(1)
            here = os.path.dirname(os.path.abspath(__file__))
            subprocess.run(["bash", os.path.join(here, "postgres-cluster.sh"), "stop", args.cluster_dir, mode], check=True)
            began = time.time()
            down_health = call(a, "GET", "/healthz", None, timeout=20)
            waited = time.time() - began
            # Within its one-second bound (issue 65: it waited 5 s, then hung until the database was back).
            check(down_health[0] == 503 and down_health[1].get("database") == "unreachable" and waited < 3,
                  f"/healthz while PostgreSQL is down: {down_health[0]} {down_health[1]}, after {waited:.1f} s")
            asked = time.time()
            down_ready = call(a, "GET", "/readyz", None, timeout=20)
            check(down_ready[0] == 503 and time.time() - asked < 3, f"/readyz while PostgreSQL is down: {down_ready[0]}, after {time.time() - asked:.1f} s")
            check(call(a, "GET", "/livez", None, timeout=5)[0] == 200, "/livez while PostgreSQL is down: 200, the process answers")
            time.sleep(max(0.0, 7 - (time.time() - began)))
            subprocess.run(["bash", os.path.join(here, "postgres-cluster.sh"), "start", args.cluster_dir], check=True,
                           capture_output=True)
            time.sleep(8)
            stop.set()
            for worker in workers:
                worker.join()
            after = [call(s, "POST", "/v1/tokens", sk, VISA)[0] for s in servers]
            health = [call(s, "GET", "/healthz", None)[0] for s in servers]
            alive = all(s.process.poll() is None for s in servers)
            stored = set(row[0] for row in psql(database, "SELECT id FROM token"))
            lost = [t for t in answered_tokens if t not in stored]
            check(outcomes.get(503, 0) > 0 and set(outcomes) <= {201, 503} and retry_after <= {"2"} and not slow and alive,
                  f"PostgreSQL stopped ({mode}) for 7 s under load: token answers {dict(sorted(outcomes.items()))}, Retry-After "
                  f"{sorted(retry_after)}, {len(slow)} requests slower than 10 s, servers alive: {alive}")
            check(after == [201, 201] and health == [200, 200],
                  f"after the restart both servers reconnected by themselves (tokens {after}, healthz {health})")
            check(not lost, f"{len(answered_tokens)} tokens answered 201 during the run, {len(lost)} missing from the vault")
            settled = set(row[0] for row in psql(database, """SELECT id FROM "transaction" WHERE status <> 'pending'"""))
            unsettled = [c for c in answered_charges if c not in settled]
            recorded = set(row[0] for row in psql(database, 'SELECT id FROM "transaction"'))
            unrecorded = [c for c in pending_charges if c not in recorded]
            check(charges.get(201, 0) > 0 and set(charges) <= {201, 202, 503} and charges.get(202, 0) == len(pending_charges)
                  and not unsettled and not unrecorded,
                  f"charges during the restart: answers {dict(sorted(charges.items()))}; {len(unsettled)} of the "
                  f"{len(answered_charges)} answered 201 not settled in the vault; {len(pending_charges)} answered 202 pending, "
                  f"{len(unrecorded)} of them missing from the vault (the sweeper settles them)")
            double = psql(database, """SELECT count(*) FROM "transaction" GROUP BY token_id HAVING count(*) > 1""")
            check(not double, f"nothing spent twice ({len(double)} tokens with two transactions)")
    finally:
        for server in servers:
            if server.process.poll() is None:
                server.stop()
    # No card number or password in either server's log, nor in PostgreSQL's own.
    logs = "".join(open(s.log).read() for s in servers)
    password = urllib.parse.urlsplit(args.postgres).password or "\0"
    check(VISA["number"] not in logs and password not in logs, "no card number and no database password in the servers' logs")
    if args.cluster_dir and os.path.exists(os.path.join(args.cluster_dir, "postgres.log")):
        postgres_log = open(os.path.join(args.cluster_dir, "postgres.log"), errors="replace").read()
        check(VISA["number"] not in postgres_log, "no card number in PostgreSQL's log")
    if failures:
        print("instances-test: the servers' logs are in " + work, file=sys.stderr)
        return 1
    subprocess.run(["rm", "-rf", work])
    return 0


if __name__ == "__main__":
    sys.exit(main())
