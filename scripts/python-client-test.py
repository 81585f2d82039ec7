#!/usr/bin/env python3
"""A client generated from openapi.json, as a backend developer would make one, drives a live server (issue 66).

openapi-python-client (pinned in scripts/test-requirements.txt, in .venv-test/) generates a package from the
document `serve` publishes, with its default configuration: any error or warning fails the run. The package is
imported and used, typed, for the flow a checkout backend goes through: a token; a charge with an Idempotency-Key
(and its replay); a partial refund; the transactions listed page by page; a client and a charge that keeps its
card, then a charge of that saved card; a checkout session; the events; a scan of a JPEG made into a token. Every
error status the flow meets is decoded into the document's Error model with its code.

Usage: .venv-test/bin/python scripts/python-client-test.py --cli .build/debug/capture-cli
Only test card numbers are used. Exit status 0 when every check holds, 1 otherwise.
"""

import argparse
import importlib
import io
import json
import os
import subprocess
import sys
import tempfile
import urllib.request

from test_support import Serve

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VISA = "4242424242424242"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--venv", default=os.path.join(ROOT, ".venv-test"))
    arguments = parser.parse_args()
    failures: list[str] = []

    def check(condition: bool, message: str) -> None:
        print(("python-client-test: " if condition else "python-client-test: FAIL ") + message,
              file=sys.stdout if condition else sys.stderr)
        if not condition:
            failures.append(message)

    work = tempfile.mkdtemp(prefix="python-client-test.")
    vault = ["--database", os.path.join(work, "vault.sqlite")]
    keys = json.loads(subprocess.run([arguments.cli, "keys", "create", "--merchant", "shop", "--json"] + vault,
                                     check=True, capture_output=True, text=True).stdout)
    server = Serve(arguments.cli, vault[1], ["--sandbox-journal", os.path.join(work, "sandbox.journal")],
                   os.path.join(work, "serve.log"), "python-client-test: the server")
    try:
        # 1. The document as served, generated with the default configuration (its ruff hooks included).
        document = os.path.join(work, "openapi.json")
        with urllib.request.urlopen(server.url + "/openapi.json") as answer, open(document, "wb") as out:
            out.write(answer.read())
        environment = dict(os.environ, PATH=os.path.join(arguments.venv, "bin") + os.pathsep + os.environ["PATH"])
        made = subprocess.run([os.path.join(arguments.venv, "bin", "openapi-python-client"), "generate", "--path", document,
                               "--output-path", os.path.join(work, "client")],
                              capture_output=True, text=True, env=environment)
        said = (made.stdout + made.stderr).strip()
        check(made.returncode == 0 and "warning" not in said.lower() and "error" not in said.lower(),
              f"openapi-python-client generated the client with its defaults, no error and no warning: {said[:2000]!r}")
        if made.returncode != 0:
            return 1
        sys.path.insert(0, os.path.join(work, "client"))
        package = "card_capture_vault_api_client"
        api = importlib.import_module(package)
        models = importlib.import_module(package + ".models")
        types = importlib.import_module(package + ".types")

        def operation(name: str):
            return importlib.import_module(f"{package}.api.default.{name}")

        public = api.AuthenticatedClient(base_url=server.url, token=keys["publishable_key"])
        secret = api.AuthenticatedClient(base_url=server.url, token=keys["secret_key"])
        Error = models.Error

        def error_code(response) -> str | None:
            return response.parsed.error.code.value if isinstance(response.parsed, Error) else None

        def token(number: str = VISA):
            return operation("create_token").sync(client=public, body=models.CardTokenRequest(
                number=number, exp_month=12, exp_year=2031, cvc="123"))

        # 2. A token, typed.
        first = token()
        check(isinstance(first, models.Token) and first.id.startswith("tok_") and first.card.last4 == "4242",
              f"a token: {type(first).__name__} {getattr(first, 'id', '')[:4]}… ending {getattr(getattr(first, 'card', None), 'last4', None)}")

        # 3. A charge with an Idempotency-Key, and its replay.
        charge = operation("create_transaction")
        body = models.TokenCharge(token=first.id, amount=2000, currency=models.Currency.EUR)
        charged = charge.sync_detailed(client=secret, body=body, idempotency_key="order-1")
        again = charge.sync_detailed(client=secret, body=body, idempotency_key="order-1")
        check(charged.status_code == 201 and isinstance(charged.parsed, models.Transaction)
              and charged.parsed.status == models.TransactionStatus.SUCCEEDED
              and again.status_code == 201 and again.parsed.id == charged.parsed.id
              and again.headers.get("Idempotent-Replayed") == "true" and charged.headers.get("Request-Id", "").startswith("req_"),
              f"a keyed charge {charged.status_code} {getattr(charged.parsed, 'status', None)}, its replay {again.status_code} "
              f"the same transaction: {getattr(again.parsed, 'id', None) == getattr(charged.parsed, 'id', 1)}")
        spent = charge.sync_detailed(client=secret, body=body)
        check(spent.status_code == 409 and error_code(spent) == "token_already_used",
              f"the token spent again: {spent.status_code} {error_code(spent)}")

        # 4. A partial refund.
        refund = operation("create_refund").sync_detailed(charged.parsed.id, client=secret,
                                                          body=models.CreateRefundBody(amount=500), idempotency_key="refund-1")
        check(refund.status_code == 201 and isinstance(refund.parsed, models.Refund) and refund.parsed.amount == 500,
              f"a partial refund: {refund.status_code} {getattr(refund.parsed, 'amount', None)}")
        too_much = operation("create_refund").sync_detailed(charged.parsed.id, client=secret, body=models.CreateRefundBody(amount=5000))
        check(too_much.status_code == 422 and error_code(too_much) == "refund_exceeds_amount",
              f"a refund beyond the amount: {too_much.status_code} {error_code(too_much)}")

        # 5. Five more charges, then the list page by page.
        for index in range(5):
            charge.sync(client=secret, body=models.TokenCharge(token=token().id, amount=100 + index, currency=models.Currency.EUR))
        listed, after, pages = [], types.UNSET, 0
        while True:
            page = operation("list_transactions").sync(client=secret, limit=2, starting_after=after)
            pages += 1
            listed += [transaction.id for transaction in page.data]
            if not page.has_more:
                break
            after = page.data[-1].id
        check(len(listed) == 6 and len(set(listed)) == 6 and pages == 3, f"6 transactions listed 2 a page: {len(set(listed))} in {pages} pages")

        # 6. A client, a charge that keeps the card, then that payment method charged.
        client = operation("create_client").sync(client=secret, body=models.CreateClientBody(email="ada@example.com"))
        kept = charge.sync(client=secret, body=models.TokenChargeSavingCard(
            token=token().id, amount=1500, currency=models.Currency.EUR, client=client.id, save_payment_method=True))
        method = getattr(kept, "payment_method", None)
        again_paid = charge.sync_detailed(client=secret, body=models.PaymentMethodCharge(
            payment_method=method or "pm_none", amount=900, currency=models.Currency.EUR))
        check(isinstance(client, models.Client) and isinstance(method, str) and method.startswith("pm_")
              and again_paid.status_code == 201 and again_paid.parsed.status == models.TransactionStatus.SUCCEEDED,
              f"a client, a card kept ({method and method[:3]}…), charged again: {again_paid.status_code}")

        # 7. A checkout session.
        session = operation("create_checkout_session").sync(client=secret, body=models.CheckoutSessionRequest(
            amount=4200, currency=models.Currency.EUR, return_url="https://shop.example/done"))
        check(isinstance(session, models.CheckoutSession) and session.url.startswith(server.url + "/pay/"),
              f"a checkout session: {type(session).__name__}, its page {getattr(session, 'url', '')[:len(server.url) + 5]}…")

        # 8. The events.
        events = operation("list_events").sync(client=secret, limit=100)
        kinds = sorted({event.type_.value for event in events.data})
        objects = {event.type_.value: type(event.data.object_).__name__ for event in events.data}
        check("transaction.succeeded" in kinds and "refund.created" in kinds
              and objects.get("transaction.succeeded") == "Transaction" and objects.get("refund.created") == "Refund",
              f"the events, each with its object typed: {objects}")

        # 9. A scan of a JPEG, made into a token.
        from PIL import Image  # In .venv-test: the fixtures are PNGs.
        jpeg = io.BytesIO()
        Image.open(os.path.join(ROOT, "Fixtures", "cards", "h124-flat-diners.png")).convert("RGB").save(jpeg, "JPEG", quality=92)
        scanned = operation("create_scan").sync_detailed(client=public, body=types.File(payload=io.BytesIO(jpeg.getvalue())))
        scan_token = operation("create_token").sync_detailed(client=public, body=models.ScanTokenRequest(
            scan=getattr(scanned.parsed, "id", "scan_none"), cvc="123"))
        check(scanned.status_code == 201 and isinstance(scanned.parsed, models.Scan) and scan_token.status_code == 201,
              f"a JPEG scanned ({scanned.status_code}, {getattr(scanned.parsed, 'status', None)}) and made a token ({scan_token.status_code})")

        # 10. Errors, each decoded into the Error model with its code.
        unknown = operation("get_transaction").sync_detailed("tran_0000000000000000000000000000", client=secret)
        bad_key = operation("get_transaction").sync_detailed(
            charged.parsed.id, client=api.AuthenticatedClient(base_url=server.url, token="sk_test_wrong"))
        declined_number = operation("create_token").sync_detailed(client=public, body=models.CardTokenRequest(
            number="4242424242424241", exp_month=12, exp_year=2031))
        reused = charge.sync_detailed(client=secret, body=models.TokenCharge(token=token().id, amount=1, currency=models.Currency.EUR),
                                      idempotency_key="order-1")
        invalid = operation("list_transactions").sync_detailed(client=secret, limit=5000)
        statuses = {name: (response.status_code, error_code(response)) for name, response in
                    [("unknown id", unknown), ("wrong key", bad_key), ("bad number", declined_number), ("key reused", reused),
                     ("limit too big", invalid)]}
        check(statuses["unknown id"][0] == 404 and statuses["wrong key"][0] == 401 and statuses["bad number"][0] == 402
              and statuses["key reused"] == (422, "idempotency_key_reused") and statuses["limit too big"][0] == 400
              and all(code for _, code in statuses.values()),
              f"errors decoded into the Error model: {statuses}")
    finally:
        server.stop()
    with open(os.path.join(work, "serve.log")) as log:
        check(VISA not in log.read(), "no card number in the server's log")
    if failures:
        print("python-client-test: the server's log and the generated client are in " + work, file=sys.stderr)
        return 1
    subprocess.run(["rm", "-rf", work])
    return 0


if __name__ == "__main__":
    sys.exit(main())
