import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import Tokenizer

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
        var headers = HTTPFields()
        headers[.authorization] = "Bearer \(key)"
        headers[HTTPField.Name("Idempotency-Key")!] = idempotencyKey
        return try await execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: json)) { response in
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

    @Test("only a secret key charges; a publishable key is 403")
    func secretOnly() async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            let token = try await client.token(fixture)
            let json = #"{"token": "\#(token)", "amount": 100, "currency": "USD"}"#
            #expect(try await client.send(.post, "/v1/transactions", key: fixture.shop.publishable, json: json).0 == .forbidden)
            #expect(try await client.send(.post, "/v1/transactions", key: fixture.other.secret, json: json).0 == .notFound)
            #expect(try await client.send(.post, "/v1/clients", key: fixture.shop.publishable, json: "{}").0 == .forbidden)
            #expect(try await client.send(.post, "/v1/transactions", key: fixture.shop.secret, json: json).0 == .created)
        }
    }

    @Test("a saved card: one payment method per card and client, charged again without a token, deleted")
    func savedCards() async throws {
        let fixture = try await APIFixture()
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

    @Test("refunds, full and partial, never beyond the captured amount; a declined charge has nothing to refund")
    func refunds() async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            let token = try await client.token(fixture)
            let (_, body) = try await client.charge(fixture, #"{"token": "\#(token)", "amount": 1000, "currency": "JPY"}"#)
            let id = try decode(TransactionBody.self, body).id
            #expect(try await client.send(.post, "/v1/transactions/\(id)/refunds", key: fixture.shop.secret, json: #"{"amount": 400}"#).0 == .created)
            let (over, overBody) = try await client.send(.post, "/v1/transactions/\(id)/refunds", key: fixture.shop.secret, json: #"{"amount": 601}"#)
            #expect(over == .badRequest)
            #expect(try decode(ErrorBody.self, overBody).error.code == "refund_exceeds_amount")
            // No amount: the rest.
            #expect(try await client.send(.post, "/v1/transactions/\(id)/refunds", key: fixture.shop.secret, json: "").0 == .created)
            let (_, read) = try await client.send(.get, "/v1/transactions/\(id)", key: fixture.shop.secret)
            #expect(try decode(TransactionBody.self, read).amount_refunded == 1000)
            #expect(
                try await client.send(.post, "/v1/transactions/\(id)/refunds", key: fixture.shop.secret, json: #"{"amount": 1}"#).0 == .badRequest
            )

            let declinedToken = try await client.token(fixture, number: "4000000000000002")
            let (_, declined) = try await client.charge(fixture, #"{"token": "\#(declinedToken)", "amount": 1000, "currency": "EUR"}"#)
            let declinedID = try decode(TransactionBody.self, declined).id
            let (refused, refusedBody) = try await client.send(.post, "/v1/transactions/\(declinedID)/refunds", key: fixture.shop.secret, json: "")
            #expect(refused == .badRequest)
            #expect(try decode(ErrorBody.self, refusedBody).error.code == "transaction_not_refundable")
        }
    }

    @Test("Idempotency-Key: the same request returns the first answer and spends nothing twice; another body is refused")
    func idempotency() async throws {
        let fixture = try await APIFixture()
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
            #expect(conflict == .badRequest)
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

    @Test("a request that fails validation frees its key for a corrected retry")
    func idempotencyAfterError() async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            let token = try await client.token(fixture)
            let wrong = #"{"token": "\#(token)", "amount": -1, "currency": "EUR"}"#
            #expect(try await client.post("/v1/transactions", key: fixture.shop.secret, json: wrong, idempotencyKey: "k").0 == .badRequest)
            let right = #"{"token": "\#(token)", "amount": 100, "currency": "EUR"}"#
            #expect(try await client.post("/v1/transactions", key: fixture.shop.secret, json: right, idempotencyKey: "k").0 == .created)
        }
    }
}
