import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Payments
import StoreTestSupport
import Testing
import Tokenizer

@testable import CaptureServer

@Suite("HTTP API: checkout sessions")
struct CheckoutAPITests {
    struct Session: Decodable {
        let id: String
        let object: String
        let url: String
        let status: String
        let amount: Int
        let currency: String
        let return_url: String
        let allowed_brands: [String]?
        let return_format: String
        let tax_rate: String?
        let metadata: [String: String]
        let attempts: Int
        let created_at: String
        let expires_at: String
    }

    struct SessionList: Decodable {
        let data: [Session]
        let has_more: Bool
    }

    static let body = #"""
        {"amount": 1099, "currency": "USD", "description": "Two coffees", "return_url": "https://shop.example/done?order=17",
         "allowed_brands": ["visa"], "tax_rate": "8.5", "metadata": {"order": "17"}}
        """#

    @Test("a secret key opens a session whose url is the hosted page; a publishable key is refused", arguments: StoreKind.allCases)
    func create(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let (refused, refusal) = try await client.send(.post, "/v1/checkout_sessions", key: fixture.shop.publishable, json: Self.body)
            #expect(refused == .forbidden)
            #expect(try decode(ErrorBody.self, refusal).error.code == "secret_key_required")
            let (status, data) = try await client.send(.post, "/v1/checkout_sessions", key: fixture.shop.secret, json: Self.body)
            #expect(status == .created)
            let session = try decode(Session.self, data)
            #expect(session.object == "checkout_session" && session.status == "open" && session.attempts == 0)
            #expect(session.url.hasSuffix("/pay/" + session.id) && session.url.hasPrefix("http"))
            #expect(session.allowed_brands == ["visa"] && session.tax_rate == "8.5" && session.metadata == ["order": "17"])
            #expect(session.return_format == "query")
            let (readStatus, read) = try await client.send(.get, "/v1/checkout_sessions/\(session.id)", key: fixture.shop.secret)
            #expect(readStatus == .ok)
            #expect(try decode(Session.self, read).id == session.id)
            // Another merchant's secret key does not see it.
            let (other, _) = try await client.send(.get, "/v1/checkout_sessions/\(session.id)", key: fixture.other.secret)
            #expect(other == .notFound)
        }
    }

    @Test("with --public-url the page's address is the public one", arguments: StoreKind.allCases)
    func publicURL(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        var api = CaptureAPI(vault: fixture.vault)
        api.publicURL = "https://pay.example.com"
        try await Application(router: api.buildRouter(), logger: fixture.logs.logger()).test(.router) { client in
            let (_, data) = try await client.send(.post, "/v1/checkout_sessions", key: fixture.shop.secret, json: Self.body)
            let session = try decode(Session.self, data)
            #expect(session.url == "https://pay.example.com/pay/\(session.id)")
        }
    }

    @Test("wrong bodies get 400 naming the parameter; a cancel ends the session once, then 409", arguments: StoreKind.allCases)
    func refusalsAndCancel(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let (missing, missingBody) = try await client.send(
                .post,
                "/v1/checkout_sessions",
                key: fixture.shop.secret,
                json: #"{"amount": 1099, "currency": "USD"}"#
            )
            #expect(missing == .badRequest)
            #expect(try decode(ErrorBody.self, missingBody).error.param == "return_url")
            let bad = #"{"amount": 1099, "currency": "USD", "return_url": "https://shop.example", "allowed_brands": ["visa", "nope"]}"#
            let (badStatus, badBody) = try await client.send(.post, "/v1/checkout_sessions", key: fixture.shop.secret, json: bad)
            #expect(badStatus == .badRequest)
            #expect(try decode(ErrorBody.self, badBody).error.param == "allowed_brands")
            // Wrong types in a list, or a list where an object belongs, are named with the list's index.
            for (json, param, says) in [
                (#""allowed_brands": ["visa", 7]"#, "allowed_brands[1]", "allowed_brands[1] must be a string"),
                (#""allowed_brands": "visa""#, "allowed_brands", "allowed_brands must be a list"),
                (#""metadata": ["order"]"#, "metadata", "metadata must be an object"),
            ] {
                let body = #"{"amount": 1099, "currency": "USD", "return_url": "https://shop.example", \#(json)}"#
                let (status, answer) = try await client.send(.post, "/v1/checkout_sessions", key: fixture.shop.secret, json: body)
                let error = try decode(ErrorBody.self, answer).error
                #expect(status == .badRequest && error.param == param && error.message == says, "\(error.message)")
            }
            let (_, data) = try await client.send(.post, "/v1/checkout_sessions", key: fixture.shop.secret, json: Self.body)
            let session = try decode(Session.self, data)
            let (canceled, canceledBody) = try await client.send(.post, "/v1/checkout_sessions/\(session.id)/cancel", key: fixture.shop.secret)
            #expect(canceled == .ok)
            #expect(try decode(Session.self, canceledBody).status == "canceled")
            let (again, againBody) = try await client.send(.post, "/v1/checkout_sessions/\(session.id)/cancel", key: fixture.shop.secret)
            #expect(again == .conflict)
            #expect(try decode(ErrorBody.self, againBody).error.code == "checkout_session_not_open")
            let (unknown, _) = try await client.send(.post, "/v1/checkout_sessions/cs_0000000000000000000000/cancel", key: fixture.shop.secret)
            #expect(unknown == .notFound)
            // An id that is no session id at all is a mistake in the request: 400, naming it.
            let (malformed, malformedBody) = try await client.send(.post, "/v1/checkout_sessions/cs_nothing/cancel", key: fixture.shop.secret)
            let refusal = try decode(ErrorBody.self, malformedBody).error
            #expect(malformed == .badRequest && refusal.code == "parameter_invalid" && refusal.param == "id")
        }
    }

    @Test("sessions list newest first in pages, each once", arguments: StoreKind.allCases)
    func paging(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            var made: [String] = []
            for _ in 0..<5 {
                let (_, data) = try await client.send(.post, "/v1/checkout_sessions", key: fixture.shop.secret, json: Self.body)
                made.append(try decode(Session.self, data).id)
            }
            var seen: [String] = []
            var after: String?
            var pages: [Bool] = []
            repeat {
                let uri = "/v1/checkout_sessions?limit=2" + (after.map { "&starting_after=\($0)" } ?? "")
                let (status, data) = try await client.send(.get, uri, key: fixture.shop.secret)
                #expect(status == .ok)
                let page = try decode(SessionList.self, data)
                seen += page.data.map(\.id)
                pages.append(page.has_more)
                after = page.has_more ? page.data.last?.id : nil
            } while after != nil && pages.count < 10
            #expect(pages == [true, true, false])
            #expect(seen == made.reversed())
            let (none, _) = try await client.send(.get, "/v1/checkout_sessions", key: fixture.other.secret)
            #expect(none == .ok)
        }
    }
}
