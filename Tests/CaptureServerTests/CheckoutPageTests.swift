import CardCapture
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import OCRBridge
import Payments
import StoreTestSupport
import Testing
import Tokenizer

@testable import CaptureServer

/// The hosted page as a browser without JavaScript uses it: forms posted with the page's
/// cookie and hidden token, answers read as HTML.
@Suite("Hosted checkout page")
struct CheckoutPageTests {
    static let sessionBody = #"""
        {"amount": 1099, "currency": "USD", "description": "Two coffees", "return_url": "https://shop.example/done?order=17",
         "cancel_url": "https://shop.example/cart", "allowed_brands": ["visa"]}
        """#

    @Test("the page shows the amount and a form with its token, and carries the security headers", arguments: StoreKind.allCases)
    func showsForm(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let id = try await client.openSession(fixture, Self.sessionBody)
            let page = try await client.visit(.get, "/pay/\(id)")
            #expect(page.status == .ok)
            #expect(page.html.contains("Two coffees") && page.html.contains("$10.99") && page.html.contains(">shop<"))
            for field in ["number", "expiry", "cvc", "name", "csrf"] { #expect(page.html.contains("name=\"\(field)\"")) }
            #expect(try page.formToken().firstMatch(of: /^[0-9]{10}\.[0-9a-f]{64}$/) != nil)
            let policy = page.headers[.contentSecurityPolicy] ?? ""
            // Forms go to the page itself (which sends the buyer on), and the policy names the
            // merchant's return address's origin beside it.
            #expect(policy.contains("form-action 'self' https://shop.example;"))
            #expect(policy.contains("frame-ancestors 'none'") && policy.contains("script-src 'self'") && policy.contains("default-src 'none'"))
            #expect(page.forward == nil)
            #expect(page.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
            #expect(page.headers[.cacheControl] == "no-store")
            #expect(page.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
            let cookie = page.headers[.setCookie] ?? ""
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/pay"))
            // The script carries the brand table the vault detects with.
            let script = try await client.visit(.get, "/pay/assets/checkout.js")
            #expect(script.status == .ok && script.html.hasPrefix("const BRANDS = [") && script.html.contains("\"American Express\""))
            #expect(try await client.visit(.get, "/pay/assets/checkout.css").status == .ok)
        }
    }

    @Test(
        "a good card pays: 303 to the page, which sends the buyer on to the return URL with the merchant's query kept; no card number anywhere",
        arguments: StoreKind.allCases
    )
    func pays(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let id = try await client.openSession(fixture, Self.sessionBody)
            let page = try await client.visit(.get, "/pay/\(id)")
            let paid = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: try page.card("4242 4242 4242 4242"))
            #expect(paid.status == .seeOther && paid.headers[.location] == "/pay/\(id)?sent=1")
            #expect(paid.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
            let session = try await client.session(fixture, id)
            #expect(session.status == "complete" && session.attempts == 1)
            #expect(session.transaction?.status == "succeeded" && session.transaction?.card.last4 == "4242")
            // Back on the page: how it ended, and no form; sent on at once from the form only.
            #expect(try await client.visit(.get, "/pay/\(id)", cookie: page.cookie).forward == nil)
            // Another browser that knows the address is not sent on, even with ?sent=1.
            #expect(try await client.visit(.get, "/pay/\(id)?sent=1").forward == nil)
            let after = try await client.visit(.get, "/pay/\(id)?sent=1", cookie: PageVisit.cookies(page, paid))
            #expect(after.html.contains("Paid") && after.html.contains("ending 4242") && !after.html.contains("name=\"number\""))
            #expect(after.html.contains("href=\"https://shop.example/done?order=17&amp;checkout_session=\(id)&amp;status=complete\""))
            #expect(after.forward == "https://shop.example/done?order=17&checkout_session=\(id)&status=complete")
            // Once: the mark is cleared by that answer (a reload stays on the page).
            #expect(after.headers[.setCookie]?.contains("capture_sent=\(id)") == true && after.headers[.setCookie]?.contains("Max-Age=0") == true)
            // Paying again is refused.
            let again = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: try page.card("4242424242424242"))
            #expect(again.status == .conflict && !again.html.contains("name=\"number\""))
            #expect(!fixture.logs.all.joined().contains("4242424242424242") && !fixture.logs.all.joined().contains("4242 4242"))
        }
    }

    @Test("each refused field says why in the validator's words; nothing is tried; the CVC is never shown back", arguments: StoreKind.allCases)
    func fieldErrors(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let id = try await client.openSession(fixture, Self.sessionBody)
            let page = try await client.visit(.get, "/pay/\(id)")
            let (number, expiry, cvc) = ("4242 4242 4242 4241", "13/30", "12")
            let refused = try await client.visit(
                .post,
                "/pay/\(id)",
                cookie: page.cookie,
                form: ["number": number, "expiry": expiry, "cvc": cvc, "name": "Alex Morgan", "csrf": try page.formToken()]
            )
            #expect(refused.status == .unprocessableContent)
            let expected = CardValidator().validate(number: number, expiry: expiry, cvc: cvc)
            #expect(expected.errors.count == 3)
            for error in expected.errors {
                #expect(refused.html.contains(htmlEscaped(CheckoutPageRoutes.sentence(error.message))), "\(error.code)")
            }
            #expect(refused.html.contains("value=\"\(number)\"") && refused.html.contains("value=\"Alex Morgan\""))
            #expect(!refused.html.contains("value=\"12\""))
            // An empty form: every required field asks for itself.
            let empty = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: ["csrf": try page.formToken()])
            #expect(empty.status == .unprocessableContent && empty.html.contains("Enter the card number."))
            #expect(try await client.session(fixture, id).attempts == 0)
        }
    }

    @Test("a brand the session does not take is refused by name, before any attempt", arguments: StoreKind.allCases)
    func allowedBrands(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let id = try await client.openSession(fixture, Self.sessionBody)
            let page = try await client.visit(.get, "/pay/\(id)")
            let refused = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: try page.card("5555 5555 5555 4444"))
            #expect(refused.status == .unprocessableContent)
            #expect(refused.html.contains("Mastercard cards are not taken here; use Visa."))
            #expect(try await client.session(fixture, id).attempts == 0)
        }
    }

    @Test("a decline says so and keeps the session open for another card; five tries end the form", arguments: StoreKind.allCases)
    func declines(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let id = try await client.openSession(fixture, Self.sessionBody)
            let page = try await client.visit(.get, "/pay/\(id)")
            let declined = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: try page.card("4000 0000 0000 0002"))
            #expect(declined.status.code == 402)
            #expect(declined.html.contains("Your card was declined; try another card. 4 tries left."))
            #expect(declined.html.contains("name=\"number\"") && !declined.html.contains("4000 0000 0000 0002"))
            #expect(try await client.session(fixture, id).status == "open")
            for _ in 0..<4 {
                _ = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: try declined.card("4000000000000002"))
            }
            let spent = try await client.visit(.get, "/pay/\(id)", cookie: page.cookie)
            #expect(spent.html.contains("tried 5 times") && !spent.html.contains("name=\"number\"") && spent.html.contains("/cancel"))
            let session = try await client.session(fixture, id)
            #expect(session.attempts == 5 && session.status == "open")
        }
    }

    @Test("a form without this browser's token is refused and charges nothing", arguments: StoreKind.allCases)
    func forgery(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let id = try await client.openSession(fixture, Self.sessionBody)
            let otherID = try await client.openSession(fixture, Self.sessionBody)
            let page = try await client.visit(.get, "/pay/\(id)")
            let otherPage = try await client.visit(.get, "/pay/\(otherID)")
            let card = try page.card("4242424242424242")
            // No cookie (a cross-site post), another session's token, a made-up token.
            let noCookie = try await client.visit(.post, "/pay/\(id)", form: card)
            let otherToken = try await client.visit(.post, "/pay/\(id)", cookie: otherPage.cookie, form: try otherPage.card("4242424242424242"))
            var madeUp = card
            madeUp["csrf"] = String(repeating: "ab", count: 32)
            let wrong = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: madeUp)
            for refused in [noCookie, otherToken, wrong] {
                #expect(refused.status == .forbidden && refused.html.contains("nothing was charged"))
                #expect(!refused.html.contains("4242424242424242") && !refused.html.contains("4242 4242"), "the card is not written back")
            }
            let cancel = try await client.visit(.post, "/pay/\(id)/cancel", form: ["csrf": try page.formToken()])
            #expect(cancel.status == .forbidden)
            let session = try await client.session(fixture, id)
            #expect(session.attempts == 0 && session.status == "open")
        }
    }

    @Test("Cancel ends the session, and the page sends the buyer to the cancel URL; it then takes no payment", arguments: StoreKind.allCases)
    func cancel(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let id = try await client.openSession(fixture, Self.sessionBody)
            let page = try await client.visit(.get, "/pay/\(id)")
            let canceled = try await client.visit(.post, "/pay/\(id)/cancel", cookie: page.cookie, form: ["csrf": try page.formToken()])
            #expect(canceled.status == .seeOther && canceled.headers[.location] == "/pay/\(id)?sent=1")
            #expect(try await client.session(fixture, id).status == "canceled")
            let after = try await client.visit(.get, "/pay/\(id)?sent=1", cookie: PageVisit.cookies(page, canceled))
            #expect(after.html.contains("Payment canceled") && !after.html.contains("name=\"number\""))
            #expect(after.forward == "https://shop.example/cart?checkout_session=\(id)&status=canceled")
            let paid = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: try page.card("4242424242424242"))
            #expect(paid.status == .conflict)
        }
    }

    @Test("return_format ifcc answers with Inner Fence's parameters, the tax inside the amount", arguments: StoreKind.allCases)
    func innerFence(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let body = #"""
                {"amount": 1099, "currency": "USD", "return_url": "https://pos.example/back?ref=A%26B", "return_format": "ifcc", "tax_rate": "8.5"}
                """#
            let id = try await client.openSession(fixture, body)
            let page = try await client.visit(.get, "/pay/\(id)")
            #expect(page.html.contains("Includes $0.86 (8.5 %) tax"))
            let paid = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: try page.card("4242424242424242"))
            #expect(paid.headers[.location] == "/pay/\(id)?sent=1")
            let location = try #require(
                try await client.visit(.get, "/pay/\(id)?sent=1", cookie: PageVisit.cookies(page, paid)).forward.flatMap { URLComponents(string: $0) }
            )
            let items = Dictionary(uniqueKeysWithValues: (location.queryItems ?? []).map { ($0.name, $0.value ?? "") })
            let transaction = try #require(try await client.session(fixture, id).transaction)
            #expect(location.host == "pos.example" && location.path == "/back")
            #expect(
                items == [
                    "ref": "A&B",
                    "ifcc_responseType": "approved",
                    "ifcc_transactionId": transaction.id,
                    "ifcc_amount": "10.99",
                    "ifcc_currency": "USD",
                    "ifcc_redactedCardNumber": "XXXXXXXXXXXX4242",
                    "ifcc_cardType": "Visa",
                    "ifcc_taxAmount": "0.86",
                    "ifcc_taxRate": "8.5",
                ]
            )
        }
    }

    @Test(
        "an app's own scheme as return URL (Inner Fence): the page hands the buyer back to the app, redacting the card's real length",
        arguments: StoreKind.allCases
    )
    func appReturn(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let body = #"""
                {"amount": 1099, "currency": "USD", "return_url": "com-your-app://action/?record_id=123", "return_format": "ifcc",
                 "cancel_url": "com-your-app://cancel"}
                """#
            let id = try await client.openSession(fixture, body)
            let page = try await client.visit(.get, "/pay/\(id)")
            let policy = page.headers[.contentSecurityPolicy] ?? ""
            #expect(policy.contains("form-action 'self' com-your-app:;"), "\(policy)")
            // A 19-digit Visa: 15 X before its last four, not the 12 of a usual Visa.
            let paid = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: try page.card("4111111111111111003"))
            #expect(paid.headers[.location] == "/pay/\(id)?sent=1")
            let forward = try #require(try await client.visit(.get, "/pay/\(id)?sent=1", cookie: PageVisit.cookies(page, paid)).forward)
            let location = try #require(URLComponents(string: forward))
            let items = Dictionary(uniqueKeysWithValues: (location.queryItems ?? []).map { ($0.name, $0.value ?? "") })
            #expect(location.scheme == "com-your-app" && location.host == "action" && items["record_id"] == "123")
            #expect(items["ifcc_responseType"] == "approved" && items["ifcc_redactedCardNumber"] == "XXXXXXXXXXXXXXX1003")
            #expect(items["ifcc_cardType"] == "Visa" && !forward.contains("4111111111111111003"))

            // Cancel goes to the app's cancel address, with Inner Fence's cancelled.
            let other = try await client.openSession(fixture, body)
            let otherPage = try await client.visit(.get, "/pay/\(other)")
            let ended = try await client.visit(.post, "/pay/\(other)/cancel", cookie: otherPage.cookie, form: ["csrf": try otherPage.formToken()])
            let canceled = try await client.visit(.get, "/pay/\(other)?sent=1", cookie: PageVisit.cookies(otherPage, ended)).forward
            #expect(canceled == "com-your-app://cancel?ifcc_responseType=cancelled")

            // Schemes a browser would run or read locally are refused, by name: not of the
            // form openapi.json gives a return URL (400), said in the vault's words.
            for (url, scheme) in [
                ("javascript:alert(1)", "javascript"), ("JavaScript://x/%0Aalert(1)", "javascript"), ("data:text/html,hi", "data"),
                ("vbscript:x", "vbscript"), ("file:///etc/passwd", "file"), ("blob:https://shop.example/1", "blob"), ("about:blank", "about"),
            ] {
                let (status, data) = try await client.send(
                    .post,
                    "/v1/checkout_sessions",
                    key: fixture.shop.secret,
                    json: #"{"amount": 1099, "currency": "USD", "return_url": "\#(url)"}"#
                )
                let error = try decode(ErrorBody.self, data).error
                #expect(
                    status == .badRequest && error.code == "parameter_invalid" && error.param == "return_url"
                        && error.message.contains("a \(scheme): address"),
                    "\(url)"
                )
            }
            for url in ["1app://x", "my app://x", "com-your-app:", "noscheme"] {
                let (status, _) = try await client.send(
                    .post,
                    "/v1/checkout_sessions",
                    key: fixture.shop.secret,
                    json: #"{"amount": 1099, "currency": "USD", "return_url": "\#(url)"}"#
                )
                #expect(status == .badRequest, "\(url)")
            }
        }
    }

    @Test(
        "a photo fills the form: the scanner's reading comes back for the buyer to check, only with the page's token",
        arguments: StoreKind.allCases
    )
    func photo(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        let card = try ScanAPITests.manifest("t012-flat-visa.png")
        let pan = try #require(card.pan)
        let image = try ScanAPITests.bytes("Fixtures/cards/\(card.file)")
        try await fixture.application(scanner: ScanAPITests.scanner.get()).test(.router) { client in
            let id = try await client.openSession(fixture, Self.sessionBody)
            let page = try await client.visit(.get, "/pay/\(id)")
            #expect(page.html.contains("id=\"photo\""))
            func upload(
                token: String?,
                cookie: String?,
                type: String = "image/png",
                image: [UInt8] = image
            ) async throws -> (HTTPResponse.Status, [String: Any]) {
                var headers = HTTPFields()
                headers[.contentType] = type
                if let token { headers[HTTPField.Name("X-Capture-Form-Token")!] = token }
                if let cookie { headers[.cookie] = cookie }
                return try await client.execute(uri: "/pay/\(id)/scan", method: .post, headers: headers, body: ByteBuffer(bytes: image)) { response in
                    (response.status, (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))) as? [String: Any] ?? [:])
                }
            }
            let (status, read) = try await upload(token: try page.formToken(), cookie: page.cookie)
            #expect(status == .ok)
            let number = try #require(read["number"] as? String)
            #expect(number.filter(\.isNumber) == pan && number.contains(" "))
            if let month = card.month, let year = card.year {
                #expect(read["expiry"] as? String == String(format: "%02d/%02d", month, year % 100))
            }
            #expect((read["message"] as? String)?.hasPrefix("Check the number") == true)
            // A phone's photo: JPEG, stored on its side with the EXIF turn, reads the same.
            let upright = try ImageDecoder().decode(image)
            let phone = try JPEGEncoder.encode(upright.turned(quarterTurns: 3), quality: 85, orientation: 6)
            let (phoneStatus, phoneRead) = try await upload(token: try page.formToken(), cookie: page.cookie, type: "image/jpeg", image: phone)
            #expect(phoneStatus == .ok)
            #expect((phoneRead["number"] as? String)?.filter(\.isNumber) == pan)
            // Without the page's token or cookie, or not an image: refused, nothing read.
            #expect(try await upload(token: nil, cookie: page.cookie).0 == .forbidden)
            #expect(try await upload(token: try page.formToken(), cookie: nil).0 == .forbidden)
            #expect(try await upload(token: try page.formToken(), cookie: page.cookie, type: "text/plain").0 == .unsupportedMediaType)
            // Both photos were read and counted as the page's scans (the refused ones were not read).
            let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            #expect(metrics.contains(#"scans_total{outcome="found",source="page"} 2"#), "\(metrics)")
            // Reading a photo is not an attempt, and the number is in no log line.
            #expect(try await client.session(fixture, id).attempts == 0)
            #expect(!fixture.logs.all.joined().contains(pan))
        }
    }

    @Test("an unknown page is a 404 page that echoes nothing it was sent", arguments: StoreKind.allCases)
    func unknown(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            for path in ["/pay/cs_nothere", "/pay/4242424242424242"] {
                let page = try await client.visit(.get, path)
                #expect(page.status == .notFound && page.html.contains("not valid"))
                #expect(!page.html.contains("nothere") && !page.html.contains("4242424242424242"))
            }
            #expect(!fixture.logs.all.joined().contains("4242424242424242"))
        }
    }
}

/// What the page answered.
struct PageVisit {
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let html: String

    /// The form's cookie, as the browser would send it back.
    var cookie: String? {
        headers[.setCookie]?.split(separator: ";").first.map(String.init)
    }

    /// Where the page sends the buyer at once (its refresh), unescaped.
    var forward: String? {
        html.firstMatch(of: /<meta http-equiv="refresh" content="0; url=([^"]*)">/).map { String($0.1).replacingOccurrences(of: "&amp;", with: "&") }
    }

    /// The cookies these answers set, as the browser sends them back together.
    static func cookies(_ visits: PageVisit...) -> String {
        visits.compactMap(\.cookie).joined(separator: "; ")
    }

    /// The hidden anti-forgery token.
    func formToken() throws -> String {
        let match = try #require(html.firstMatch(of: /name="csrf" value="([0-9a-f.]*)"/))
        return String(match.1)
    }

    /// A filled-in form for a card number, with this page's token.
    func card(_ number: String) throws -> [String: String] {
        ["number": number, "expiry": "12/30", "cvc": "123", "name": "Alex Morgan", "csrf": try formToken()]
    }
}

func htmlEscaped(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "'", with: "&#39;").replacingOccurrences(of: "\"", with: "&quot;")
}

struct SessionBody: Decodable {
    struct Payment: Decodable {
        struct Card: Decodable {
            let brand: String
            let last4: String
        }
        let id: String
        let status: String
        let card: Card
    }
    let id: String
    let status: String
    let attempts: Int
    let transaction: Payment?
}

extension TestClientProtocol {
    /// Opens a session with the shop's secret key; its id.
    func openSession(_ fixture: APIFixture, _ body: String) async throws -> String {
        let (status, data) = try await send(.post, "/v1/checkout_sessions", key: fixture.shop.secret, json: body)
        try #require(status == .created)
        return try decode(SessionBody.self, data).id
    }

    func session(_ fixture: APIFixture, _ id: String) async throws -> SessionBody {
        let (_, data) = try await send(.get, "/v1/checkout_sessions/\(id)", key: fixture.shop.secret)
        return try decode(SessionBody.self, data)
    }

    /// A page request as a browser sends it: a form URL-encoded, the cookie it was given.
    func visit(_ method: HTTPRequest.Method, _ uri: String, cookie: String? = nil, form: [String: String]? = nil) async throws -> PageVisit {
        var headers = HTTPFields()
        if let cookie { headers[.cookie] = cookie }
        var body: ByteBuffer?
        if let form {
            headers[.contentType] = "application/x-www-form-urlencoded"
            var components = URLComponents()
            components.queryItems = form.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
            let encoded = (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
            body = ByteBuffer(string: encoded)
        }
        return try await execute(uri: uri, method: method, headers: headers, body: body) { response in
            PageVisit(status: response.status, headers: response.headers, html: String(buffer: response.body))
        }
    }
}
