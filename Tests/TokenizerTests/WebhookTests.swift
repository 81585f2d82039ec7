import CardCapture
import Foundation
import GRDB
import StoreTestSupport
import Testing

@testable import Payments
@testable import Tokenizer

/// Writes small stand-ins for the API's objects: enough to tell which object an event carries.
struct TestObjects: WebhookObjectWriter {
    func transaction(_ record: TransactionRecord) -> [UInt8] {
        Array(#"{"id":"\#(record.id)","status":"\#(record.status)","last4":"\#(record.last4)"}"#.utf8)
    }

    func refund(_ record: RefundRecord) -> [UInt8] {
        Array(#"{"id":"\#(record.id)","amount":\#(record.amount)}"#.utf8)
    }

    func checkoutSession(_ record: CheckoutSessionRecord, transaction: TransactionRecord?) -> [UInt8] {
        Array(#"{"id":"\#(record.id)","status":"\#(record.status)","transaction":"\#(transaction?.id ?? "none")"}"#.utf8)
    }
}

/// An event's body as a receiver reads it.
struct EventBody: Decodable {
    struct Data: Decodable {
        let object: [String: JSONValue]
    }
    let id: String
    let object: String
    let type: String
    let created: Int
    let data: Data
}

/// A string or a number of a flat JSON object.
enum JSONValue: Decodable, Equatable {
    case text(String)
    case number(Int)

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int.self) { self = .number(number) } else { self = .text(try container.decode(String.self)) }
    }
}

@Suite("Webhooks: events written with their change, signed, leased, retried for a day")
struct WebhookTests {
    static func payments(_ fixture: VaultFixture) -> Payments {
        payments(fixture.vault)
    }

    static func payments(_ vault: Vault) -> Payments {
        var payments = Payments(vault: vault, webhookObjects: TestObjects())
        payments.webhookAddresses = .names(WebhookAddressPolicyTests.names)
        return payments
    }

    /// Leases whatever is due now and reads each body.
    static func due(_ payments: Payments) async throws -> [(DueWebhookDelivery, EventBody)] {
        try await payments.dueWebhookDeliveries(limit: 100, lease: .seconds(7200)).map { due in
            (due, try JSONDecoder().decode(EventBody.self, from: Data(due.body)))
        }
    }

    static func charge(_ payments: Payments, _ number: String, merchantID: String) async throws -> TransactionRecord {
        let card = CardInput(number: number, expMonth: 12, expYear: 2030, cvc: "123", holder: nil)
        let token = try await payments.vault.createToken(for: merchantID, card: card)
        return try await payments.charge(.init(token: token.id, amount: 1999, currency: "EUR"), merchantID: merchantID)
    }

    @Test("Capture-Signature is t=<seconds>,v1=HMAC-SHA256(secret, \"t.body\") in hex, as Python's hmac computes it")
    func signature() {
        let body = Array(#"{"id":"evt_1"}"#.utf8)
        let secret = "whsec_test0123456789abcdefghijkl"
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        let header = WebhookSignature.header(body: body, secret: secret, at: at)
        // python3: hmac.new(secret, b"1800000000." + body, hashlib.sha256).hexdigest()
        #expect(header == "t=1800000000,v1=5d7ae38ee70cf492cfa6f9456c5505e28c0aee40834f5ee8e4d664b4fcf4937e")
        // Checked on the receiving side by CaptureClient's WebhookVerifier (CaptureClientTests).
    }

    @Test(
        "a settled charge and a refund write their events for the endpoints that take them, and no delivery for a merchant without endpoints",
        arguments: StoreKind.allCases
    )
    func chargeEvents(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Self.payments(fixture)
        let all = try await payments.createWebhookEndpoint(url: "https://shop.example/hooks", events: nil, merchantID: fixture.merchantID)
        let declines = try await payments.createWebhookEndpoint(
            url: "https://shop.example/declines",
            events: ["transaction.declined"],
            merchantID: fixture.merchantID
        )
        #expect(all.secret.hasPrefix("whsec_") && all.secret.count >= 28)
        #expect(all.endpoint.id.hasPrefix("we_") && all.endpoint.events == nil && declines.endpoint.events == ["transaction.declined"])

        let paid = try await Self.charge(payments, "4242424242424242", merchantID: fixture.merchantID)
        var due = try await Self.due(payments)
        #expect(due.count == 1)
        #expect(due.first?.0.delivery.endpointID == all.endpoint.id && due.first?.1.type == "transaction.succeeded")
        #expect(due.first?.1.data.object["id"] == .text(paid.id) && due.first?.1.data.object["last4"] == .text("4242"))
        #expect(due.first?.1.id.hasPrefix("evt_") == true && due.first?.1.object == "event")
        #expect(due.first?.1.created == Int(fixture.clock.now.timeIntervalSince1970))

        let declined = try await Self.charge(payments, "4000000000000002", merchantID: fixture.merchantID)
        due = try await Self.due(payments)
        #expect(Set(due.map(\.0.delivery.endpointID)) == [all.endpoint.id, declines.endpoint.id])
        #expect(due.allSatisfy { $0.1.type == "transaction.declined" && $0.1.data.object["id"] == .text(declined.id) })
        #expect(due[0].1.id == due[1].1.id, "one event, two deliveries")

        let (refund, _) = try await payments.refund(paid.id, amount: 500, merchantID: fixture.merchantID)
        due = try await Self.due(payments)
        #expect(due.map(\.1.type) == ["refund.created"] && due.first?.1.data.object["id"] == .text(refund.id))

        // Another merchant with no endpoints: its charges' events are kept, and sent nowhere.
        let other = try await fixture.vault.createMerchant(named: "other").merchant.id
        _ = try await Self.charge(payments, "4242424242424242", merchantID: other)
        #expect(try await Self.due(payments).isEmpty)
        #expect(try await payments.events(merchantID: other).items.map(\.type) == ["transaction.succeeded"])
        // Payments without an object writer (no server to send from) write no events either.
        _ = try await Self.charge(Payments(vault: fixture.vault), "4242424242424242", merchantID: fixture.merchantID)
        #expect(try await Self.due(payments).isEmpty)
    }

    @Test(
        "a checkout session's end writes checkout_session.completed (with its transaction's event), .expired or .canceled",
        arguments: StoreKind.allCases
    )
    func checkoutEvents(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Self.payments(fixture)
        _ = try await payments.createWebhookEndpoint(url: "https://shop.example/hooks", events: nil, merchantID: fixture.merchantID)
        let request = CheckoutSessionTests.request(expiresIn: 60)
        let paid = try await payments.createCheckoutSession(request, merchantID: fixture.merchantID)
        let card = CardInput(number: "4242424242424242", expMonth: 12, expYear: 2030, cvc: "123", holder: nil)
        guard case .paid(_, let transaction) = try await payments.payCheckoutSession(paid.id, card: card) else {
            Issue.record("the session was not paid")
            return
        }
        // Both are written by the write that settles the charge: one millisecond, so their ids
        // (time first, then chance) say nothing of their order.
        let due = try await Self.due(payments)
        #expect(due.map(\.1.type).sorted() == ["checkout_session.completed", "transaction.succeeded"])
        let completed = try #require(due.first { $0.1.type == "checkout_session.completed" }?.1.data.object)
        #expect(completed["transaction"] == .text(transaction.id) && completed["status"] == .text("complete"))

        let canceled = try await payments.createCheckoutSession(request, merchantID: fixture.merchantID)
        _ = try await payments.cancelCheckoutSession(canceled.id, merchantID: fixture.merchantID)
        let expiring = try await payments.createCheckoutSession(request, merchantID: fixture.merchantID)
        fixture.clock.advance(seconds: 61)
        _ = try await payments.expireCheckoutSessions()
        let ended = try await Self.due(payments).map { ($0.1.type, $0.1.data.object["id"]) }
        #expect(ended.count == 2)
        #expect(ended.contains { $0 == ("checkout_session.canceled", .text(canceled.id)) })
        #expect(ended.contains { $0 == ("checkout_session.expired", .text(expiring.id)) })
    }

    @Test(
        "a delivery is leased to one sender, tried again on the schedule after a failure, and done after a 2xx; every attempt is listed",
        arguments: StoreKind.allCases
    )
    func leaseAndRetry(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Self.payments(fixture)
        let endpoint = try await payments.createWebhookEndpoint(url: "https://shop.example/hooks", events: nil, merchantID: fixture.merchantID)
        _ = try await Self.charge(payments, "4242424242424242", merchantID: fixture.merchantID)
        let schedule = Payments.WebhookSchedule()
        // Another server's dispatcher on the same vault.
        let other = Self.payments(try await fixture.secondServer())
        let leased = try #require(try await Self.due(payments).first?.0)
        #expect(try await Self.due(other).isEmpty, "leased: a second sender gets nothing")
        #expect(try await Self.due(payments).isEmpty, "leased: a second sender gets nothing")
        // A sender that died holding it: once its lease lapses, another server takes it over.
        fixture.clock.advance(seconds: 7201)
        let first = try #require(try await Self.due(other).first?.0)
        // Issue 65: the attempt that died is on record (its outcome unknown) and counted; the
        // endpoint may have had it, so the schedule goes on from it.
        #expect(leased.delivery.attempts == 1)
        #expect(first.delivery.id == leased.delivery.id && first.delivery.attempts == 2)
        #expect(try payments.webhookSecret(of: first) == endpoint.secret)
        let start = fixture.clock.now
        let outcome = try await payments.recordWebhookAttempt(
            first,
            statusCode: 500,
            error: nil,
            startedAt: start,
            duration: .milliseconds(12),
            schedule: schedule
        )
        #expect(outcome == .retry(at: start.addingTimeInterval(60)))
        fixture.clock.advance(seconds: 59)
        #expect(try await Self.due(payments).isEmpty, "not due before its time")
        fixture.clock.advance(seconds: 2)
        guard let second = try await Self.due(payments).first?.0 else {
            Issue.record("the retry was not due")
            return
        }
        #expect(second.delivery.id == first.delivery.id && second.delivery.attempts == 3)
        let done = try await payments.recordWebhookAttempt(
            second,
            statusCode: 204,
            error: nil,
            startedAt: fixture.clock.now,
            duration: .milliseconds(8),
            schedule: schedule
        )
        #expect(done == .succeeded)
        fixture.clock.advance(seconds: 3600)
        #expect(try await Self.due(payments).isEmpty, "delivered: never sent again")

        let listed = try await payments.webhookDeliveries(endpoint: endpoint.endpoint.id, merchantID: fixture.merchantID)
        #expect(listed.items.count == 1 && !listed.hasMore)
        let delivery = try #require(listed.items.first)
        #expect(delivery.delivery.status == "succeeded" && delivery.delivery.attempts == 3 && delivery.delivery.nextAttemptAt == nil)
        #expect(delivery.attempts.map(\.number) == [1, 2, 3])
        #expect(delivery.attempts.map(\.statusCode) == [nil, 500, 204])
        #expect(delivery.attempts[0].error == WebhookAttemptRecord.unrecorded)
        #expect(delivery.attempts[1].error?.contains("500") == true && delivery.attempts[2].error == nil)
        #expect(delivery.attempts[1].durationMilliseconds == 12)
    }

    @Test(
        "deliveries leased and never sent are given back: due again at once, their attempt count and history as before; one taken over since is left as it is",
        arguments: StoreKind.allCases
    )
    func giveBack(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Self.payments(fixture)
        let endpoint = try await payments.createWebhookEndpoint(url: "https://shop.example/hooks", events: nil, merchantID: fixture.merchantID)
        for _ in 0..<2 {
            _ = try await Self.charge(payments, "4242424242424242", merchantID: fixture.merchantID)
            fixture.clock.advance(seconds: 1)
        }
        let leased = try await Self.due(payments).map(\.0)
        #expect(leased.count == 2 && leased.allSatisfy { $0.delivery.attempts == 1 })
        // Both leases lapse; another server takes over the older delivery.
        fixture.clock.advance(seconds: 7201)
        let other = Self.payments(try await fixture.secondServer())
        let takenOver = try #require(try await other.dueWebhookDeliveries(limit: 1, lease: .seconds(7200)).first)
        #expect(takenOver.delivery.id == leased[0].delivery.id && takenOver.delivery.attempts == 2)
        try await payments.releaseWebhookDeliveries(leased)

        let again = try await Self.due(payments).map(\.0)
        #expect(again.map(\.delivery.id) == [leased[1].delivery.id], "the one given back is due at once; the other is the other server's")
        #expect(again.first?.delivery.attempts == 1, "the attempt given back was not counted")
        let listed = try await payments.webhookDeliveries(endpoint: endpoint.endpoint.id, merchantID: fixture.merchantID).items
        let history = Dictionary(uniqueKeysWithValues: listed.map { ($0.delivery.id, $0.attempts.map(\.number)) })
        #expect(history[leased[1].delivery.id] == [1], "only the new lease's attempt")
        #expect(history[leased[0].delivery.id] == [1, 2], "the lease that lapsed stays on record, and the other server's")
    }

    @Test("attempts recorded at once are each written with their own outcome", arguments: StoreKind.allCases)
    func recordedTogether(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Self.payments(fixture)
        let endpoint = try await payments.createWebhookEndpoint(url: "https://shop.example/hooks", events: nil, merchantID: fixture.merchantID)
        for _ in 0..<9 {
            _ = try await Self.charge(payments, "4242424242424242", merchantID: fixture.merchantID)
        }
        let leased = try await Self.due(payments).map(\.0)
        #expect(leased.count == 9)
        let schedule = Payments.WebhookSchedule()
        let now = fixture.clock.now
        // Answered 204, 500, or not at all, by turns, all recorded at once.
        let answers: [Int?] = [204, 500, nil]
        // Tried again 30 s later (the stores keep times to the millisecond).
        func retriesIn30s(_ delivery: WebhookDeliveryRecord) -> Bool {
            delivery.nextAttemptAt.map { abs($0.timeIntervalSince(now) - 30) < 0.002 } == true
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, due) in leased.enumerated() {
                group.addTask {
                    let status = answers[index % 3]
                    try await payments.recordWebhookAttempt(
                        due,
                        statusCode: status,
                        error: status == nil ? "no answer within 10 s" : nil,
                        startedAt: now,
                        duration: .milliseconds(index + 1),
                        schedule: schedule
                    )
                }
            }
            try await group.waitForAll()
        }
        let listed = try await payments.webhookDeliveries(endpoint: endpoint.endpoint.id, merchantID: fixture.merchantID).items
        let byID = Dictionary(uniqueKeysWithValues: listed.map { ($0.delivery.id, $0) })
        for (index, due) in leased.enumerated() {
            let delivery = try #require(byID[due.delivery.id])
            let attempt = try #require(delivery.attempts.first)
            #expect(delivery.attempts.count == 1 && attempt.durationMilliseconds == index + 1)
            switch answers[index % 3] {
            case 204?:
                #expect(delivery.delivery.status == "succeeded" && delivery.delivery.nextAttemptAt == nil)
                #expect(attempt.statusCode == 204 && attempt.error == nil)
            case 500?:
                #expect(delivery.delivery.status == "pending" && retriesIn30s(delivery.delivery))
                #expect(attempt.statusCode == 500 && attempt.error?.contains("500") == true)
            default:
                #expect(delivery.delivery.status == "pending" && retriesIn30s(delivery.delivery))
                #expect(attempt.statusCode == nil && attempt.error == "no answer within 10 s")
            }
        }
        #expect(try await Self.due(payments).isEmpty, "every lease ended: the retries wait for their time")
    }

    @Test(
        "a lease gives no endpoint more than its share of senders, counting those already on their way; the oldest go first",
        arguments: StoreKind.allCases
    )
    func sharePerEndpoint(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Self.payments(fixture)
        let slow = try await payments.createWebhookEndpoint(url: "https://slow.example/hooks", events: nil, merchantID: fixture.merchantID)
        let quick = try await payments.createWebhookEndpoint(url: "https://quick.example/hooks", events: nil, merchantID: fixture.merchantID)
        var charges: [String] = []
        for _ in 0..<5 {
            charges.append(try await Self.charge(payments, "4242424242424242", merchantID: fixture.merchantID).id)
            fixture.clock.advance(seconds: 1)
        }
        func lease(sending: [String: Int]) async throws -> [(endpoint: String, transaction: String?)] {
            try await payments.dueWebhookDeliveries(limit: 100, lease: .seconds(60), perEndpoint: 2, sending: sending).map { due in
                let event = try JSONDecoder().decode(EventBody.self, from: Data(due.body))
                return (due.delivery.endpointID, event.data.object["id"].flatMap { if case .text(let id) = $0 { id } else { nil } })
            }
        }
        // One delivery to the slow endpoint is still on its way: it gets one more, the quick one two.
        let first = try await lease(sending: [slow.endpoint.id: 1])
        #expect(first.filter { $0.endpoint == slow.endpoint.id }.map(\.transaction) == [charges[0]])
        #expect(first.filter { $0.endpoint == quick.endpoint.id }.map(\.transaction) == [charges[0], charges[1]])
        // Both at their share: nothing, though more are due.
        #expect(try await lease(sending: [slow.endpoint.id: 2, quick.endpoint.id: 2]).isEmpty)
        // The quick endpoint's two are done: its next two, oldest first.
        let second = try await lease(sending: [slow.endpoint.id: 2])
        #expect(second.map(\.endpoint) == [quick.endpoint.id, quick.endpoint.id])
        #expect(second.map(\.transaction) == [charges[2], charges[3]])
    }

    @Test(
        "an event and its change commit together: when the event cannot be written, the refund is not recorded either",
        arguments: StoreKind.allCases
    )
    func oneTransaction(store: StoreKind) async throws {
        struct Broken: WebhookObjectWriter {
            struct Failure: Error {}
            func transaction(_ record: TransactionRecord) -> [UInt8] { TestObjects().transaction(record) }
            func refund(_ record: RefundRecord) throws -> [UInt8] { throw Failure() }
            func checkoutSession(_ record: CheckoutSessionRecord, transaction: TransactionRecord?) -> [UInt8] { [] }
        }
        let fixture = try await VaultFixture(store)
        let broken = Payments(vault: fixture.vault, webhookObjects: Broken())
        _ = try await broken.createWebhookEndpoint(url: "https://shop.example/hooks", events: nil, merchantID: fixture.merchantID)
        let paid = try await Self.charge(broken, "4242424242424242", merchantID: fixture.merchantID)
        let error = await #expect(throws: VaultError.self) { try await broken.refund(paid.id, amount: 500, merchantID: fixture.merchantID) }
        #expect(error?.code == .storage)
        #expect(try await broken.transaction(paid.id, merchantID: fixture.merchantID).refundedAmount == 0)
        #expect(try await Self.due(broken).map(\.1.type) == ["transaction.succeeded"])
    }

    @Test("retries wait 30 s, doubling to an hour, and end a day after the event")
    func schedule() {
        let schedule = Payments.WebhookSchedule()
        let event = Date(timeIntervalSince1970: 1_800_000_000)
        var at = event
        var waits: [TimeInterval] = []
        for number in 1... {
            guard case .retry(let next) = schedule.afterFailure(number, at: at, eventCreatedAt: event) else { break }
            waits.append(next.timeIntervalSince(at))
            at = next
        }
        #expect(Array(waits.prefix(8)) == [30, 60, 120, 240, 480, 960, 1920, 3600])
        #expect(waits.dropFirst(7).allSatisfy { $0 == 3600 })
        #expect(at <= event.addingTimeInterval(86_400) && at > event.addingTimeInterval(86_400 - 3600))
        #expect(waits.count == 29)
    }

    @Test("a deleted endpoint's pending deliveries are canceled; its id is then unknown", arguments: StoreKind.allCases)
    func deleteEndpoint(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Self.payments(fixture)
        let endpoint = try await payments.createWebhookEndpoint(url: "https://shop.example/hooks", events: ["*"], merchantID: fixture.merchantID)
        #expect(endpoint.endpoint.events == nil, "[\"*\"] is every type")
        let starred = try await payments.createWebhookEndpoint(
            url: "https://shop.example/all",
            events: ["refund.created", "*"],
            merchantID: fixture.merchantID
        )
        #expect(starred.endpoint.events == nil, "a list holding \"*\" is every type, as openapi.json's enum of items says")
        // Beside "*", an item that is no type is still refused: the enum of items holds for each.
        let unknown = await #expect(throws: VaultError.self) {
            try await payments.createWebhookEndpoint(url: "https://shop.example/x", events: ["*", "refund.made"], merchantID: fixture.merchantID)
        }
        #expect(unknown?.code == .invalidRequest && unknown?.param == "events")
        try await payments.deleteWebhookEndpoint(starred.endpoint.id, merchantID: fixture.merchantID)
        _ = try await Self.charge(payments, "4242424242424242", merchantID: fixture.merchantID)
        try await payments.deleteWebhookEndpoint(endpoint.endpoint.id, merchantID: fixture.merchantID)
        #expect(try await Self.due(payments).isEmpty)
        #expect(try await payments.webhookEndpoints(merchantID: fixture.merchantID).isEmpty)
        let again = await #expect(throws: VaultError.self) {
            try await payments.deleteWebhookEndpoint(endpoint.endpoint.id, merchantID: fixture.merchantID)
        }
        #expect(again?.code == .webhookEndpointNotFound)
        let listed = await #expect(throws: VaultError.self) {
            try await payments.webhookDeliveries(endpoint: endpoint.endpoint.id, merchantID: fixture.merchantID)
        }
        #expect(listed?.code == .webhookEndpointNotFound)
    }

    @Test(
        "endpoint URLs that are taken, kept as a browser reads them: a port, an IPv6 address, an international name either way, a query",
        arguments: [
            ("https://shop.example:8443/hooks", "https://shop.example:8443/hooks"),
            ("http://[2606:4700:0:0::1111]:9000/hooks", "http://[2606:4700::1111]:9000/hooks"),
            ("https://xn--r8jz45g.jp/hooks", "https://xn--r8jz45g.jp/hooks"),
            ("https://例え.jp/hooks", "https://xn--r8jz45g.jp/hooks"),
            ("https://Shop.Example:443/h?k=v", "https://shop.example/h?k=v"),
        ]
    )
    func endpointTaken(url: String, kept: String) async throws {
        let fixture = try await VaultFixture()
        let created = try await Self.payments(fixture).createWebhookEndpoint(url: url, events: nil, merchantID: fixture.merchantID)
        #expect(created.endpoint.url == kept)
    }

    @Test("an endpoint needs an http(s) URL and known event types, and a merchant may have 16", arguments: StoreKind.allCases)
    func endpointChecks(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Self.payments(fixture)
        let cases: [(String, [String]?, String)] = [
            ("ftp://shop.example/hooks", nil, "url"),
            ("/hooks", nil, "url"),
            // A port past 65535 once stopped the server inside the HTTP client.
            ("http://127.0.0.1:65536/hooks", nil, "url"),
            ("http://[::1]:70000/hooks", nil, "url"),
            ("https://shop.example:0/hooks", nil, "url"),
            ("https://user:secret@shop.example/hooks", nil, "url"),
            ("https://shop.example/hooks", [], "events"),
            ("https://shop.example/hooks", ["transaction.succeeded", "charge.succeeded"], "events"),
        ]
        for (url, events, param) in cases {
            let error = await #expect(throws: VaultError.self) {
                try await payments.createWebhookEndpoint(url: url, events: events, merchantID: fixture.merchantID)
            }
            // A URL the vault cannot use is invalid_address (422); a list out of form is 400.
            #expect(error?.code == (param == "url" ? .invalidAddress : .invalidRequest) && error?.param == param)
        }
        for index in 0..<16 {
            _ = try await payments.createWebhookEndpoint(url: "https://shop.example/\(index)", events: nil, merchantID: fixture.merchantID)
        }
        let full = await #expect(throws: VaultError.self) {
            try await payments.createWebhookEndpoint(url: "https://shop.example/17", events: nil, merchantID: fixture.merchantID)
        }
        #expect(full?.code == .webhookEndpointLimit && full?.message.contains("at most 16") == true)
    }

    @Test(
        "finished deliveries and events go after the retention period (an event no endpoint took as well); pending ones stay",
        arguments: StoreKind.allCases
    )
    func retention(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Self.payments(fixture)
        // Before any endpoint: its event is kept all the same, for GET /v1/events.
        let early = try await Self.charge(payments, "4242424242424242", merchantID: fixture.merchantID)
        #expect(try await payments.events(merchantID: fixture.merchantID).items.map(\.type) == ["transaction.succeeded"])
        let endpoint = try await payments.createWebhookEndpoint(url: "https://shop.example/hooks", events: nil, merchantID: fixture.merchantID)
        _ = try await Self.charge(payments, "4242424242424242", merchantID: fixture.merchantID)
        _ = try await Self.charge(payments, "4000000000000002", merchantID: fixture.merchantID)
        let due = try await Self.due(payments)
        #expect(due.count == 2)
        // One delivered; the other failed once and is still being tried.
        for (index, (delivery, _)) in due.enumerated() {
            try await payments.recordWebhookAttempt(
                delivery,
                statusCode: index == 0 ? 200 : 503,
                error: nil,
                startedAt: fixture.clock.now,
                duration: .milliseconds(5),
                schedule: Payments.WebhookSchedule(window: .seconds(86_400 * 60))
            )
        }
        fixture.clock.advance(seconds: 29 * 86_400)
        #expect(try await payments.deleteWebhookRecords(olderThanDays: 30) == (0, 0))
        fixture.clock.advance(seconds: 2 * 86_400)
        #expect(try await payments.deleteWebhookRecords(olderThanDays: 30) == (1, 2))
        #expect(early.status == "succeeded")
        let left = try await payments.webhookDeliveries(endpoint: endpoint.endpoint.id, merchantID: fixture.merchantID).items
        #expect(left.map(\.delivery.id) == [due[1].0.delivery.id] && left.first?.delivery.status == "pending")
        // The delivered one's event went with it; the pending one's stays.
        let events = try await fixture.vault.store.strings(sql: "SELECT id FROM webhook_event")
        #expect(events == [due[1].0.delivery.eventID])
    }

    @Test("the signing secret is in the vault's files only sealed")
    func secretSealed() async throws {
        try await withFileStore { store, path in
            let fixture = try await VaultFixture(store: store)
            let payments = Self.payments(fixture)
            let endpoint = try await payments.createWebhookEndpoint(url: "https://shop.example/hooks", events: nil, merchantID: fixture.merchantID)
            for file in [path, path + "-wal"] {
                let bytes = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
                #expect(bytes.range(of: Data(endpoint.secret.utf8)) == nil, "\(file) holds the secret in the clear")
            }
        }
    }

    @Test(
        "every event is kept: listed newest first, by type and time, a page at a time, and read by id as it was sent",
        arguments: StoreKind.allCases
    )
    func eventsListed(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Self.payments(fixture)
        let merchant = fixture.merchantID
        let start = fixture.clock.now
        let paid = try await Self.charge(payments, "4242424242424242", merchantID: merchant)
        fixture.clock.advance(seconds: 10)
        let declined = try await Self.charge(payments, "4000000000000002", merchantID: merchant)
        fixture.clock.advance(seconds: 10)
        _ = try await payments.refund(paid.id, amount: 100, merchantID: merchant)

        let all = try await payments.events(merchantID: merchant)
        #expect(all.items.map(\.type) == ["refund.created", "transaction.declined", "transaction.succeeded"] && !all.hasMore)
        let declines = try await payments.events(merchantID: merchant, filter: WebhookEventFilter(type: "transaction.declined"))
        let body = try JSONDecoder().decode(EventBody.self, from: Data(try #require(declines.items.first).body))
        #expect(declines.items.count == 1 && body.data.object["id"] == .text(declined.id) && body.type == "transaction.declined")
        // The range: from the second charge's second, before the refund's.
        let range = WebhookEventFilter(createdFrom: start.addingTimeInterval(10), createdBefore: start.addingTimeInterval(20))
        #expect(try await payments.events(merchantID: merchant, filter: range).items.map(\.type) == ["transaction.declined"])
        // Pages of one.
        let first = try await payments.events(merchantID: merchant, limit: 1)
        let second = try await payments.events(merchantID: merchant, startingAfter: first.items[0].id, limit: 1)
        #expect(first.hasMore && second.hasMore && second.items.map(\.type) == ["transaction.declined"])
        // By id: the very bytes an endpoint is sent; another merchant's is not found.
        let read = try await payments.event(first.items[0].id, merchantID: merchant)
        #expect(read == first.items[0] && read.body == all.items[0].body)
        let other = try await fixture.vault.createMerchant(named: "other").merchant.id
        let hidden = await #expect(throws: VaultError.self) { try await payments.event(read.id, merchantID: other) }
        #expect(hidden?.code == .eventNotFound)
        let unknown = await #expect(throws: VaultError.self) {
            try await payments.events(merchantID: merchant, filter: WebhookEventFilter(type: "transaction.paid"))
        }
        #expect(unknown?.code == .invalidRequest && unknown?.param == "type")
    }

    @Test(
        "at once, on two servers: 24 endpoints added keep 16; 8 resends of an event make one delivery an endpoint",
        arguments: StoreKind.allCases
    )
    func concurrentEndpoints(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let servers = [Self.payments(fixture), Self.payments(try await fixture.secondServer())]
        let merchant = fixture.merchantID
        let added = await withTaskGroup(of: String.self) { group in
            for index in 0..<24 {
                group.addTask {
                    do {
                        _ = try await servers[index % 2].createWebhookEndpoint(
                            url: "https://shop.example/\(index)",
                            events: nil,
                            merchantID: merchant
                        )
                        return "added"
                    } catch let error as VaultError where error.code == .webhookEndpointLimit {
                        return "full"
                    } catch {
                        return "\(error)"
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(added.filter { $0 == "added" }.count == 16 && added.filter { $0 == "full" }.count == 8, "\(added)")
        #expect(try await servers[0].webhookEndpoints(merchantID: merchant).count == 16)
        // The charge's event goes to each of the 16 once; then 8 resends at once add nothing.
        _ = try await Self.charge(servers[0], "4242424242424242", merchantID: merchant)
        let event = try #require(try await servers[0].events(merchantID: merchant).items.first)
        for (due, _) in try await Self.due(servers[0]) {
            _ = try await servers[0].recordWebhookAttempt(
                due,
                statusCode: 204,
                error: nil,
                startedAt: fixture.clock.now,
                duration: .milliseconds(1),
                schedule: Payments.WebhookSchedule()
            )
        }
        let resent = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<8 { group.addTask { try await servers[index % 2].resendEvent(event.id, merchantID: merchant).count } }
            return try await group.reduce(0, +)
        }
        #expect(resent == 16, "the resends made \(resent) deliveries for 16 endpoints")
        #expect(try await Self.due(servers[1]).count == 16)
    }

    @Test(
        "an event is sent again, same body, to endpoints made after it; one still pending is not sent twice",
        arguments: StoreKind.allCases
    )
    func resend(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Self.payments(fixture)
        let merchant = fixture.merchantID
        _ = try await Self.charge(payments, "4242424242424242", merchantID: merchant)
        let event = try #require(try await payments.events(merchantID: merchant).items.first)
        #expect(try await payments.resendEvent(event.id, merchantID: merchant).isEmpty, "no endpoint yet")
        let endpoint = try await payments.createWebhookEndpoint(url: "https://shop.example/hooks", events: nil, merchantID: merchant)
        _ = try await payments.createWebhookEndpoint(url: "https://shop.example/refunds", events: ["refund.created"], merchantID: merchant)
        let made = try await payments.resendEvent(event.id, merchantID: merchant)
        #expect(made.map(\.endpointID) == [endpoint.endpoint.id] && made.first?.status == "pending" && made.first?.eventID == event.id)
        #expect(try await payments.resendEvent(event.id, merchantID: merchant).isEmpty, "pending already")
        let due = try await Self.due(payments)
        #expect(due.count == 1 && due.first?.0.body == event.body)
        try await payments.recordWebhookAttempt(
            try #require(due.first?.0),
            statusCode: 204,
            error: nil,
            startedAt: fixture.clock.now,
            duration: .milliseconds(3),
            schedule: Payments.WebhookSchedule()
        )
        // Delivered: it may be sent again, as a new delivery beside the first.
        #expect(try await payments.resendEvent(event.id, merchantID: merchant).count == 1)
        #expect(try await payments.webhookDeliveries(endpoint: endpoint.endpoint.id, merchantID: merchant).items.count == 2)
        let unknown = await #expect(throws: VaultError.self) { try await payments.resendEvent("evt_nothing", merchantID: merchant) }
        #expect(unknown?.code == .eventNotFound)
    }

    @Test(
        "a finished delivery is tried again as a new one; a pending one is refused, and the queue shows it",
        arguments: StoreKind.allCases
    )
    func retryDelivery(store: StoreKind) async throws {
        let fixture = try await VaultFixture(store)
        let payments = Self.payments(fixture)
        let merchant = fixture.merchantID
        let endpoint = try await payments.createWebhookEndpoint(url: "https://shop.example/hooks", events: nil, merchantID: merchant)
        let other = try await payments.createWebhookEndpoint(url: "https://shop.example/other", events: ["refund.created"], merchantID: merchant)
        _ = try await Self.charge(payments, "4242424242424242", merchantID: merchant)
        #expect(try await payments.webhookQueueState() == WebhookQueueState(pending: 1, oldestPendingCreatedAt: StoreDate.stored(fixture.clock.now)))
        let (due, _) = try #require(try await Self.due(payments).first)
        let pending = await #expect(throws: VaultError.self) {
            try await payments.retryWebhookDelivery(due.delivery.id, endpoint: endpoint.endpoint.id, merchantID: merchant)
        }
        #expect(pending?.code == .webhookDeliveryPending)
        // It fails for good (no time left in its window).
        let outcome = try await payments.recordWebhookAttempt(
            due,
            statusCode: 500,
            error: nil,
            startedAt: fixture.clock.now,
            duration: .milliseconds(3),
            schedule: Payments.WebhookSchedule(window: .seconds(0))
        )
        #expect(outcome == .failed)
        #expect(try await payments.webhookQueueState().pending == 0)
        fixture.clock.advance(seconds: 3 * 86_400)
        let wrong = await #expect(throws: VaultError.self) {
            try await payments.retryWebhookDelivery(due.delivery.id, endpoint: other.endpoint.id, merchantID: merchant)
        }
        #expect(wrong?.code == .webhookDeliveryNotFound)
        let again = try await payments.retryWebhookDelivery(due.delivery.id, endpoint: endpoint.endpoint.id, merchantID: merchant)
        #expect(again.id != due.delivery.id && again.eventID == due.delivery.eventID && again.status == "pending" && again.attempts == 0)
        let resent = try #require(try await Self.due(payments).first)
        #expect(resent.0.delivery.id == again.id && resent.0.body == due.body)
        let twice = await #expect(throws: VaultError.self) {
            try await payments.retryWebhookDelivery(due.delivery.id, endpoint: endpoint.endpoint.id, merchantID: merchant)
        }
        #expect(twice?.code == .webhookDeliveryPending)
    }
}
