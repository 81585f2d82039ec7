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
