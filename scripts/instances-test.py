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
  6. With --cluster-dir, faults under a mixed load (tokens; charges, half with an Idempotency-Key and
     retried to an answer, half without and tried again once after a 503; a keyed partial refund of each
     charge that succeeded): PostgreSQL stopped by its administrator, then as a crash, and in the crash
     run one server killed (-9) and started again. Then: requests during the outage are answered within
     the servers' 5 s wait for a connection (none hangs, none crashes a server), /healthz and /readyz
     answer 503 within their second and /livez 200, the servers reconnect by themselves, every token
     answered 201 is in the vault, every charge answered 201 or 202 is settled within the Idempotency-Key
     lease plus a sweep and none is left pending, no charge answered 503 spent its token, nothing is spent
     twice, each keyed charge and refund made exactly one transaction or refund when answered 201 (202)
     and none otherwise, and every succeeded charge's and refund's event reached the endpoint.
  7. A server killed while its request holds a charge's Idempotency-Key (its processor taking 3 s, its lease
     30 s): a retry on another server is told 409 with a Retry-After of its heartbeat's few seconds, then,
     within 10 s of the kill, answered with that charge as the processor has it (replayed), never run again.
Only test card numbers are used. Exit status 0 when every check holds, 1 otherwise.
"""
import argparse
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from test_support import Serve, new_database

VISA = {"number": "4242424242424242", "exp_month": 12, "exp_year": 2031, "cvc": "123"}
# The servers' Idempotency-Key lease and sweep interval: a charge left pending is settled within
# their sum (serve --idempotency-lease, --sweep-interval).
LEASE_SECONDS = 3
SWEEP_SECONDS = 2


class Server(Serve):
    def __init__(self, cli: str, database: str, work: str, name: str, options: list[str], port: int | None = None):
        super().__init__(cli, database, options, os.path.join(work, f"serve-{name}.log"), f"instances-test: server {name}", port)


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
    """A webhook endpoint that takes every delivery, counts it by event id and notes the id of the
    object it tells of."""
    received: dict[str, int] = {}
    seen: set[str] = set()
    lock = threading.Lock()

    @classmethod
    def objects(cls) -> set[str]:
        with cls.lock:
            return set(cls.seen)

    def do_POST(self) -> None:
        event = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        with Hooks.lock:
            Hooks.received[event["id"]] = Hooks.received.get(event["id"], 0) + 1
            Hooks.seen.add(event["data"]["object"]["id"])
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
                        "--token-rate-limit", "60", "--idempotency-lease", str(LEASE_SECONDS), "--sweep-interval", str(SWEEP_SECONDS),
                        # The endpoints here answer at once; a killed server's webhook leases
                        # (4x this) lapse in 12 s, not 40.
                        "--webhook-timeout", "3"]
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
        status, endpoint, _ = call(a, "POST", "/v1/webhook_endpoints", sk, {"url": f"http://127.0.0.1:{hooks.server_port}/hooks",
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
        call(a, "DELETE", f"/v1/webhook_endpoints/{endpoint.get('id')}", sk)

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

        # 6. Faults under a mixed load (issue 65): PostgreSQL stopped as an administrator does (its
        # connections told so), then as a crash (its processes killed, their connections cut
        # without a word: over TLS, no goodbye), and in the crash run one server killed (-9) and
        # started again as well. The load: tokens; charges, half with an Idempotency-Key (retried
        # on no answer, a 5xx or a key in use, across both servers, as a client that may retry
        # does), half without (tried again once after a 503, which says nothing was changed);
        # and a keyed partial refund of each charge that succeeded (retried the same way).
        hooks = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hooks)
        threading.Thread(target=hooks.serve_forever, daemon=True).start()
        status, _, _ = call(a, "POST", "/v1/webhook_endpoints", sk, {"url": f"http://127.0.0.1:{hooks.server_port}/hooks"})
        check(status == 201, f"a webhook endpoint for every event made ({status})")
        for mode in ("fast", "crash") if args.cluster_dir else ():
            answered_tokens: list[str] = []
            outcomes: dict[int, int] = {}
            charges: dict[int, int] = {}
            answered_charges: list[str] = []
            # Charges answered 202: sent to the processor, their outcome not written (issue 65).
            pending_charges: list[str] = []
            # Tokens whose charge without a key was answered 503: nothing may have changed.
            refused_tokens: list[str] = []
            # Answers that were false: a 503 on a charge whose token was spent meanwhile.
            false_answers: list[str] = []
            # Tokens whose charge was answered 503 storage_outcome_unknown, and the transaction its message named.
            unknown_charges: dict[str, str] = {}
            keyed: dict[str, tuple[int, dict]] = {}
            refunds: dict[str, tuple[int, dict]] = {}
            refund_outcomes: dict[int, int] = {}
            slow: list[float] = []
            retry_after: set[str] = set()
            stop = threading.Event()
            lock = threading.Lock()

            def timed(server: Server, path: str, body: dict, outcomes: dict[int, int], answered: list[str],
                      key: str | None = None) -> tuple[int, dict]:
                """One request of the load, counted."""
                began = time.time()
                status, answer, headers = call(server, "POST", path, sk, body, idempotency_key=key, timeout=20)
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
                return status, answer

            def with_key(index: int, path: str, body: dict, key: str, outcomes: dict[int, int], answered: list[str]) -> tuple[int, dict]:
                """A keyed request retried until it has an answer that is not 'try again' (at most 40 s)."""
                end = time.time() + 40
                attempt = 0
                while True:
                    status, answer = timed(servers[(index + attempt) % 2], path, body, outcomes, answered, key)
                    attempt += 1
                    again = status == 0 or status >= 500 or (
                        status == 409 and answer.get("error", {}).get("code") == "idempotency_key_in_use")
                    if not again or time.time() > end:
                        return status, answer
                    time.sleep(0.3)

            def unknown(token: str, answer: dict) -> bool:
                """A 503 storage_outcome_unknown: the spend's write was cut off and may have been made; its
                message names the transaction that may hold the token, to be looked up."""
                error = answer.get("error", {})
                if error.get("code") != "storage_outcome_unknown":
                    return False
                named = re.search(r"tran_[0-9A-Za-z]+", error.get("message", ""))
                with lock:
                    unknown_charges[token] = named.group(0) if named else ""
                return True

            def load(index: int) -> None:
                turn = 0
                while not stop.is_set():
                    turn += 1
                    server = servers[index % 2]
                    status, token = timed(server, "/v1/tokens", VISA, outcomes, answered_tokens)
                    if status != 201:
                        time.sleep(0.1)
                        continue
                    body = {"token": token["id"], "amount": 1999, "currency": "EUR"}
                    if turn % 2:
                        key = f"{mode}-charge-{index}-{turn}"
                        status, charge = with_key(index, "/v1/transactions", body, key, charges, answered_charges)
                        with lock:
                            keyed[key] = (status, charge)
                    else:
                        status, charge = timed(server, "/v1/transactions", body, charges, answered_charges)
                        if status == 503 and unknown(token["id"], charge):
                            pass  # Not "nothing changed": looked up at the end, as its message asks.
                        elif status == 503:
                            # Tried again, as the document allows: nothing was changed.
                            time.sleep(0.5)
                            again, answer = timed(servers[(index + 1) % 2], "/v1/transactions", body, charges, answered_charges)
                            with lock:
                                if again == 503 and unknown(token["id"], answer):
                                    pass
                                elif again == 409 and answer.get("error", {}).get("code") == "token_already_used":
                                    false_answers.append(token["id"])
                                elif again not in (0, 201, 202):
                                    # Neither try spent it (none answered what would have).
                                    refused_tokens.append(token["id"])
                            status, charge = again, answer
                    if status == 201 and charge.get("status") == "succeeded":
                        key = f"{mode}-refund-{charge['id']}"
                        answer = with_key(index, f"/v1/transactions/{charge['id']}/refunds", {"amount": 500}, key,
                                          refund_outcomes, [])
                        with lock:
                            refunds[charge["id"]] = answer

            if mode == "fast":
                section_started = psql(database, "SELECT now()")[0][0]
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
            time.sleep(4)
            if mode == "crash":
                # A server killed where it stands, under load, and started again on its port.
                b.process.kill()
                b.process.wait()
                time.sleep(1)
                b = Server(args.cli, database, work, "b", options, port=b.port)
                servers[1] = b
                time.sleep(3)
            stop.set()
            for worker in workers:
                worker.join()
            after = [call(s, "POST", "/v1/tokens", sk, VISA)[0] for s in servers]
            health = [call(s, "GET", "/healthz", None)[0] for s in servers]
            alive = all(s.process.poll() is None for s in servers)
            stored = set(row[0] for row in psql(database, "SELECT id FROM token"))
            lost = [t for t in answered_tokens if t not in stored]
            refused = outcomes.get(503, 0) + charges.get(503, 0) + refund_outcomes.get(503, 0)
            check(refused > 0 and set(outcomes) <= {0, 201, 503} and retry_after <= {"2"} and not slow and alive,
                  f"PostgreSQL stopped ({mode}) for 7 s under load: token answers {dict(sorted(outcomes.items()))}, refund "
                  f"answers {dict(sorted(refund_outcomes.items()))} (0: no answer, the killed server); {refused} answered 503 "
                  f"with Retry-After {sorted(retry_after)}, {len(slow)} requests slower than 10 s, servers alive: {alive}")
            check(after == [201, 201] and health == [200, 200],
                  f"after the restart both servers reconnected by themselves (tokens {after}, healthz {health})")
            check(not lost, f"{len(answered_tokens)} tokens answered 201 during the run, {len(lost)} missing from the vault")
            # Nothing pending past the documented bound: the Idempotency-Key lease plus a sweep.
            deadline = time.time() + LEASE_SECONDS + SWEEP_SECONDS + 10
            while time.time() < deadline and psql(database, """SELECT count(*) FROM "transaction" WHERE status = 'pending'""")[0][0] != "0":
                time.sleep(0.5)
            still_pending = int(psql(database, """SELECT count(*) FROM "transaction" WHERE status = 'pending'""")[0][0])
            settled = set(row[0] for row in psql(database, """SELECT id FROM "transaction" WHERE status <> 'pending'"""))
            unsettled = [c for c in answered_charges if c not in settled]
            unrecorded = [c for c in pending_charges if c not in settled]
            check(charges.get(201, 0) > 0 and set(charges) <= {0, 201, 202, 409, 503} and not unsettled and not unrecorded
                  and still_pending == 0,
                  f"charges during the faults: answers {dict(sorted(charges.items()))}; {len(unsettled)} of the "
                  f"{len(answered_charges)} answered 201 not settled in the vault; {len(pending_charges)} answered 202 pending, "
                  f"{len(unrecorded)} of them not settled {LEASE_SECONDS + SWEEP_SECONDS + 10} s later; {still_pending} pending in all")
            spent = set(row[0] for row in psql(database, 'SELECT token_id FROM "transaction"'))
            spent_after_503 = [t for t in refused_tokens if t in spent]
            check(not false_answers and not spent_after_503,
                  f"a 503 on a charge changed nothing: {len(refused_tokens) + len(false_answers)} charges answered 503 and "
                  f"refused again, {len(false_answers)} of them refused as already used, {len(spent_after_503)} tokens "
                  f"spent by charges answered only 503")
            # A charge whose spend was cut off said so (storage_outcome_unknown) and named its transaction:
            # there is none for the token, or that one, failed (the card never went to the processor).
            held = {row[0]: (row[1], row[2]) for row in psql(database, f"""SELECT token_id, id, status FROM "transaction"
                    WHERE token_id IN ({",".join("'" + t + "'" for t in unknown_charges) or "''"})""")}
            unknown_wrong = [t for t, named in unknown_charges.items() if t in held and held[t] != (named, "failed")]
            check(not unknown_wrong,
                  f"{len(unknown_charges)} charges answered 503 storage_outcome_unknown (the spend's write cut off): "
                  f"{sum(1 for t in unknown_charges if t in held)} of them had spent their token, each by the transaction "
                  f"named, settled failed; {len(unknown_wrong)} otherwise")
            double = psql(database, """SELECT count(*) FROM "transaction" GROUP BY token_id HAVING count(*) > 1""")
            check(not double, f"nothing spent twice ({len(double)} tokens with two transactions)")
            per_key = {row[0]: int(row[1]) for row in psql(
                database, f"""SELECT idempotency_key, count(*) FROM "transaction" WHERE idempotency_key LIKE '{mode}-charge-%'
                              GROUP BY idempotency_key""")}
            keyed_wrong = [k for k, (status, answer) in keyed.items()
                           if per_key.get(k, 0) > 1 or (status in (201, 202)) != (per_key.get(k, 0) == 1)]
            check(keyed and not keyed_wrong and all(status in (201, 202) for status, _ in keyed.values()),
                  f"{len(keyed)} keyed charges, each retried to its answer: answers "
                  f"{sorted({status for status, _ in keyed.values()})}, {len(keyed_wrong)} whose answer and the vault disagree "
                  f"(a transaction per key answered 201/202, none otherwise, never two)")
            refund_rows = {row[0]: int(row[1]) for row in psql(
                database, f"""SELECT transaction_id, count(*) FROM refund
                              WHERE transaction_id IN ({",".join("'" + t + "'" for t in refunds) or "''"}) GROUP BY transaction_id""")}
            refunds_wrong = [t for t, (status, _) in refunds.items() if (status == 201) != (refund_rows.get(t, 0) == 1)
                             or refund_rows.get(t, 0) > 1]
            check(refunds and not refunds_wrong,
                  f"{len(refunds)} keyed partial refunds, each retried to its answer: answers "
                  f"{sorted({status for status, _ in refunds.values()})}, {len(refunds_wrong)} whose answer and the vault "
                  f"disagree (one refund when answered 201, none otherwise)")
        if args.cluster_dir:
            # Every charge that succeeded and every refund reached the endpoint, signed, at least once.
            expected = set(row[0] for row in psql(
                database, f"""SELECT id FROM "transaction" WHERE status = 'succeeded' AND created_at >= '{section_started}'"""))
            expected |= set(row[0] for row in psql(database, f"SELECT id FROM refund WHERE created_at >= '{section_started}'"))
            deadline = time.time() + 60
            while time.time() < deadline and not expected <= Hooks.objects():
                time.sleep(0.5)
            missing = expected - Hooks.objects()
            check(not missing, f"{len(expected)} succeeded charges and refunds: {len(missing)} events never delivered")
        hooks.shutdown()

        # 7. A server killed while its request holds a charge's Idempotency-Key (issue 65, point 4: the key
        # answered "still running" for its whole 30 s lease). Server c keys for 30 s and its processor takes
        # 3 s, so its heartbeat vouches for it 6 s: killed mid-charge, its key is taken over by a retry on a
        # within those seconds, and answered with the charge as the processor has it, once.
        c = Server(args.cli, database, work, "c", common + [
            "--sandbox-journal", os.path.join(work, "sandbox.journal"), "--sandbox-latency", "3000", "--idempotency-lease", "30"])
        servers.append(c)
        token = call(c, "POST", "/v1/tokens", sk, VISA)[1]["id"]
        body = {"token": token, "amount": 900, "currency": "EUR"}
        holding = threading.Thread(target=lambda: call(c, "POST", "/v1/transactions", sk, body, "killed-1", timeout=10))
        holding.start()
        deadline = time.time() + 10
        while time.time() < deadline and psql(database, """SELECT count(*) FROM "transaction" WHERE idempotency_key = 'killed-1'""")[0][0] == "0":
            time.sleep(0.05)
        c.process.kill()
        c.process.wait()
        killed = time.time()
        holding.join()
        first = call(a, "POST", "/v1/transactions", sk, body, "killed-1")
        answer = first
        while answer[0] == 409 and time.time() - killed < 40:
            time.sleep(0.25)
            answer = call(a, "POST", "/v1/transactions", sk, body, "killed-1")
        took = time.time() - killed
        rows = psql(database, """SELECT id, status FROM "transaction" WHERE idempotency_key = 'killed-1'""")
        again = call(b, "POST", "/v1/transactions", sk, body, "killed-1")
        check(first[0] == 409 and 1 <= int(first[2].get("Retry-After", "99")) <= 6 and answer[0] == 201 and took < 10
              and answer[2].get("Idempotent-Replayed") == "true" and len(rows) == 1
              and [answer[1].get("id"), answer[1].get("status")] == rows[0] and rows[0][1] != "pending"
              and again[0] == 201 and again[1] == answer[1],
              f"a server killed holding a charge's key: the retry on another was told {first[0]} with Retry-After "
              f"{first[2].get('Retry-After')}, then answered {answer[0]} ({answer[1].get('status')}, replayed: "
              f"{answer[2].get('Idempotent-Replayed')}) {took:.1f} s after the kill (its lease: 30 s); {len(rows)} transaction "
              f"for the key, {rows[0][1] if rows else 'none'}; the next retry answered the same: {again[1] == answer[1]}")
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
