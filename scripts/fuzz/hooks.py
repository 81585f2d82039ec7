"""Schemathesis hooks for scripts/fuzz-api.py (loaded through schemathesis.toml's `hooks`).

Idempotency-Key: the fuzzer draws header values from the schema, and Hypothesis favours small
ones, so unrelated requests share keys such as "0". The server is right to answer such a
request with the first request's answer (or 422 for another body), and a real client never
reuses a key for a new request; a fuzzer that does would see a deleted webhook endpoint
"created" again. So a well-formed key is replaced by a fresh one before the request goes out.
A malformed key (empty, too long, not printable ASCII) is left as drawn, for the server to
refuse. The key's own rules are tested in the Swift tests (PaymentAPITests, PaymentsTests).
"""

import re
import uuid

import schemathesis

WELL_FORMED_KEY = re.compile(r"[!-~]([ -~]{0,253}[!-~])?")


@schemathesis.hook
def before_call(context, case, kwargs):
    headers = case.headers
    if not headers:
        return
    for name in list(headers):
        if name.lower() == "idempotency-key":
            value = headers[name]
            if isinstance(value, str) and WELL_FORMED_KEY.fullmatch(value):
                headers[name] = "fuzz-" + uuid.uuid4().hex


# Realistic values for the objects the stateful phase builds on. A card number drawn from the
# schema's pattern almost never passes the card rules, and an address drawn from a string
# almost never names a host, so without these the charges, refunds, saved cards and webhook
# deliveries behind them would never be reached. Two cases in three get one; the third keeps
# what was drawn, so the refusals stay fuzzed too. A value is only replaced by another the
# document allows in its place, so a case the fuzzer drew as invalid stays invalid.
TEST_CARDS = ["4242424242424242", "5555555555554444", "4000000000000002", "4000000000009995", "4000056655665556"]
NUMBER = re.compile(r"[0-9\s-]+")


def _pick(value) -> int:
    return sum(map(ord, str(value)))


@schemathesis.hook
def map_body(context, body):
    operation = context.operation
    if operation is None or not isinstance(body, dict):
        return body
    route = (operation.method.upper(), operation.path)
    if route == ("POST", "/v1/tokens"):
        number = body.get("number")
        if isinstance(number, str) and NUMBER.fullmatch(number) and _pick(number) % 3:
            body = dict(body, number=TEST_CARDS[_pick(number) % len(TEST_CARDS)])
            year = body.get("exp_year")
            if isinstance(year, int) and not isinstance(year, bool) and 0 <= year <= 9999:
                body["exp_year"] = 2030 + year % 5
    elif route == ("POST", "/v1/checkout_sessions"):
        body = dict(body)
        for name in ("return_url", "cancel_url"):
            value = body.get(name)
            if isinstance(value, str) and len(value) <= 2048 and _pick(value) % 3:
                body[name] = "https://shop.example/%s?order=%d" % (name.split("_")[0], _pick(value))
    elif route == ("POST", "/v1/webhook_endpoints"):
        url = body.get("url")
        if isinstance(url, str) and len(url) <= 2048 and _pick(url) % 3:
            # The discard port on loopback (serve runs with --webhook-allow-private): every
            # delivery is refused at once and retried, so deliveries exist to list and retry.
            body = dict(body, url="http://127.0.0.1:9/hooks/%d" % _pick(url))
    return body
