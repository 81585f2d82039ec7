import Crypto
import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import StoreTestSupport
import Testing

@testable import Payments
@testable import Tokenizer

struct TransactionBody: Decodable {
    let id: String
    let status: String
    let amount: Int
    let currency: String
    let amount_refunded: Int
    let client: String?
    let payment_method: String?
    let decline_code: String?
    let card: TokenBody.Card
}

struct ListBody<Item: Decodable>: Decodable {
    let data: [Item]
    let has_more: Bool
}

struct IDBody: Decodable {
    let id: String
}

extension TestClientProtocol {
    func token(_ fixture: APIFixture, number: String = "4242424242424242", extra: String = "") async throws -> String {
        let json = #"{"number": "\#(number)", "exp_month": 12, "exp_year": 2030, "cvc": "123"\#(extra)}"#
        let (status, body) = try await send(.post, "/v1/tokens", key: fixture.shop.publishable, json: json)
        #expect(status == .created)
        return try decode(IDBody.self, body).id
    }

    /// POST /v1/transactions with the shop's secret key.
    func charge(_ fixture: APIFixture, _ json: String) async throws -> (HTTPResponse.Status, Data) {
        try await send(.post, "/v1/transactions", key: fixture.shop.secret, json: json)
    }

    func post(_ uri: String, key: String, json: String, idempotencyKey: String) async throws -> (HTTPResponse.Status, Data, Bool) {
        try await post(uri, key: key, body: Array(json.utf8), type: "application/json", idempotencyKey: idempotencyKey)
    }

    /// A POST with an Idempotency-Key: the status, the body, and whether it was a replay.
    func post(_ uri: String, key: String, body: [UInt8], type: String, idempotencyKey: String) async throws -> (HTTPResponse.Status, Data, Bool) {
        var headers = HTTPFields()
        headers[.authorization] = "Bearer \(key)"
        headers[.contentType] = type
        headers[HTTPField.Name("Idempotency-Key")!] = idempotencyKey
        return try await execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(bytes: body)) { response in
            (response.status, Data(response.body.readableBytesView), response.headers[HTTPField.Name("Idempotent-Replayed")!] == "true")
        }
    }
}

@Suite("HTTP API: transactions, saved cards, refunds, idempotency")
struct PaymentAPITests {
    @Test(
        "the sandbox's outcomes follow the test numbers; a decline is a transaction with its code",
        arguments: [
            ("4242424242424242", "succeeded", nil),
            ("4000000000000002", "declined", "card_declined"),
            ("4000000000009995", "declined", "insufficient_funds"),
            ("4000000000000069", "declined", "expired_card"),
            ("4000000000000127", "declined", "incorrect_cvc"),
            ("4000000000000119", "failed", "processing_error"),
        ] as [(String, String, String?)]
    )
    func sandbox(_ number: String, _ status: String, _ code: String?) async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            let token = try await client.token(fixture, number: number)
            let (answer, body) = try await client.charge(fixture, #"{"token": "\#(token)", "amount": 1999, "currency": "EUR"}"#)
            #expect(answer == .created)
            let transaction = try decode(TransactionBody.self, body)
            #expect(transaction.status == status && transaction.decline_code == code)
            #expect(transaction.amount == 1999 && transaction.currency == "EUR" && transaction.card.last4 == String(number.suffix(4)))
            #expect(!String(decoding: body, as: UTF8.self).contains(number))
            // Spent: a second charge is token_already_used (409).
            let (again, error) = try await client.charge(fixture, #"{"token": "\#(token)", "amount": 1999, "currency": "EUR"}"#)
            #expect(again == .conflict)
            #expect(try decode(ErrorBody.self, error).error.code == "token_already_used")
        }
    }

    @Test("only a secret key charges; a publishable key is 403", arguments: StoreKind.allCases)
    func secretOnly(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let token = try await client.token(fixture)
            let json = #"{"token": "\#(token)", "amount": 100, "currency": "USD"}"#
            #expect(try await client.send(.post, "/v1/transactions", key: fixture.shop.publishable, json: json).0 == .forbidden)
            #expect(try await client.send(.post, "/v1/transactions", key: fixture.other.secret, json: json).0 == .notFound)
            #expect(try await client.send(.post, "/v1/clients", key: fixture.shop.publishable, json: "{}").0 == .forbidden)
            #expect(try await client.send(.post, "/v1/transactions", key: fixture.shop.secret, json: json).0 == .created)
        }
    }

    @Test(
        "lists page: limit, has_more and starting_after walk every transaction and saved card once; bad cursors are clear errors",
        arguments: StoreKind.allCases
    )
    func paging(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let (_, clientBody) = try await client.send(.post, "/v1/clients", key: fixture.shop.secret, json: "{}")
            let clientID = try decode(IDBody.self, clientBody).id
            var made: [String] = []
            for number in ["4242424242424242", "5555555555554444", "5200828282828210", "6011111111111117", "4000056655665556"] {
                let token = try await client.token(fixture, number: number)
                let json = #"{"token": "\#(token)", "amount": 100, "currency": "EUR", "client": "\#(clientID)", "save_payment_method": true}"#
                made.append(try decode(TransactionBody.self, try await client.charge(fixture, json).1).id)
            }
            for path in ["/v1/transactions?limit=2", "/v1/clients/\(clientID)/payment_methods?limit=2"] {
                var seen: [String] = []
                var pages: [Bool] = []
                var uri = path
                while pages.count < 5 {
                    let (status, body) = try await client.send(.get, uri, key: fixture.shop.secret)
                    #expect(status == .ok, "\(uri)")
                    let page = try decode(ListBody<IDBody>.self, body)
                    seen += page.data.map(\.id)
                    pages.append(page.has_more)
                    guard page.has_more, let last = page.data.last else { break }
                    uri = path + "&starting_after=" + last.id
                }
                #expect(pages == [true, true, false], "\(path)")
                #expect(seen.count == 5 && Set(seen).count == 5, "\(path)")
                if path.hasPrefix("/v1/transactions") { #expect(seen == made.reversed(), "newest first") }
            }
            let (_, all) = try await client.send(.get, "/v1/transactions", key: fixture.shop.secret)
            #expect(try decode(ListBody<IDBody>.self, all).has_more == false)
            for (uri, param) in [
                ("/v1/transactions?starting_after=tran_unknown", "starting_after"),
                ("/v1/transactions?starting_after=", "starting_after"),
                ("/v1/transactions?limit=1001", "limit"),
                ("/v1/clients/\(clientID)/payment_methods?starting_after=pm_unknown", "starting_after"),
            ] {
                let (status, body) = try await client.send(.get, uri, key: fixture.shop.secret)
                #expect(status == .badRequest || status == .notFound, "\(uri)")
                #expect(try decode(ErrorBody.self, body).error.param == param, "\(uri)")
            }
            // Another merchant's transaction is no cursor.
            let (elsewhere, _) = try await client.send(.get, "/v1/transactions?starting_after=\(made[0])", key: fixture.other.secret)
            #expect(elsewhere == .notFound)
        }
    }

    @Test("a saved card: one payment method per card and client, charged again without a token, deleted", arguments: StoreKind.allCases)
    func savedCards(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let (_, clientBody) = try await client.send(.post, "/v1/clients", key: fixture.shop.secret, json: #"{"email": "pat@example.com"}"#)
            let clientID = try decode(IDBody.self, clientBody).id
            for _ in 0..<2 {
                let token = try await client.token(fixture)
                let (status, body) = try await client.charge(
                    fixture,
                    #"{"token": "\#(token)", "amount": 500, "currency": "EUR", "client": "\#(clientID)", "save_payment_method": true}"#
                )
                #expect(status == .created)
                #expect(try decode(TransactionBody.self, body).payment_method?.hasPrefix("pm_") == true)
            }
            let (_, methodsBody) = try await client.send(.get, "/v1/clients/\(clientID)/payment_methods", key: fixture.shop.secret)
            let methods = try decode(ListBody<IDBody>.self, methodsBody).data
            #expect(methods.count == 1)
            let method = try #require(methods.first).id
            let (charged, chargeBody) = try await client.charge(fixture, #"{"payment_method": "\#(method)", "amount": 700, "currency": "EUR"}"#)
            #expect(charged == .created)
            let transaction = try decode(TransactionBody.self, chargeBody)
            #expect(transaction.status == "succeeded" && transaction.client == clientID && transaction.payment_method == method)
            let (_, listBody) = try await client.send(.get, "/v1/transactions?client=\(clientID)", key: fixture.shop.secret)
            #expect(try decode(ListBody<TransactionBody>.self, listBody).data.map(\.amount).sorted() == [500, 500, 700])
            #expect(try await client.send(.get, "/v1/clients/\(clientID)/payment_methods", key: fixture.other.secret).0 == .notFound)
            #expect(try await client.send(.delete, "/v1/payment_methods/\(method)", key: fixture.shop.secret).0 == .ok)
            #expect(try await client.send(.delete, "/v1/payment_methods/\(method)", key: fixture.shop.secret).0 == .notFound)
            let (gone, _) = try await client.charge(fixture, #"{"payment_method": "\#(method)", "amount": 700, "currency": "EUR"}"#)
            #expect(gone == .notFound)
        }
    }

    @Test("refunds, full and partial, never beyond the captured amount; a declined charge has nothing to refund", arguments: StoreKind.allCases)
    func refunds(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let token = try await client.token(fixture)
            let (_, body) = try await client.charge(fixture, #"{"token": "\#(token)", "amount": 1000, "currency": "JPY"}"#)
            let id = try decode(TransactionBody.self, body).id
            #expect(try await client.send(.post, "/v1/transactions/\(id)/refunds", key: fixture.shop.secret, json: #"{"amount": 400}"#).0 == .created)
            let (over, overBody) = try await client.send(.post, "/v1/transactions/\(id)/refunds", key: fixture.shop.secret, json: #"{"amount": 601}"#)
            #expect(over == .unprocessableContent)
            #expect(try decode(ErrorBody.self, overBody).error.code == "refund_exceeds_amount")
            // No amount: the rest.
            #expect(try await client.send(.post, "/v1/transactions/\(id)/refunds", key: fixture.shop.secret, json: "").0 == .created)
            let (_, read) = try await client.send(.get, "/v1/transactions/\(id)", key: fixture.shop.secret)
            #expect(try decode(TransactionBody.self, read).amount_refunded == 1000)
            // Refunded in full: the transaction's state, with an amount or without (409, as the document says).
            for body in [#"{"amount": 1}"#, "{}"] {
                let (full, fullBody) = try await client.send(.post, "/v1/transactions/\(id)/refunds", key: fixture.shop.secret, json: body)
                #expect(try full == .conflict && decode(ErrorBody.self, fullBody).error.code == "transaction_not_refundable", "\(body)")
            }

            let declinedToken = try await client.token(fixture, number: "4000000000000002")
            let (_, declined) = try await client.charge(fixture, #"{"token": "\#(declinedToken)", "amount": 1000, "currency": "EUR"}"#)
            let declinedID = try decode(TransactionBody.self, declined).id
            let (refused, refusedBody) = try await client.send(.post, "/v1/transactions/\(declinedID)/refunds", key: fixture.shop.secret, json: "")
            #expect(refused == .conflict)
            #expect(try decode(ErrorBody.self, refusedBody).error.code == "transaction_not_refundable")
        }
    }

    @Test(
        "Idempotency-Key: the same request returns the first answer and spends nothing twice; another body is refused",
        arguments: StoreKind.allCases
    )
    func idempotency(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let token = try await client.token(fixture)
            let json = #"{"token": "\#(token)", "amount": 2500, "currency": "GBP"}"#
            let (first, firstBody, firstReplayed) = try await client.post(
                "/v1/transactions",
                key: fixture.shop.secret,
                json: json,
                idempotencyKey: "order-1"
            )
            #expect(first == .created && !firstReplayed)
            let (second, secondBody, replayed) = try await client.post(
                "/v1/transactions",
                key: fixture.shop.secret,
                json: json,
                idempotencyKey: "order-1"
            )
            #expect(second == .created && replayed)
            #expect(secondBody == firstBody)
            let (_, list) = try await client.send(.get, "/v1/transactions", key: fixture.shop.secret)
            #expect(try decode(ListBody<TransactionBody>.self, list).data.count == 1)
            let other = #"{"token": "\#(token)", "amount": 2600, "currency": "GBP"}"#
            let (conflict, conflictBody, _) = try await client.post(
                "/v1/transactions",
                key: fixture.shop.secret,
                json: other,
                idempotencyKey: "order-1"
            )
            #expect(conflict == .unprocessableContent)
            let error = try decode(ErrorBody.self, conflictBody).error
            #expect(error.type == "idempotency_error" && error.code == "idempotency_key_reused")
            // The key belongs to the merchant: another merchant may use the same words.
            let (elsewhere, _, elsewhereReplayed) = try await client.post(
                "/v1/transactions",
                key: fixture.other.secret,
                json: json,
                idempotencyKey: "order-1"
            )
            #expect(elsewhere == .notFound && !elsewhereReplayed)
        }
    }

    @Test("a request that fails validation frees its key for a corrected retry", arguments: StoreKind.allCases)
    func idempotencyAfterError(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let token = try await client.token(fixture)
            let wrong = #"{"token": "\#(token)", "amount": -1, "currency": "EUR"}"#
            #expect(try await client.post("/v1/transactions", key: fixture.shop.secret, json: wrong, idempotencyKey: "k").0 == .badRequest)
            let right = #"{"token": "\#(token)", "amount": 100, "currency": "EUR"}"#
            #expect(try await client.post("/v1/transactions", key: fixture.shop.secret, json: right, idempotencyKey: "k").0 == .created)
        }
    }
}

@Suite("HTTP API: Idempotency-Key on every POST")
struct IdempotencyAPITests {
    /// Sends `json` twice under one key, then another body under the same key: the replay must
    /// be the first answer, marked, and the other body refused.
    static func replays(
        _ client: some TestClientProtocol,
        _ uri: String,
        key: String,
        json: String,
        other: String
    ) async throws -> Data {
        let (first, firstBody, firstReplayed) = try await client.post(uri, key: key, json: json, idempotencyKey: "retry-\(uri)")
        #expect(first == .created && !firstReplayed, "\(uri): \(String(decoding: firstBody, as: UTF8.self))")
        let (second, secondBody, replayed) = try await client.post(uri, key: key, json: json, idempotencyKey: "retry-\(uri)")
        #expect(second == .created && replayed && secondBody == firstBody, "\(uri) was run twice")
        let (conflict, conflictBody, _) = try await client.post(uri, key: key, json: other, idempotencyKey: "retry-\(uri)")
        #expect(conflict == .unprocessableContent && (try? decode(ErrorBody.self, conflictBody).error.code) == "idempotency_key_reused", "\(uri)")
        return firstBody
    }

    @Test("tokens, clients and refunds: a retry gets the first answer and makes nothing twice", arguments: StoreKind.allCases)
    func everyPost(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let card = #"{"number": "4242424242424242", "exp_month": 12, "exp_year": 2030, "cvc": "123"}"#
            let other = #"{"number": "5555555555554444", "exp_month": 12, "exp_year": 2030, "cvc": "123"}"#
            let token = try decode(IDBody.self, try await Self.replays(client, "/v1/tokens", key: fixture.shop.publishable, json: card, other: other))
                .id

            let clientBody = try await Self.replays(
                client,
                "/v1/clients",
                key: fixture.shop.secret,
                json: #"{"email": "pat@example.com"}"#,
                other: #"{"email": "sam@example.com"}"#
            )
            #expect(try decode(IDBody.self, clientBody).id.hasPrefix("client_"))

            let (charged, chargeBody) = try await client.charge(fixture, #"{"token": "\#(token)", "amount": 1000, "currency": "EUR"}"#)
            #expect(charged == .created, "the replayed token was not the one made")
            let transaction = try decode(TransactionBody.self, chargeBody).id
            _ = try await Self.replays(
                client,
                "/v1/transactions/\(transaction)/refunds",
                key: fixture.shop.secret,
                json: #"{"amount": 300}"#,
                other: #"{"amount": 200}"#
            )
            let (_, after) = try await client.send(.get, "/v1/transactions/\(transaction)", key: fixture.shop.secret)
            #expect(try decode(TransactionBody.self, after).amount_refunded == 300)
        }
    }

    @Test(
        "the store keeps a keyed digest of a request, not a plain hash that guessed card numbers could be tested against",
        arguments: StoreKind.allCases
    )
    func keyedDigest(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        let json = #"{"number": "4242424242424242", "exp_month": 12, "exp_year": 2030}"#
        try await fixture.application().test(.router) { client in
            let (status, _, _) = try await client.post("/v1/tokens", key: fixture.shop.publishable, json: json, idempotencyKey: "k1")
            #expect(status == .created)
        }
        let stored = try await fixture.vault.store.strings(sql: "SELECT request_hash FROM idempotency_key")
        #expect(stored.count == 1)
        let plain = SHA256.hash(data: Array("POST /v1/tokens\n\(json)".utf8)).map { String(format: "%02x", $0) }.joined()
        #expect(stored.first?.count == 64 && stored.first != plain)
    }
}
