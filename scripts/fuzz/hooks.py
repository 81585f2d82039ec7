"""Schemathesis hooks for scripts/fuzz-api.py (loaded through schemathesis.toml's `hooks`).

Idempotency-Key: the fuzzer draws header values from the schema, and Hypothesis favours small
ones, so unrelated requests share keys such as "0". The server is right to answer such a
request with the first request's answer (or 422 for another body), and a real client never
reuses a key for a new request; a fuzzer that does would see a deleted webhook endpoint
"created" again. So a well-formed key is replaced by a fresh one before the request goes out.
A malformed key (empty, too long, not printable ASCII) is left as drawn, for the server to
refuse. The key's own rules are tested in the Swift tests (ContractTests, PaymentAPITests).

Realistic values: a card number drawn from the schema's pattern almost never passes the card
rules, and an address drawn from a string almost never names a host, so without them the
charges, refunds, saved cards and webhook deliveries the stateful phase builds on would never be
reached. Two requests in three that the fuzzer drew as valid get a test card or an address; the
third keeps what was drawn, so that the refusals stay fuzzed. Only a valid request is changed,
and only into another valid one: a request drawn as invalid goes out as drawn.

A picture drawn as bytes almost never decodes, and a scan of one that does not is refused for
what it holds (422 image_unreadable), not its form: two valid scans in three send one of the
small PNG and JPEG pictures of the C bridge's tests instead, so that the scanner is reached.

The checkout page's posts (POST /pay/{id}, its cancel, its photo and its camera frames) are
refused with 403 without the page's form token and the cookie it goes with, so a fuzzer that
draws them gets no further than that check. Two of three such requests, valid or not, go to an
open session (opened for them, and used until a post ends it), with the cookie a browser gets
from GET /pay/{id} and the page's token in place of the one drawn (a valid form gets one even
when drawn without: the schema lets the field out, the page never does). The picture's bytes
stay as drawn, and the form's fields as `_page_card` leaves them. The third keeps its drawn id
and no token.
"""

import html
import json
import os
import re
import urllib.request
import uuid

import schemathesis

WELL_FORMED_KEY = re.compile(r"[!-~]([ -~]{0,253}[!-~])?")
# Brands whose CVC has three digits; two that the sandbox declines.
TEST_CARDS = ["4242424242424242", "5555555555554444", "4000000000000002", "4000000000009995", "4000056655665556"]


# Small pictures that decode (the C bridge's test images), for the scans' bodies.
PICTURES = [
    open(os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "OCRBridgeTests", "Fixtures", name), "rb").read()
    for name in ("grey-8.png", "interlaced-rgb-8.png", "jpeg-baseline-rgb.jpg", "jpeg-exif-6.jpg")
]


def _pick(value) -> int:
    return sum(map(ord, str(value)))


def _whole(value) -> bool:
    """An integer as JSON Schema counts them: 150.0 is one."""
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, int) and not isinstance(value, bool)


@schemathesis.hook
def before_call(context, case, kwargs):
    for name in list(case.headers or {}):
        if name.lower() == "idempotency-key":
            value = case.headers[name]
            if isinstance(value, str) and WELL_FORMED_KEY.fullmatch(value):
                case.headers[name] = "fuzz-" + uuid.uuid4().hex
    if case.operation.method.upper() == "POST" and case.operation.path.startswith("/pay/{id}"):
        _page_form(case)
    body = case.body
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return
    route = (case.operation.method.upper(), case.operation.path)
    if route in (("POST", "/v1/scans"), ("POST", "/pay/{id}/scan")) and isinstance(body, (bytes, bytearray)):
        pick = _pick(body)
        if pick % 3:
            case.body = PICTURES[pick % len(PICTURES)]
        return
    if not isinstance(body, dict):
        return
    if route == ("POST", "/v1/tokens"):
        _card(body)
    elif route == ("POST", "/v1/transactions"):
        _charge(body)
    elif route == ("POST", "/v1/checkout_sessions"):
        for name in ("return_url", "cancel_url"):
            if name in body and _pick(body[name]) % 3:
                body[name] = "https://shop.example/%s?order=%d" % (name.split("_")[0], _pick(body[name]))
    elif route == ("POST", "/pay/{id}"):
        _page_card(body)
    elif route == ("POST", "/v1/webhook_endpoints"):
        if _pick(body.get("url")) % 3:
            # The discard port on loopback (serve runs with --webhook-allow-private): every
            # delivery is refused at once and retried, so there are deliveries to list and retry.
            body["url"] = "http://127.0.0.1:9/hooks/%d" % _pick(body.get("url"))


def _card(body):
    """A test card with a future expiry and a three-digit CVC, bound to no amount (a charge the
    stateful phase makes from it draws its own)."""
    if "number" not in body or not _pick(body["number"]) % 3:
        return
    body["number"] = TEST_CARDS[_pick(body["number"]) % len(TEST_CARDS)]
    body["exp_year"] = 2030 + body["exp_year"] % 5
    if "cvc" in body:
        body["cvc"] = body["cvc"][:3]
    body.pop("amount", None)
    body.pop("currency", None)


def _page_card(body):
    """The page's form as a buyer fills it in: a test card, an expiry to come, its CVC."""
    if not _pick(body.get("number")) % 3:
        return
    body["number"] = TEST_CARDS[_pick(body.get("number")) % len(TEST_CARDS)]
    body["expiry"] = "12/%d" % (30 + _pick(body.get("expiry")) % 5)
    body["cvc"] = "123"
    body.pop("scan", None)


def _charge(body):
    """The charge a merchant would send with the token a link brought: the token alone (the
    drawn body may name a saved card too, and a client the vault never made), and an amount
    within every currency's limit."""
    if not str(body.get("token", "")).startswith("tok_"):
        return
    body.pop("payment_method", None)
    if not body.get("save_payment_method"):
        body.pop("client", None)
    if _whole(body.get("amount")):
        body["amount"] = 1 + int(body["amount"]) % 100_000


CSRF_FIELD = re.compile(r'name="csrf" value="([^"]*)"')


# The session the page posts go to, with its cookie and form token, until one of them ends it.
_page = None


def _page_form(case):
    """Points two of three page posts at an open session, with the page's form token (in the
    form's `csrf` field, or the header the page's script sends it in) and its cookie."""
    global _page
    drawn = (case.path_parameters or {}).get("id")
    if not _pick(drawn) % 3:
        return
    if _page is None:
        base, secret = os.environ["CAPTURE_FUZZ_BASE_URL"], os.environ["CAPTURE_FUZZ_SECRET_KEY"]
        made = urllib.request.Request(
            base + "/v1/checkout_sessions",
            data=json.dumps({"amount": 1999, "currency": "EUR", "return_url": "https://shop.example/return"}).encode(),
            headers={"Authorization": "Bearer " + secret, "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(made, timeout=10) as answer:
            opened = json.load(answer)["id"]
        with urllib.request.urlopen(base + "/pay/" + opened, timeout=10) as page:
            cookie = page.headers["Set-Cookie"].split(";", 1)[0]
            _page = (opened, cookie, html.unescape(CSRF_FIELD.search(page.read().decode()).group(1)))
    session, cookie, token = _page
    case.path_parameters = dict(case.path_parameters or {}, id=session)
    case.headers = dict(case.headers or {}, Cookie=cookie)
    # Only a token the request carries is replaced: a check that leaves it out must see it left out.
    for name in case.headers:
        if name.lower() == "x-capture-form-token":
            case.headers[name] = token
    positive = case.meta is not None and case.meta.generation.mode.is_positive
    if isinstance(case.body, dict) and ("csrf" in case.body or positive):
        case.body["csrf"] = token


@schemathesis.hook
def after_call(context, case, response):
    """A new session for the page posts once one of them has paid or canceled the open one (303),
    or found it ended (409)."""
    global _page
    if _page is not None and (case.path_parameters or {}).get("id") == _page[0] and response.status_code in (303, 409):
        _page = None
