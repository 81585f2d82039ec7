import CardCapture
import Foundation
import Payments
import StoreTestSupport
import Testing
import Tokenizer

@Suite("Checkout sessions: open until paid, canceled or out of time")
struct CheckoutSessionTests {
    static func request(expiresIn: Int = 1800) -> Payments.CheckoutRequest {
        Payments.CheckoutRequest(
            amount: 1099,
            currency: "usd",
            description: "Two coffees",
            returnURL: "https://shop.example/done?order=17",
            allowedBrands: ["visa", "mastercard", "visa"],
            expiresIn: expiresIn,
            taxRate: "8.5",
            metadata: ["order": "17"]
        )
    }

    static func wrong(_ change: (inout Payments.CheckoutRequest) -> Void) -> Payments.CheckoutRequest {
        var request = request()
        change(&request)
        return request
    }

    @Test("a new session is open, keeps what it was asked, and reads back the same", arguments: StoreKind.allCases)
    func create(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Payments(vault: fixture.vault)
        let session = try await payments.createCheckoutSession(Self.request(), merchantID: fixture.merchantID)
        #expect(session.id.hasPrefix("cs_"))
        #expect(session.status == "open" && session.attempts == 0 && session.transactionID == nil)
        #expect(session.currency == "USD")
        #expect(session.allowedBrands == ["visa", "mastercard"])
        #expect(session.expiresAt == fixture.clock.now.addingTimeInterval(1800))
        let read = try await payments.checkoutSession(session.id, merchantID: fixture.merchantID)
        #expect(read == session)
        // Another merchant's session reads as not found.
        let other = try await fixture.vault.createMerchant(named: "other")
        let error = await #expect(throws: VaultError.self) { try await payments.checkoutSession(session.id, merchantID: other.merchant.id) }
        #expect(error?.code == .checkoutSessionNotFound)
    }

    @Test("out of time a session reads expired at once, the sweep ends it for good, and it can no longer be canceled", arguments: StoreKind.allCases)
    func expiry(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Payments(vault: fixture.vault)
        let short = try await payments.createCheckoutSession(Self.request(expiresIn: 10), merchantID: fixture.merchantID)
        let long = try await payments.createCheckoutSession(Self.request(), merchantID: fixture.merchantID)
        fixture.clock.advance(seconds: 9)
        #expect(try await payments.expireCheckoutSessions().isEmpty)
        fixture.clock.advance(seconds: 1)
        #expect(try await payments.checkoutSession(short.id, merchantID: fixture.merchantID).status == "expired")
        let swept = try await payments.expireCheckoutSessions()
        #expect(swept.map(\.id) == [short.id])
        #expect(swept.first?.endedAt == fixture.clock.now)
        #expect(try await payments.expireCheckoutSessions().isEmpty)
        let error = await #expect(throws: VaultError.self) { try await payments.cancelCheckoutSession(short.id, merchantID: fixture.merchantID) }
        #expect(error?.code == .checkoutSessionNotOpen)
        #expect(try await payments.checkoutSession(long.id, merchantID: fixture.merchantID).status == "open")
    }

    @Test("a canceled session stays canceled: a second cancel, or an expiry sweep, changes nothing", arguments: StoreKind.allCases)
    func cancel(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Payments(vault: fixture.vault)
        let session = try await payments.createCheckoutSession(Self.request(expiresIn: 10), merchantID: fixture.merchantID)
        let canceled = try await payments.cancelCheckoutSession(session.id, merchantID: fixture.merchantID)
        #expect(canceled.status == "canceled" && canceled.endedAt == fixture.clock.now)
        await #expect(throws: VaultError.self) { try await payments.cancelCheckoutSession(session.id, merchantID: fixture.merchantID) }
        fixture.clock.advance(seconds: 60)
        #expect(try await payments.expireCheckoutSessions().isEmpty)
        #expect(try await payments.checkoutSession(session.id, merchantID: fixture.merchantID).status == "canceled")
    }

    @Test(
        "a session asked wrongly is refused, naming the parameter",
        arguments: [
            // Any URI scheme is an address an app may have registered, but not one a browser
            // would run or read locally.
            ("return_url", wrong { $0.returnURL = "data:text/html,<b>paid</b>" }),
            ("return_url", wrong { $0.returnURL = "file:///etc/passwd" }),
            ("return_url", wrong { $0.returnURL = "/done" }),
            ("return_url", wrong { $0.returnURL = "https://" + String(repeating: "a", count: 2100) + ".example" }),
            ("return_url", wrong { $0.returnURL = "https://shop.example:99999/done" }),
            // A host the page's security policy could not name: the redirect after paying would be blocked.
            ("return_url", wrong { $0.returnURL = "https://a.example%2fevil.example/done" }),
            ("cancel_url", wrong { $0.cancelURL = "javascript:alert(1)" }),
            ("cancel_url", wrong { $0.cancelURL = "https://shop.example:0/back" }),
            ("cancel_url", wrong { $0.cancelURL = "https://buyer:secret@shop.example/back" }),
            ("allowed_brands", wrong { $0.allowedBrands = ["visa", "bogus"] }),
            ("allowed_brands", wrong { $0.allowedBrands = [] }),
            ("expires_in", wrong { $0.expiresIn = 9 }),
            ("expires_in", wrong { $0.expiresIn = 86_401 }),
            ("return_format", wrong { $0.returnFormat = "xml" }),
            ("tax_rate", wrong { $0.taxRate = "abc" }),
            ("tax_rate", wrong { $0.taxRate = "100.001" }),
            ("tax_rate", wrong { $0.taxRate = "8.5555" }),
            ("tax_rate", wrong { $0.taxRate = "-1" }),
            ("tax_rate", wrong { $0.taxRate = "8." }),
            // openapi.json's pattern: one or two digits before the point (or 100).
            ("tax_rate", wrong { $0.taxRate = "008" }),
            ("client", wrong { $0.savePaymentMethod = true }),
            ("client", wrong { $0.client = "client_nobody" }),
            ("metadata", wrong { $0.metadata = Dictionary(uniqueKeysWithValues: (0..<51).map { ("k\($0)", "v") }) }),
            ("metadata", wrong { $0.metadata = ["k": String(repeating: "v", count: 501)] }),
            ("amount", wrong { $0.amount = 0 }),
            ("currency", wrong { $0.currency = "XYZ" }),
            ("description", wrong { $0.description = String(repeating: "d", count: 501) }),
            // Counted as JSON Schema counts: 251 letters with a combining accent are 502 code points.
            ("description", wrong { $0.description = String(repeating: "e\u{301}", count: 251) }),
            ("amount", wrong { $0.amount = 100_000_000_001 }),
        ] as [(String, Payments.CheckoutRequest)]
    )
    func refused(param: String, request: Payments.CheckoutRequest) async throws {
        let fixture = try await VaultFixture()
        let payments = Payments(vault: fixture.vault)
        let error = await #expect(throws: VaultError.self) { try await payments.createCheckoutSession(request, merchantID: fixture.merchantID) }
        // The amount's and currency's codes name their parameter themselves (the API adds it).
        let named =
            error?.param
            ?? [VaultError.Code.invalidAmount: "amount", .amountTooLarge: "amount", .invalidCurrency: "currency"][error?.code ?? .storage]
        #expect(named == param, "\(error?.message ?? "no error")")
        let page = try await payments.checkoutSessions(merchantID: fixture.merchantID)
        #expect(page.items.isEmpty, "a refused session was stored")
    }

    @Test("tax rates from 0 to 100 with up to three decimals are taken", arguments: ["0", "8.5", "19", "7.125", "100", "100.000"])
    func taxRates(rate: String) async throws {
        let fixture = try await VaultFixture()
        var request = Self.request()
        request.taxRate = rate
        let session = try await Payments(vault: fixture.vault).createCheckoutSession(request, merchantID: fixture.merchantID)
        #expect(session.taxRate == rate)
    }

    static func card(_ number: String) -> CardInput {
        CardInput(number: number, expMonth: 12, expYear: 2030, cvc: "123", holder: "ALEX MORGAN")
    }

    @Test("a decline leaves the session open for another card; a success completes it with its transaction, once", arguments: StoreKind.allCases)
    func pay(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Payments(vault: fixture.vault)
        let session = try await payments.createCheckoutSession(Self.request(), merchantID: fixture.merchantID)
        guard case .refused(let open, let declined) = try await payments.payCheckoutSession(session.id, card: Self.card("4000000000000002")) else {
            Issue.record("a declined card did not leave the session open")
            return
        }
        #expect(open.status == "open" && open.attempts == 1)
        #expect(declined.status == "declined" && declined.declineCode == "card_declined" && declined.amount == 1099)
        guard case .paid(let complete, let paid) = try await payments.payCheckoutSession(session.id, card: Self.card("4242424242424242")) else {
            Issue.record("a good card did not pay the session")
            return
        }
        #expect(complete.status == "complete" && complete.attempts == 2 && complete.transactionID == paid.id)
        #expect(paid.status == "succeeded" && paid.amount == 1099 && paid.currency == "USD" && paid.description == "Two coffees")
        // Both charges name the session they were made on, as answered and as stored.
        #expect(declined.checkoutSessionID == session.id && paid.checkoutSessionID == session.id)
        #expect(try await payments.transaction(paid.id, merchantID: fixture.merchantID) == paid)
        let again = await #expect(throws: VaultError.self) { try await payments.payCheckoutSession(session.id, card: Self.card("4242424242424242")) }
        #expect(again?.code == .checkoutSessionNotOpen)
        let page = try await payments.transactions(merchantID: fixture.merchantID, client: nil)
        #expect(page.items.filter { $0.status == "succeeded" }.count == 1)
    }

    @Test(
        "a brand the session does not take, or a wrong card, is refused with its reason, counts as an attempt, and frees the session",
        arguments: StoreKind.allCases
    )
    func refusedCards(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Payments(vault: fixture.vault)
        var request = Self.request()
        request.allowedBrands = ["visa"]
        let session = try await payments.createCheckoutSession(request, merchantID: fixture.merchantID)
        let brand = await #expect(throws: VaultError.self) { try await payments.payCheckoutSession(session.id, card: Self.card("5555555555554444")) }
        #expect(brand?.param == "number" && brand?.message.contains("Mastercard cards are not taken here; use Visa") == true)
        await #expect(throws: CardValidationError.self) { try await payments.payCheckoutSession(session.id, card: Self.card("4242424242424241")) }
        let read = try await payments.checkoutSession(session.id, merchantID: fixture.merchantID)
        #expect(read.attempts == 2 && read.status == "open")
        guard case .paid = try await payments.payCheckoutSession(session.id, card: Self.card("4242424242424242")) else {
            Issue.record("the session was not freed for a good card")
            return
        }
    }

    @Test("after five attempts the page takes no more; an expired session takes none", arguments: StoreKind.allCases)
    func limits(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Payments(vault: fixture.vault)
        let session = try await payments.createCheckoutSession(Self.request(), merchantID: fixture.merchantID)
        for _ in 0..<Payments.checkoutAttemptLimit {
            _ = try await payments.payCheckoutSession(session.id, card: Self.card("4000000000009995"))
        }
        let used = await #expect(throws: VaultError.self) { try await payments.payCheckoutSession(session.id, card: Self.card("4242424242424242")) }
        #expect(used?.code == .checkoutSessionNotOpen && used?.message.contains("5 times") == true)
        let short = try await payments.createCheckoutSession(Self.request(expiresIn: 10), merchantID: fixture.merchantID)
        fixture.clock.advance(seconds: 10)
        let expired = await #expect(throws: VaultError.self) { try await payments.payCheckoutSession(short.id, card: Self.card("4242424242424242")) }
        #expect(expired?.message == "this payment is expired")
    }

    @Test("ten buyers paying one session at once, through two servers: exactly one payment is taken", arguments: StoreKind.allCases)
    func concurrentPayments(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Payments(vault: fixture.vault)
        let other = Payments(vault: try await fixture.secondServer())
        let session = try await payments.createCheckoutSession(Self.request(), merchantID: fixture.merchantID)
        let paid = await withTaskGroup(of: Bool.self) { group in
            for buyer in 0..<10 {
                group.addTask {
                    let server = buyer.isMultiple(of: 2) ? payments : other
                    if case .paid = try? await server.payCheckoutSession(session.id, card: Self.card("4242424242424242")) { return true }
                    return false
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(paid == 1)
        let page = try await payments.transactions(merchantID: fixture.merchantID, client: nil)
        #expect(page.items.count == 1)
        #expect(try await payments.checkoutSession(session.id, merchantID: fixture.merchantID).status == "complete")
    }
}
