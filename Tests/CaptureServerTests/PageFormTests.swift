import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Payments
import StoreTestSupport
import Synchronization
import Testing
import Tokenizer

@testable import CaptureServer

/// The page's form cookie and token: issued by the server, prefixed over https, expiring; and
/// what the page tells the buyer before paying.
@Suite("Hosted page: form cookie, token lifetime, HSTS, saving the card")
struct PageFormTests {
    static let clientSessionBody = #"""
        {"amount": 1099, "currency": "USD", "return_url": "https://shop.example/done", "cancel_url": "https://shop.example/cart",
         "client": "CLIENT", "save_payment_method": true}
        """#

    @Test("a cookie value the client chose is not taken: the page issues its own, and a made-up one's form is refused", arguments: StoreKind.allCases)
    func issuedCookie(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        let payments = Payments(vault: fixture.vault, processor: SandboxProcessor())
        let issued = payments.newPageCookie().value
        #expect(payments.pageCookieNonce(issued) != nil)
        let chosen = String(repeating: "ab", count: 16)
        #expect(payments.pageCookieNonce(chosen) == nil)
        #expect(payments.pageCookieNonce(chosen + "." + String(repeating: "0", count: 64)) == nil)
        #expect(payments.pageCookieNonce(String(issued.dropLast()) + (issued.hasSuffix("0") ? "1" : "0")) == nil)
        try await fixture.application().test(.router) { client in
            let id = try await client.openSession(fixture, CheckoutPageTests.sessionBody)
            let page = try await client.visit(.get, "/pay/\(id)", cookie: "capture_pay=\(chosen)")
            let given = try #require(page.cookie)
            #expect(given.hasPrefix("capture_pay=") && given != "capture_pay=\(chosen)")
            // The page's token goes with the cookie it gave, not with the one sent.
            let forced = try await client.visit(.post, "/pay/\(id)", cookie: "capture_pay=\(chosen)", form: try page.card("4242424242424242"))
            #expect(forced.status == .forbidden)
            let paid = try await client.visit(.post, "/pay/\(id)", cookie: given, form: try page.card("4242424242424242"))
            #expect(paid.status == .seeOther)
        }
    }

    @Test(
        "a form older than an hour is refused as expired, charges nothing, and the page shown with it has a fresh one that pays",
        arguments: StoreKind.allCases
    )
    func formExpires(store: StoreKind) async throws {
        let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        let fixture = try await APIFixture(store, now: { now.withLock { $0 } })
        try await fixture.application().test(.router) { client in
            // A session open for a day: the form ends before it does.
            let day = CheckoutPageTests.sessionBody.replacingOccurrences(of: #""amount": 1099,"#, with: #""amount": 1099, "expires_in": 86400,"#)
            let id = try await client.openSession(fixture, day)
            let page = try await client.visit(.get, "/pay/\(id)")
            now.withLock { $0 = $0.addingTimeInterval(59 * 60) }
            let early = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: try page.card("4000 0000 0000 0002"))
            #expect(early.status.code == 402, "declined, so the form was taken at 59 minutes")
            now.withLock { $0 = $0.addingTimeInterval(2 * 60) }
            let late = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: try page.card("4242424242424242"))
            #expect(late.status == .forbidden && late.html.contains("This form had expired"))
            #expect(try await client.session(fixture, id).attempts == 1)
            let paid = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: try late.card("4242424242424242"))
            #expect(paid.status == .seeOther)
            #expect(try await client.session(fixture, id).status == "complete")
        }
    }

    @Test("over https the cookie is __Host- (Secure, Path=/) and every answer carries HSTS; over http neither", arguments: StoreKind.allCases)
    func https(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application(publicURL: "https://pay.example.com").test(.router) { client in
            let id = try await client.openSession(fixture, CheckoutPageTests.sessionBody)
            let page = try await client.visit(.get, "/pay/\(id)")
            let cookie = page.headers[.setCookie] ?? ""
            // The attributes come in no fixed order.
            let attributes = Set(cookie.split(separator: ";").dropFirst().map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
            #expect(cookie.hasPrefix("__Host-capture_pay=") && attributes.contains("secure") && attributes.contains("path=/"), "\(cookie)")
            #expect(!attributes.contains { $0.hasPrefix("domain") })
            for answer in [
                page, try await client.visit(.get, "/healthz"), try await client.visit(.get, "/pay/cs_missing"),
                try await client.visit(.get, "/nowhere"),
            ] {
                #expect(answer.headers[HTTPField.Name("Strict-Transport-Security")!] == "max-age=31536000", "\(answer.status)")
            }
            let paid = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: try page.card("4242424242424242"))
            #expect(paid.status == .seeOther)
            // The plain name is not the cookie over https.
            let plain = try #require(page.cookie).replacingOccurrences(of: "__Host-capture_pay=", with: "capture_pay=")
            let other = try await client.openSession(fixture, CheckoutPageTests.sessionBody)
            let otherPage = try await client.visit(.get, "/pay/\(other)", cookie: page.cookie)
            #expect(try await client.visit(.post, "/pay/\(other)", cookie: plain, form: try otherPage.card("4242424242424242")).status == .forbidden)
        }
        try await fixture.application().test(.router) { client in
            let id = try await client.openSession(fixture, CheckoutPageTests.sessionBody)
            let page = try await client.visit(.get, "/pay/\(id)")
            #expect(page.cookie?.hasPrefix("capture_pay=") == true && !(page.headers[.setCookie] ?? "").contains("Secure"))
            #expect(page.headers[HTTPField.Name("Strict-Transport-Security")!] == nil)
        }
    }

    @Test("a session that saves the card says so above the Pay button; one that does not, does not", arguments: StoreKind.allCases)
    func savingSaid(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let (status, data) = try await client.send(.post, "/v1/clients", key: fixture.shop.secret, json: #"{"email": "buyer@example.com"}"#)
            try #require(status == .created)
            let clientID = try #require((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["id"] as? String)
            let saving = try await client.openSession(fixture, Self.clientSessionBody.replacingOccurrences(of: "CLIENT", with: clientID))
            let page = try await client.visit(.get, "/pay/\(saving)")
            #expect(page.html.contains(#"id="saving""#) && page.html.contains("shop will keep this card, encrypted, to charge it again later"))
            let plain = try await client.openSession(fixture, CheckoutPageTests.sessionBody)
            #expect(!(try await client.visit(.get, "/pay/\(plain)")).html.contains(#"id="saving""#))
        }
    }
}
