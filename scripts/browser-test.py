#!/usr/bin/env python3
"""The hosted checkout page in a real browser: Debian's headless Chromium, driven by chromedriver
through Selenium, against `capture-cli serve` on a fresh vault.

Flows, each checked end to end (the page, where the browser lands, and the session through the API):
  1. desktop width, with JavaScript: the number groups and names its brand as it is typed, the
     expiry gets its slash, the CVC label follows the brand; a decline shows its message and
     leaves the form; a good card lands on the local return URL with the merchant's query kept.
  2. phone width (375 px): no horizontal scrolling; a field error; a card photo fills the number
     and expiry in; then pays.
  3. JavaScript switched off: the plain form pays all the same.
  4. Cancel: lands on the cancel URL; the session is canceled.
  5. Return URLs in every spelling of a host the API takes (2130706433, 0x7f.0.0.1, 0177.0.0.1,
     127.1, 0x7f000001, IPv6 [::1] and [::ffff:127.0.0.1] where the machine has IPv6 loopback), and one whose shop
     redirects the buyer to another origin: each payment lands, none leaves the buyer on the page.
  6. The camera (Chromium's fake camera playing clips made from the fixture cards, with motion,
     blur and glare): "Scan card" reads the card, the page shows brand, last four digits and
     expiry but never the number, the buyer types the CVC and pays; an expired card is said to be
     so when read, does not come back after a reload, is refused and cleared at Pay, and a typed
     card then is the one charged; a sample card's clip (its number passes the check digit) and a
     clip with no card take no number, say so (the sample by name; both after 20 s) and give the
     number field back.
Then the merchant's webhook endpoint (on the same local site) must have been sent every outcome
of those flows, each signed as the API documents it, which this script checks with Python's own
hmac, not the server's code.
Screenshots go to the artefacts folder (default test-artifacts/browser).

Usage: .venv-test/bin/python scripts/browser-test.py --cli .build/debug/capture-cli [--artifacts DIR]
"""

import argparse
import concurrent.futures
import hashlib
import hmac
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import camera_clips  # noqa: E402  (beside this script)
from test_support import free_port  # noqa: E402

VISA = "4242424242424242"
# A card image of the fixtures, with what its manifest says is on it.
PHOTO = os.path.abspath("Fixtures/cards/t012-flat-visa.png")
_CARD = next(c for c in json.load(open("Fixtures/cards/manifest.json")) if c["file"] == "t012-flat-visa.png")
PHOTO_NUMBER = _CARD["pan"]
PHOTO_EXPIRY = "%02d/%02d" % (_CARD["month"], _CARD["year"] % 100)
DECLINED = "4000000000000002"
# The last four digits of every card a flow pays with (the camera's cards are added as read).
PAID_LAST4 = {VISA[-4:], PHOTO_NUMBER[-4:]}


class ReturnSite:
    """The merchant's site: records every page the browser lands on."""

    def __init__(self):
        self.port = free_port()
        self.visits = []
        self.webhooks = []
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                site.visits.append(self.path)
                if self.path.startswith("/hop"):
                    # A shop whose return address sends the buyer on to another origin.
                    self.send_response(302)
                    self.send_header("Location", "http://localhost:%d/done?%s" % (site.port, urllib.parse.urlsplit(self.path).query))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = b"<!doctype html><title>Shop</title><h1>Back at the shop</h1>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                site.webhooks.append((self.path, self.headers.get("Capture-Signature", ""), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        # Both loopbacks where the machine has IPv6 (one socket, IPv4 mapped), else IPv4 alone.
        self.ipv6 = False
        try:
            class DualStack(http.server.ThreadingHTTPServer):
                address_family = socket.AF_INET6

                def server_bind(self):
                    self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
                    super().server_bind()
            self.server = DualStack(("::", self.port), Handler)
            self.ipv6 = True
        except OSError:
            self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return "http://127.0.0.1:%d%s" % (self.port, path)


class Vault:
    """capture-cli serve on a fresh database, with a merchant."""

    def __init__(self, cli: str, folder: str):
        database = os.path.join(folder, "vault.sqlite")
        made = subprocess.run([cli, "keys", "create", "--merchant", "Corner Café", "--database", database, "--json"],
                              check=True, capture_output=True, text=True)
        self.secret = json.loads(made.stdout)["secret_key"]
        self.port = free_port()
        self.log = os.path.join(folder, "serve.log")
        self.process = subprocess.Popen(
            # The shop's webhook endpoint is on loopback: a local development set-up.
            [cli, "serve", "--port", str(self.port), "--database", database, "--webhook-allow-private"],
            stdout=open(self.log, "w"), stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/readyz" % self.port, timeout=1).read()
                return
            except OSError:
                time.sleep(0.2)
        raise SystemExit("browser-test: the server did not start; see " + self.log)

    def api(self, method: str, path: str, body=None):
        request = urllib.request.Request(
            "http://127.0.0.1:%d%s" % (self.port, path), method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": "Bearer " + self.secret, "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def session(self, site: ReturnSite, **extra):
        body = {"amount": 1099, "currency": "USD", "description": "Two flat whites and a croissant",
                "return_url": site.url("/done?order=17"), "cancel_url": site.url("/cart?order=17")}
        body.update(extra)
        return self.api("POST", "/v1/checkout_sessions", body)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


def browser(width: int, height: int, javascript: bool = True, phone: bool = False, camera: str = None) -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--hide-scrollbars", "--window-size=%d,%d" % (width, height), "--lang=en-US"):
        options.add_argument(argument)
    if camera:
        # A camera that plays the clip (looped), allowed without asking.
        for argument in ("--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
                         "--use-file-for-fake-video-capture=" + camera):
            options.add_argument(argument)
    if phone:
        # A headless window is at least 500 px wide: a phone's viewport needs the device emulation.
        options.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": width, "height": height, "pixelRatio": 2}})
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(30)
    return driver


def check(condition: bool, what: str):
    if not condition:
        raise AssertionError(what)
    print("  ok  " + what)


def type_into(driver, field: str, text: str):
    element = driver.find_element(By.ID, field)
    element.clear()
    element.send_keys(text)
    return element


def fill(driver, number: str, expiry: str = "1230", cvc: str = "123", name: str = "Alex Morgan"):
    type_into(driver, "number", number)
    type_into(driver, "expiry", expiry)
    type_into(driver, "cvc", cvc)
    type_into(driver, "name", name)


def landed(driver, site: ReturnSite, path: str, origin: str = None):
    prefix = (origin + path) if origin else site.url(path)
    WebDriverWait(driver, 15).until(lambda d: d.current_url.startswith(prefix))
    return urllib.parse.parse_qs(urllib.parse.urlsplit(driver.current_url).query)


def desktop(vault: Vault, site: ReturnSite, shots: str):
    print("desktop, with JavaScript")
    session = vault.session(site)
    driver = browser(1280, 900)
    try:
        driver.get(session["url"])
        check(driver.title == "Pay Corner Café", "the page is titled with the merchant")
        check("$10.99" in driver.find_element(By.ID, "amount").text, "the amount shows in its currency")
        check(driver.find_element(By.ID, "pay").text == "Pay $10.99", "the button says what it pays")
        time.sleep(0.5)
        check(not driver.find_element(By.ID, "camera-row").is_displayed(), "no \"Scan card\" where the browser has no camera")
        driver.save_screenshot(os.path.join(shots, "checkout-desktop.png"))
        number = type_into(driver, "number", "37828224631")
        check(number.get_attribute("value") == "3782 822463 1", "an Amex number groups 4-6-5 as it is typed")
        check(driver.find_element(By.ID, "brand").text == "American Express", "the brand is named as it is typed")
        check(driver.find_element(By.ID, "cvc-label").text == "CID (4 digits)", "the CVC label follows the brand")
        number = type_into(driver, "number", VISA)
        check(number.get_attribute("value") == "4242 4242 4242 4242", "a Visa number groups by four")
        expiry = type_into(driver, "expiry", "1230")
        check(expiry.get_attribute("value") == "12/30", "the expiry gets its slash")
        # A two-digit year of 20 is 2020, whole: the card expired, not an expiry still being typed.
        fill(driver, VISA, expiry="0520")
        driver.find_element(By.ID, "pay").click()
        WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "expiry-error"))
        said = driver.find_element(By.ID, "expiry-error").text
        check("expired" in said and "not complete" not in said, "MM/20 says the card expired (%r)" % said)
        fill(driver, DECLINED)
        driver.save_screenshot(os.path.join(shots, "checkout-filled.png"))
        driver.find_element(By.ID, "pay").click()
        WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "notice"))
        notice = driver.find_element(By.ID, "notice").text
        check("Your card was declined; try another card." in notice, "a decline says so on the page")
        driver.save_screenshot(os.path.join(shots, "checkout-declined.png"))
        check(vault.api("GET", "/v1/checkout_sessions/" + session["id"])["status"] == "open", "the session stays open after a decline")
        fill(driver, VISA)
        driver.find_element(By.ID, "pay").click()
        query = landed(driver, site, "/done")
        check(query == {"order": ["17"], "checkout_session": [session["id"]], "status": ["complete"]},
              "a payment lands on the return URL with the merchant's query kept")
        paid = vault.api("GET", "/v1/checkout_sessions/" + session["id"])
        check(paid["status"] == "complete" and paid["attempts"] == 2 and paid["transaction"]["card"]["last4"] == "4242",
              "the session is complete with its transaction")
        check(all(VISA not in visit and PHOTO_NUMBER not in visit for visit in site.visits), "no card number in any address")
    finally:
        driver.quit()


def phone(vault: Vault, site: ReturnSite, shots: str):
    print("phone width, with JavaScript")
    session = vault.session(site)
    driver = browser(375, 812, phone=True)
    try:
        driver.get(session["url"])
        width = driver.execute_script("return window.innerWidth")
        overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        check(width == 375 and overflow <= 0, "nothing is wider than a 375 px screen")
        driver.save_screenshot(os.path.join(shots, "checkout-narrow.png"))
        fill(driver, "4242424242424241")
        driver.find_element(By.ID, "pay").click()
        WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "number-error"))
        check("check digit" in driver.find_element(By.ID, "number-error").text.lower() or
              "not a valid" in driver.find_element(By.ID, "number-error").text.lower(),
              "a mistyped number says why under its field")
        driver.save_screenshot(os.path.join(shots, "checkout-narrow-error.png"))
        # A photo of the card fills the number and expiry; the buyer adds the security code.
        driver.find_element(By.ID, "number").clear()
        driver.find_element(By.ID, "expiry").clear()
        driver.find_element(By.ID, "photo").send_keys(PHOTO)
        WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "number").get_attribute("value") != "")
        check(driver.find_element(By.ID, "number").get_attribute("value").replace(" ", "") == PHOTO_NUMBER
              and driver.find_element(By.ID, "expiry").get_attribute("value") == PHOTO_EXPIRY,
              "a photo of the card fills in the number and expiry")
        check("Check the number" in driver.find_element(By.ID, "photo-status").text, "and asks the buyer to check them")
        check(driver.find_elements(By.ID, "number-error") == [], "the last try's message about the number goes once the number changes")
        driver.save_screenshot(os.path.join(shots, "checkout-narrow-photo.png"))
        type_into(driver, "cvc", "123")
        driver.find_element(By.ID, "pay").click()
        check(landed(driver, site, "/done")["status"] == ["complete"], "then it pays")
    finally:
        driver.quit()


def without_javascript(vault: Vault, site: ReturnSite, shots: str):
    print("JavaScript off")
    session = vault.session(site, return_format="ifcc", tax_rate="8.5")
    driver = browser(1280, 900, javascript=False)
    try:
        driver.get(session["url"])
        fill(driver, "4242 4242 4242 4242", expiry="12/30")
        check(driver.find_element(By.ID, "brand").text == "", "no script ran (no brand named while typing)")
        driver.find_element(By.ID, "pay").click()
        query = landed(driver, site, "/done")
        check(query.get("ifcc_responseType") == ["approved"] and query.get("ifcc_amount") == ["10.99"]
              and query.get("ifcc_taxAmount") == ["0.86"] and query.get("ifcc_redactedCardNumber") == ["XXXXXXXXXXXX4242"],
              "the plain form pays and returns Inner Fence's parameters")
    finally:
        driver.quit()


def saving(vault: Vault, site: ReturnSite, shots: str):
    print("a session that saves the card")
    client = vault.api("POST", "/v1/clients", {"email": "alex@example.com"})
    session = vault.session(site, client=client["id"], save_payment_method=True)
    driver = browser(1280, 900)
    try:
        driver.get(session["url"])
        said = driver.find_element(By.ID, "saving")
        check(said.is_displayed() and "Corner Café will keep this card" in said.text, "the buyer is told the card is kept, before paying")
        driver.save_screenshot(os.path.join(shots, "checkout-saving.png"))
        fill(driver, VISA)
        driver.find_element(By.ID, "pay").click()
        landed(driver, site, "/done")
        methods = vault.api("GET", "/v1/clients/%s/payment_methods" % client["id"])
        check([method["card"]["last4"] for method in methods["data"]] == ["4242"], "the card is saved for the client")
    finally:
        driver.quit()


def cancel(vault: Vault, site: ReturnSite, shots: str):
    print("cancel")
    session = vault.session(site)
    driver = browser(1280, 900)
    try:
        driver.get(session["url"])
        driver.find_element(By.ID, "cancel").click()
        query = landed(driver, site, "/cart")
        check(query == {"order": ["17"], "checkout_session": [session["id"]], "status": ["canceled"]}, "Cancel lands on the cancel URL")
        check(vault.api("GET", "/v1/checkout_sessions/" + session["id"])["status"] == "canceled", "the session is canceled")
        driver.get(session["url"])
        check(driver.find_elements(By.ID, "number") == [] and "canceled" in driver.find_element(By.ID, "ended").text,
              "the page then shows how it ended, with no form")
        driver.save_screenshot(os.path.join(shots, "checkout-canceled.png"))
    finally:
        driver.quit()


def spellings(vault: Vault, site: ReturnSite, shots: str) -> int:
    """Pays one session per spelling of the return address that openapi.json's pattern allows,
    kept in the one spelling a browser reads (scheme and host in lower case, an IPv6 address in
    its short form); the spellings of the loopback address that only a browser's own reader
    takes (one number, hex, octal, fewer parts) are refused when the session is made (400).
    Gives the number of payments."""
    print("return addresses in every spelling")
    port = site.port
    for odd in ["http://2130706433:%d", "http://0x7f.0.0.1:%d", "http://0177.0.0.1:%d", "http://127.1:%d", "http://0x7f000001:%d"]:
        given = odd % port
        try:
            vault.session(site, return_url=given + "/done")
            check(False, "%s is refused" % given)
        except urllib.error.HTTPError as error:
            answer = json.loads(error.read())["error"]
            check(error.code == 400 and answer["code"] == "parameter_invalid" and answer["param"] == "return_url",
                  "%s is refused: %d %s" % (given, error.code, answer["code"]))
    forms = [("HTTP://127.0.0.1:%d" % port, "http://127.0.0.1:%d" % port)]
    if site.ipv6:
        forms += [("http://[0:0:0:0:0:0:0:1]:%d" % port, "http://[::1]:%d" % port),
                  ("http://[::ffff:127.0.0.1]:%d" % port, "http://[::ffff:7f00:1]:%d" % port)]
    else:
        print("  this machine has no IPv6 loopback: the IPv6 spellings are not tried")
    driver = browser(1280, 900, javascript=False)
    try:
        for index, (given, kept) in enumerate(forms):
            session = vault.session(site, return_url=given + "/done?order=%d" % index)
            check(vault.api("GET", "/v1/checkout_sessions/" + session["id"])["return_url"] == kept + "/done?order=%d" % index,
                  "%s is kept as %s" % (given, kept))
            driver.get(session["url"])
            fill(driver, VISA, expiry="12/30")
            driver.find_element(By.ID, "pay").click()
            query = landed(driver, site, "/done", origin=kept)
            check(query.get("order") == [str(index)] and query.get("status") == ["complete"], "a payment lands on " + given)
        # The shop's return address redirects to another origin (localhost): once a form's
        # redirect, the browser refused it under the page's form-action policy.
        session = vault.session(site, return_url=site.url("/hop?order=hop"))
        driver.get(session["url"])
        fill(driver, VISA, expiry="12/30")
        driver.find_element(By.ID, "pay").click()
        query = landed(driver, site, "/done", origin="http://localhost:%d" % port)
        check(query.get("order") == ["hop"] and query.get("status") == ["complete"],
              "a payment lands where the shop's return address redirects to")
        return len(forms) + 1
    finally:
        driver.quit()


def camera_frames(vault: Vault) -> int:
    """Frames the server has read from pages' cameras (GET /metrics)."""
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % vault.port, timeout=10) as response:
        text = response.read().decode()
    return sum(int(float(line.rsplit(" ", 1)[1])) for line in text.splitlines() if line.startswith("camera_frames_total{"))


def camera_card(vault: Vault, site: ReturnSite, shots: str, folder: str, card: dict, shot: bool = True):
    """The page's camera on a clip of `card`: it is read, the page shows brand, last four and
    expiry (never the number), the buyer types the CVC and pays. Returns (frames, seconds)."""
    clip = os.path.join(folder, "camera-%s.y4m" % card["file"])
    camera_clips.make(clip, os.path.abspath("Fixtures/cards/" + card["file"]), seed=len(card["file"]))
    session = vault.session(site)
    driver = browser(1280, 900, camera=clip)
    try:
        driver.get(session["url"])
        start = driver.find_element(By.ID, "camera-start")
        # Offered once the browser has listed its cameras.
        WebDriverWait(driver, 10).until(lambda d: start.is_displayed())
        check(start.text == "Scan card", "the page offers \"Scan card\" where a camera is")
        before = camera_frames(vault)
        began = time.time()
        start.click()
        # The live view, unless the card was read before it could be seen (a release build
        # reads the first frame in under a second).
        WebDriverWait(driver, 20).until(
            lambda d: d.find_element(By.ID, "camera-view").is_displayed() or d.find_element(By.ID, "scanned").is_displayed())
        if shot and driver.find_element(By.ID, "camera-view").is_displayed():
            driver.save_screenshot(os.path.join(shots, "camera-live.png"))
        WebDriverWait(driver, 120).until(lambda d: d.find_element(By.ID, "scanned").is_displayed())
        seconds = time.time() - began
        frames = camera_frames(vault) - before
        shown = driver.find_element(By.ID, "scanned-card").text
        number = card["pan"]
        PAID_LAST4.add(number[-4:])
        check(number[-4:] in shown and "read by the camera" in shown, "the camera's card shows as %s" % shown)
        check(number not in driver.page_source and number[:6] not in driver.page_source, "the number never enters the page")
        check(not driver.find_element(By.ID, "number").is_displayed(), "the number field gives way to the camera's card")
        expected = "%02d/%02d" % (card["month"], card["year"] % 100)
        check(driver.find_element(By.ID, "expiry").get_attribute("value") == expected, "the expiry read is filled in")
        if shot:
            driver.save_screenshot(os.path.join(shots, "camera-read.png"))
        type_into(driver, "cvc", "1234" if card["brand"] == "amex" else "123")
        driver.find_element(By.ID, "pay").click()
        landed(driver, site, "/done")
        paid = vault.api("GET", "/v1/checkout_sessions/" + session["id"])
        check(paid["status"] == "complete" and paid["transaction"]["card"]["last4"] == number[-4:],
              "the camera's card paid (%d frames, %.1f s to read)" % (frames, seconds))
        return frames, seconds
    finally:
        driver.quit()
        os.remove(clip)


def camera_fallback(vault: Vault, site: ReturnSite, shots: str, folder: str, specimen: bool):
    """A clip with a sample card (its number passes the check digit, as a bank's UnionPay sample
    card's did when the camera took it and it was paid with), or with no card: no number is ever
    taken (the sample is named as one); after 20 s the page says so, and "Type it instead" gives
    the number field back (the no-card run then pays typed)."""
    what = "a sample card" if specimen else "no card"
    clip = os.path.join(folder, "camera-%s.y4m" % ("specimen" if specimen else "empty"))
    camera_clips.make(clip, None, specimen=specimen, sample="6225 7688 8888 8888")
    session = vault.session(site)
    driver = browser(1280, 900, camera=clip)
    try:
        driver.get(session["url"])
        start = driver.find_element(By.ID, "camera-start")
        WebDriverWait(driver, 10).until(lambda d: start.is_displayed())
        start.click()
        status = driver.find_element(By.ID, "camera-status")
        if specimen:
            WebDriverWait(driver, 20).until(lambda d: "sample card" in status.text)
            check(True, "a sample card: the page says it is a sample card")
        WebDriverWait(driver, 40).until(lambda d: "20 seconds" in status.text)
        # This page's own requests (the server's count holds both clips' frames: they run at once).
        sent = driver.execute_script(
            "return performance.getEntriesByType('resource').filter(e => e.name.endsWith('/frames')).length")
        check(sent >= 3, "%s: %d frames sent in 20 s" % (what, sent))
        check(not driver.find_element(By.ID, "scanned").is_displayed() and driver.find_element(By.ID, "scan").get_attribute("value") == "",
              "%s: no number taken after 20 s, and the page says so" % what)
        driver.save_screenshot(os.path.join(shots, "camera-%s.png" % ("specimen" if specimen else "no-card")))
        driver.find_element(By.ID, "camera-type").click()
        check(driver.find_element(By.ID, "number").is_displayed(), "%s: \"Type it instead\" gives the number field back" % what)
        if specimen:
            return 0
        fill(driver, VISA)
        driver.find_element(By.ID, "pay").click()
        landed(driver, site, "/done")
        check(vault.api("GET", "/v1/checkout_sessions/" + session["id"])["status"] == "complete", "%s: the typed card pays" % what)
        return 1
    finally:
        driver.quit()
        os.remove(clip)


def start_camera(driver) -> None:
    start = driver.find_element(By.ID, "camera-start")
    WebDriverWait(driver, 10).until(lambda d: start.is_displayed())
    start.click()
    WebDriverWait(driver, 120).until(lambda d: d.find_element(By.ID, "scanned").is_displayed())


def camera_switch(vault: Vault, site: ReturnSite, shots: str, folder: str, card: dict) -> int:
    """Issue 64's buyer who changes cards, with an expired card in front of the camera: the page
    says at once that its expiry has passed; a reload does not bring the card back; Pay with it
    is refused and clears it; "Type it instead" leaves it; the typed card is the one charged."""
    clip = os.path.join(folder, "camera-expired.y4m")
    camera_clips.make(clip, os.path.abspath("Fixtures/cards/" + card["file"]), seed=3)
    session = vault.session(site)
    driver = browser(1280, 900, camera=clip)
    last4 = card["pan"][-4:]
    try:
        driver.get(session["url"])
        start_camera(driver)
        shown = driver.find_element(By.ID, "scanned-card").text
        note = driver.find_element(By.ID, "scanned-note").text
        check(last4 in shown and "which has passed" in note, "an expired card: said when it is read (%s; %s)" % (shown, note))
        driver.save_screenshot(os.path.join(shots, "camera-expired.png"))
        driver.refresh()
        time.sleep(0.5)
        check(not driver.find_element(By.ID, "scanned").is_displayed() and driver.find_element(By.ID, "number").is_displayed()
              and driver.find_element(By.ID, "scan").get_attribute("value") == "", "a reload does not bring the camera's card back")
        start_camera(driver)
        type_into(driver, "cvc", "1234" if card["brand"] == "amex" else "123")
        driver.find_element(By.ID, "pay").click()
        WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "expiry-error"))
        said = driver.find_element(By.ID, "expiry-error").text
        check("expired" in said and driver.find_element(By.ID, "number").is_displayed()
              and driver.find_element(By.ID, "scan").get_attribute("value") == "" and last4 not in driver.find_element(By.ID, "scanned-card").text,
              "Pay refuses the expired card and clears it (%r)" % said)
        check(vault.api("GET", "/v1/checkout_sessions/" + session["id"])["status"] == "open", "nothing was charged")
        # The buyer scans again, then types another card instead.
        start_camera(driver)
        driver.find_element(By.ID, "scanned-type").click()
        check(driver.find_element(By.ID, "number").is_displayed() and driver.find_element(By.ID, "scan").get_attribute("value") == "",
              "\"Type it instead\" sets the camera's card aside")
        fill(driver, VISA)
        driver.find_element(By.ID, "pay").click()
        landed(driver, site, "/done")
        paid = vault.api("GET", "/v1/checkout_sessions/" + session["id"])
        check(paid["status"] == "complete" and paid["transaction"]["card"]["last4"] == VISA[-4:],
              "the card typed last is the one charged, not the camera's")
        return 1
    finally:
        driver.quit()
        os.remove(clip)


def camera(vault: Vault, site: ReturnSite, shots: str, cards: int) -> int:
    """The camera flows; returns the payments they made. `cards` fixture cards are read (the
    first is the photo flow's card), with frames and seconds to read each, median and p90."""
    print("the page's camera (Chromium's fake camera playing clips made from the fixtures)")
    folder = tempfile.mkdtemp(prefix="camera-clips-")
    manifest = json.load(open("Fixtures/cards/manifest.json"))
    today = time.gmtime()
    # Cards that can still pay: an expired one is refused at the form, as it should be.
    chosen = [_CARD] + [c for c in manifest if c["pan"] and c["kind"] in ("flat", "photo") and c["file"] != _CARD["file"]
                        and c.get("month") and (c["year"], c["month"]) >= (today.tm_year, today.tm_mon)][: max(0, cards - 1)]
    readings = [camera_card(vault, site, shots, folder, card, shot=index == 0) for index, card in enumerate(chosen)]
    if len(readings) > 1:
        frames = sorted(r[0] for r in readings)
        seconds = sorted(r[1] for r in readings)
        p90 = lambda values: values[min(len(values) - 1, int(round(0.9 * (len(values) - 1))))]
        print("  camera: %d cards, frames to read median %s p90 %s, seconds median %.1f p90 %.1f"
              % (len(readings), frames[len(frames) // 2], p90(frames), seconds[len(seconds) // 2], p90(seconds)))
    payments = len(readings)
    expired = next(c for c in manifest if c["pan"] and c["kind"] == "flat" and c.get("month")
                   and (c["year"], c["month"]) < (today.tm_year, today.tm_mon) and not c["conditions"]
                   and c["brand"] in ("amex", "discover", "visa", "mastercard"))
    payments += camera_switch(vault, site, shots, folder, expired)
    # The two clips that take no number each wait out the page's 20 s: at once, in two browsers.
    before = camera_frames(vault)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        runs = [pool.submit(camera_fallback, vault, site, shots, folder, specimen) for specimen in (True, False)]
        payments += sum(run.result() for run in runs)
    frames = camera_frames(vault) - before
    check(frames >= 6, "the two clips: %d frames read by the server in their 20 s" % frames)
    shutil.rmtree(folder, ignore_errors=True)
    return payments


def signed(header: str, body: bytes, secret: str) -> bool:
    """Capture-Signature as the API documents it, checked without the server's code."""
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    if abs(time.time() - int(parts.get("t", "0"))) > 300:
        return False
    expected = hmac.new(secret.encode(), parts["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts.get("v1", ""))


def webhooks(site: ReturnSite, secret: str, payments: int):
    print("webhooks")
    # One event per outcome of the flows above: a decline and the payments, each payment's
    # session completed, and one session canceled.
    expected = sorted(["transaction.declined"] + ["transaction.succeeded", "checkout_session.completed"] * payments
                      + ["checkout_session.canceled"])
    deadline = time.time() + 30
    while len(site.webhooks) < len(expected) and time.time() < deadline:
        time.sleep(0.2)
    events = [json.loads(body) for _, _, body in site.webhooks]
    check(sorted(event["type"] for event in events) == expected, "the endpoint got every outcome once: %s"
          % ", ".join(sorted(event["type"] for event in events)))
    check(all(path == "/webhook" and signed(header, body, secret) for path, header, body in site.webhooks),
          "each is signed with the endpoint's secret (Python's hmac agrees)")
    check(len({event["id"] for event in events}) == len(events), "each event has its own id")
    completed = [event["data"]["object"] for event in events if event["type"] == "checkout_session.completed"]
    check(all(session["status"] == "complete" and session["transaction"]["card"]["last4"] in PAID_LAST4
              for session in completed), "a completed session's event carries its transaction")
    check(all(VISA.encode() not in body and PHOTO_NUMBER.encode() not in body and DECLINED.encode() not in body
              for _, _, body in site.webhooks), "no card number in any event")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--artifacts", default="test-artifacts/browser")
    parser.add_argument("--camera-cards", type=int, default=1, help="fixture cards the camera flow reads (1 in make test)")
    arguments = parser.parse_args()
    os.makedirs(arguments.artifacts, exist_ok=True)
    folder = tempfile.mkdtemp(prefix="browser-test-")
    site = ReturnSite()
    vault = Vault(arguments.cli, folder)
    try:
        endpoint = vault.api("POST", "/v1/webhook_endpoints", {"url": site.url("/webhook")})
        for flow in (desktop, phone, without_javascript, saving, cancel):
            flow(vault, site, arguments.artifacts)
        payments = 4 + spellings(vault, site, arguments.artifacts)
        payments += camera(vault, site, arguments.artifacts, arguments.camera_cards)
        webhooks(site, endpoint["secret"], payments)
        with open(vault.log) as log:
            text = log.read()
        check(VISA not in text and DECLINED not in text and PHOTO_NUMBER not in text, "no card number in the server's log")
    except Exception:
        print("browser-test: failed; the server's log is " + vault.log, file=sys.stderr)
        raise
    finally:
        vault.stop()
    print("browser-test: every flow passed; screenshots in " + arguments.artifacts)
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
