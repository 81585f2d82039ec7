#!/usr/bin/env python3
"""The hosted page and webhooks under abuse, measured against a running `capture-cli serve`.

Repeats the attack run that issue 35 reported, with the figures it asked for after the fix:

  card testing   one address posting declined cards through many sessions' pages: how many
                 attempts are answered before the first 429
  photo flood    one address posting card photos to many sessions' pages from 24 threads while
                 a merchant sends five /v1/scans: how many of the merchant's are answered
  tarpit         one merchant's six endpoints that accept nothing, 20 events each; another
                 merchant's one event: seconds until its endpoint has it
  at rest        the vault's database and its log searched for the API keys, the webhook
                 secrets (one endpoint made with an Idempotency-Key) and the card numbers
  stalled        issue 64: eight scan uploads from one address that send their head and one byte
                 and stall; another address's scan meanwhile: its status and seconds
  crafted        issue 64: for 20 s, 16 threads post 42-byte PNGs whose text chunk declares 2 GiB,
                 8 threads 1548 x 1548 noise PNGs (4-pixel blocks), 4 threads the largest pictures
                 the bounds let through (16 MP, a progressive JPEG and a flat PNG, each under 200 KB:
                 libjpeg holds a progressive file's coefficients whole) to /v1/scans; the server's
                 peak resident memory, and the other merchant's scans' statuses and seconds

Usage: scripts/attack-run.py --cli .build/release/capture-cli [--folder DIR]
Standard library and Pillow (for the progressive JPEG). Test card numbers only.
"""

import argparse
import concurrent.futures
import glob
import http.client
import http.server
import json
import os
import re
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
import random
import struct
import zlib

from test_support import free_port

DECLINED = "4000000000000002"
GOOD = "4242424242424242"
HERE = os.path.dirname(os.path.abspath(__file__))


def call(method, url, body=None, headers=None, timeout=60):
    """(status, headers, body bytes); HTTP errors are answers, not exceptions."""
    request = urllib.request.Request(url, method=method, data=body, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


class Server:
    def __init__(self, cli: str, folder: str):
        self.database = os.path.join(folder, "vault.sqlite")
        self.merchants = []
        for name in ("Attacker's shop", "Quiet shop"):
            made = subprocess.run([cli, "keys", "create", "--merchant", name, "--database", self.database, "--json"],
                                  check=True, capture_output=True, text=True)
            self.merchants.append(json.loads(made.stdout))
        self.port = free_port()
        self.log = os.path.join(folder, "serve.log")
        # Loopback endpoints (the tarpit, the receiver): the local development set-up.
        self.process = subprocess.Popen(
            [cli, "serve", "--port", str(self.port), "--database", self.database, "--webhook-allow-private"],
            stdout=open(self.log, "w"), stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if call("GET", self.url("/readyz"), timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise SystemExit("attack-run: the server did not start; see " + self.log)

    def url(self, path: str) -> str:
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def api(self, merchant: int, method: str, path: str, body=None, key="secret_key", headers=None):
        all_headers = {"Authorization": "Bearer " + self.merchants[merchant][key], "Content-Type": "application/json"}
        all_headers.update(headers or {})
        status, _, data = call(method, self.url(path), json.dumps(body).encode() if body is not None else None, all_headers)
        return status, json.loads(data) if data else None

    def charge(self, merchant: int):
        status, token = self.api(merchant, "POST", "/v1/tokens",
                                 {"number": GOOD, "exp_month": 12, "exp_year": 2030, "cvc": "123"}, key="publishable_key")
        assert status == 201, (status, token)
        status, _ = self.api(merchant, "POST", "/v1/transactions", {"token": token["id"], "amount": 1999, "currency": "EUR"})
        assert status == 201, status

    def page(self, session_id: str):
        """The page's cookie and form token, as a browser keeps them."""
        _, headers, html = call("GET", self.url("/pay/" + session_id))
        cookie = headers["Set-Cookie"].split(";")[0]
        token = re.search(r'name="csrf" value="([0-9a-f.]+)"', html.decode()).group(1)
        return cookie, token

    def session(self):
        status, session = self.api(0, "POST", "/v1/checkout_sessions",
                                   {"amount": 1099, "currency": "USD", "return_url": "https://shop.example/done"})
        assert status == 201, (status, session)
        return session["id"]

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


def card_testing(server: Server) -> dict:
    """Declined cards through 14 sessions' pages, five each, as fast as one client goes."""
    answers = []
    for _ in range(14):
        session_id = server.session()
        cookie, token = server.page(session_id)
        for _ in range(5):
            form = "number=%s&expiry=12%%2F30&cvc=123&name=&csrf=%s" % (DECLINED, token)
            status, _, _ = call("POST", server.url("/pay/" + session_id), form.encode(),
                                {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie})
            answers.append(status)
    first = answers.index(429) if 429 in answers else None
    return {"attempts": len(answers), "before_first_429": first, "402": answers.count(402), "429": answers.count(429),
            "other": len(answers) - answers.count(402) - answers.count(429)}


def photo_flood(server: Server, photo: bytes) -> dict:
    """24 threads posting the photo to ten sessions' pages while the merchant scans five times."""
    pages = []
    for _ in range(10):
        session_id = server.session()
        pages.append((session_id,) + server.page(session_id))
    stop = threading.Event()
    buyer = []

    def flood(index: int):
        while not stop.is_set():
            session_id, cookie, token = pages[index % len(pages)]
            status, _, _ = call("POST", server.url("/pay/%s/scan" % session_id), photo,
                                {"Content-Type": "image/png", "Cookie": cookie, "X-Capture-Form-Token": token})
            buyer.append(status)

    with concurrent.futures.ThreadPoolExecutor(24) as pool:
        for index in range(24):
            pool.submit(flood, index)
        time.sleep(1)
        merchant = []
        for _ in range(5):
            status, _, _ = call("POST", server.url("/v1/scans"), photo,
                                {"Authorization": "Bearer " + server.merchants[0]["secret_key"], "Content-Type": "image/png"})
            merchant.append(status)
        stop.set()
    return {"merchant_scans": len(merchant), "merchant_answered_2xx": sum(1 for code in merchant if 200 <= code < 300), "merchant_statuses": merchant,
            "buyer_requests": len(buyer), "buyer_statuses": {str(code): buyer.count(code) for code in sorted(set(buyer))}}


def tarpit(server: Server) -> dict:
    """Six endpoints of merchant 0 that accept nothing and 20 events; merchant 1's one event."""
    pit = socket.socket()
    pit.bind(("127.0.0.1", 0))
    pit.listen(512)
    arrived = threading.Event()

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(204)
            self.end_headers()
            arrived.set()

        def log_message(self, *args):
            pass

    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    status, _ = server.api(1, "POST", "/v1/webhook_endpoints", {"url": "http://127.0.0.1:%d/hook" % receiver.server_address[1]})
    assert status == 201, status

    def delivery() -> float:
        """Seconds from a charge of merchant 1 to its event at the receiver (the dispatcher
        looks at its queue every second: up to a second is the baseline)."""
        arrived.clear()
        start = time.monotonic()
        server.charge(1)
        return round(time.monotonic() - start, 3) if arrived.wait(120) else None

    baseline = [delivery() for _ in range(3)]
    for index in range(6):
        status, _ = server.api(0, "POST", "/v1/webhook_endpoints", {"url": "http://127.0.0.1:%d/t%d" % (pit.getsockname()[1], index)})
        assert status == 201, status
    for _ in range(20):
        server.charge(0)
    time.sleep(1)
    held = [delivery() for _ in range(3)]
    receiver.shutdown()
    pit.close()
    return {"tarpit_endpoints": 6, "events": 20, "other_merchant_delivery_s_without_tarpit": baseline,
            "other_merchant_delivery_s_with_tarpit": held}


def at_rest(server: Server) -> dict:
    """An endpoint made with an Idempotency-Key (the original finding), then the files searched."""
    status, endpoint = server.api(1, "POST", "/v1/webhook_endpoints", {"url": "https://93.184.215.14/hooks"},
                                  headers={"Idempotency-Key": "attack-run-1"})
    assert status == 201, (status, endpoint)
    secrets = [endpoint["secret"], GOOD, DECLINED]
    for merchant in server.merchants:
        secrets += [merchant["secret_key"], merchant["publishable_key"]]
    found = []
    for path in glob.glob(server.database + "*") + [server.log]:
        if path.endswith(".key"):
            continue
        data = open(path, "rb").read()
        found += ["%s in %s" % (secret[:8] + "…", os.path.basename(path)) for secret in secrets if secret.encode() in data]
    return {"searched": len(secrets), "found": found}


def png(width: int, height: int, rows: bytes, colour: int = 2) -> bytes:
    """A PNG of raw RGB (colour 2) or grey (colour 0) rows, each with its filter byte."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b"")


def forged_png() -> bytes:
    """The file of issue 64 (42 bytes here): a header, then a text chunk that declares 2 GiB and stops."""
    whole = png(1, 1, b"\x00\x00\x00\x00", 2)
    return whole[:33] + struct.pack(">I", 0x7FFFFFFF) + b"tEXt" + b"k"


def noise_png(side: int = 1548, block: int = 4, seed: int = 7) -> bytes:
    """Random 4-pixel blocks in colour: within every bound, as hard as a picture gets to read."""
    generator = random.Random(seed)
    cells = side // block
    rows = []
    for _ in range(cells):
        line = b"".join(bytes([generator.randrange(256) for _ in range(3)]) * block for _ in range(cells))
        rows += [b"\x00" + line] * block
    return png(cells * block, cells * block, b"".join(rows))


def largest_pictures(side: int = 4000) -> list:
    """The biggest pictures the scanner's bounds admit (16 MP), small on the wire: a flat-coloured
    progressive JPEG (4:4:4) and a flat PNG."""
    import io
    from PIL import Image
    jpeg = io.BytesIO()
    Image.new("RGB", (side, side), (200, 180, 90)).save(jpeg, "JPEG", quality=90, progressive=True, subsampling=0)
    return [(jpeg.getvalue(), "image/jpeg"), (png(side, side, (b"\x00" + b"\x50\x60\x70" * side) * side), "image/png")]


def resident_mb(pid: int) -> float:
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def scan_from(server: Server, merchant: int, photo: bytes, source: str):
    """A scan sent from the local address `source` (another client to the server): (status, seconds)."""
    start = time.time()
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120, source_address=(source, 0))
    try:
        connection.request("POST", "/v1/scans", photo, {"Authorization": "Bearer " + server.merchants[merchant]["secret_key"],
                                                         "Content-Type": "image/png"})
        status = connection.getresponse().status
    finally:
        connection.close()
    return status, round(time.time() - start, 2)


def stalled(server: Server, photo: bytes) -> dict:
    """Eight uploads from 127.0.0.2 that stall after one byte; a scan from 127.0.0.3 meanwhile."""
    sockets, answers = [], []
    for _ in range(8):
        connection = socket.create_connection(("127.0.0.1", server.port), source_address=("127.0.0.2", 0))
        connection.sendall(("POST /v1/scans HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: image/png\r\n"
                            "Content-Length: 1000000\r\n\r\n" % server.merchants[0]["publishable_key"]).encode() + b"\x89")
        sockets.append(connection)
    time.sleep(1)
    for connection in sockets:
        connection.settimeout(0.2)
        try:
            answers.append(connection.recv(64).split(b" ")[1].decode())
        except (socket.timeout, IndexError):
            answers.append("waiting")
    status, seconds = scan_from(server, 1, photo, "127.0.0.3")
    for connection in sockets:
        connection.close()
    return {"stalled_uploads": len(sockets), "their_answers": answers, "other_scan_status": status, "other_scan_seconds": seconds}


def crafted(server: Server, photo: bytes, seconds: float = 20) -> dict:
    """Forged and noise pictures at full concurrency; the server's peak memory; another merchant's scans."""
    forged, noise, largest = forged_png(), noise_png(), largest_pictures()
    stop = threading.Event()
    statuses = []
    peak = [resident_mb(server.process.pid)]

    def post(body: bytes, source: str, kind: str = "image/png"):
        while not stop.is_set():
            try:
                connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120, source_address=(source, 0))
                connection.request("POST", "/v1/scans", body, {"Authorization": "Bearer " + server.merchants[0]["publishable_key"],
                                                              "Content-Type": kind})
                statuses.append(str(connection.getresponse().status))
                connection.close()
            except OSError as error:
                statuses.append("error %s (%s)" % (type(error).__name__, source))

    def watch():
        while not stop.is_set():
            peak[0] = max(peak[0], resident_mb(server.process.pid))
            time.sleep(0.05)

    with concurrent.futures.ThreadPoolExecutor(30) as pool:
        pool.submit(watch)
        for index in range(16):
            pool.submit(post, forged, "127.0.0.%d" % (10 + index))
        for index in range(8):
            pool.submit(post, noise, "127.0.0.%d" % (40 + index))
        for index in range(4):
            body, kind = largest[index % 2]
            pool.submit(post, body, "127.0.0.%d" % (60 + index), kind)
        time.sleep(2)
        others = [scan_from(server, 1, photo, "127.0.0.4") for _ in range(3)]
        remaining = seconds - 2 - sum(taken for _, taken in others)
        if remaining > 0:
            time.sleep(remaining)
        stop.set()
    return {"forged_png_bytes": len(forged), "noise_png_bytes": len(noise),
            "largest_bytes": [len(body) for body, _ in largest], "requests": len(statuses),
            "statuses": {code: statuses.count(code) for code in sorted(set(statuses))},
            "peak_resident_mb": round(peak[0]), "other_merchant_scans": others}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--folder", default=None)
    arguments = parser.parse_args()
    folder = arguments.folder or tempfile.mkdtemp(prefix="attack-run-")
    os.makedirs(folder, exist_ok=True)
    photo = open(os.path.join(HERE, "..", "Fixtures", "cards", "h125-flat-jcb.png"), "rb").read()
    server = Server(arguments.cli, folder)
    try:
        figures = {"card_testing": card_testing(server), "photo_flood": photo_flood(server, photo),
                   "tarpit": tarpit(server), "at_rest": at_rest(server), "stalled": stalled(server, photo),
                   "crafted": crafted(server, photo)}
    finally:
        server.stop()
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
