import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Payments
import StoreTestSupport
import Testing
import Tokenizer

@Suite("HTTP API: tokens, keys and errors")
struct TokenAPITests {
    @Test(
        "the key matrix: pk and sk create tokens; only sk reads them; none or a wrong key is 401; another merchant's token is 404",
        arguments: StoreKind.allCases
    )
    func keyMatrix(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let (created, body) = try await client.send(.post, "/v1/tokens", key: fixture.shop.publishable, json: visaBody)
            #expect(created == .created)
            let token = try decode(TokenBody.self, body)
            #expect(try await client.send(.post, "/v1/tokens", key: fixture.shop.secret, json: visaBody).0 == .created)
            #expect(try await client.send(.post, "/v1/tokens", key: nil, json: visaBody).0 == .unauthorized)
            #expect(try await client.send(.post, "/v1/tokens", key: "sk_wrongwrongwrongwrong12", json: visaBody).0 == .unauthorized)
            #expect(try await client.send(.get, "/v1/tokens/\(token.id)", key: fixture.shop.publishable).0 == .forbidden)
            #expect(try await client.send(.get, "/v1/tokens/\(token.id)", key: fixture.shop.secret).0 == .ok)
            #expect(try await client.send(.get, "/v1/tokens/\(token.id)", key: fixture.other.secret).0 == .notFound)
            #expect(try await client.send(.get, "/v1/tokens/\(token.id)", key: nil).0 == .unauthorized)
            let (status, denied) = try await client.send(.get, "/v1/tokens/\(token.id)", key: "pk_" + fixture.shop.secret.dropFirst(3))
            #expect(status == .unauthorized)
            #expect(try decode(ErrorBody.self, denied).error.type == "authentication_error")
        }
    }

    @Test("a token shows only brand, BIN, last four and expiry; reading it never spends it", arguments: StoreKind.allCases)
    func tokenBody(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let (_, body) = try await client.send(
                .post,
                "/v1/tokens",
                key: fixture.shop.publishable,
                json: #"{"number": "5555555555554444", "exp_month": 3, "exp_year": 2031, "amount": 1999, "currency": "eur"}"#
            )
            let text = String(decoding: body, as: UTF8.self)
            #expect(!text.contains("5555555555554444"))
            let token = try decode(TokenBody.self, body)
            #expect(token.id.hasPrefix("tok_") && token.object == "token" && !token.used)
            #expect(token.card.brand == "mastercard" && token.card.bin == "555555" && token.card.last4 == "4444")
            #expect(token.amount == 1999 && token.currency == "EUR")
            for _ in 0..<2 {
                let (_, read) = try await client.send(.get, "/v1/tokens/\(token.id)", key: fixture.shop.secret)
                #expect(try decode(TokenBody.self, read).used == false)
            }
            // A two-digit year is this century's, as printed on the card.
            let (short, shortBody) = try await client.send(
                .post,
                "/v1/tokens",
                key: fixture.shop.publishable,
                json: #"{"number": "5555555555554444", "exp_month": 3, "exp_year": 31}"#
            )
            #expect(short == .created)
            #expect(String(decoding: shortBody, as: UTF8.self).contains(#""exp_year":2031"#))
        }
    }

    @Test(
        "bad input is a 4xx JSON error naming what is wrong",
        arguments: [
            (#"{"number": "4242424242424241", "exp_month": 12, "exp_year": 2030}"#, 402, "card_error", "invalid_number", "number"),
            (#"{"number": "4242424242424242", "exp_month": 13, "exp_year": 2030}"#, 402, "card_error", "invalid_expiry_month", "exp_month"),
            (#"{"number": "4242424242424242", "exp_month": 1, "exp_year": 2020}"#, 402, "card_error", "expired_card", "exp_year"),
            (#"{"number": "4242424242424242", "exp_month": 1, "exp_year": 20}"#, 402, "card_error", "expired_card", "exp_year"),
            (#"{"number": "4242424242424242", "exp_month": 1, "exp_year": 100}"#, 402, "card_error", "invalid_expiry_year", "exp_year"),
            (#"{"number": "4242424242424242", "exp_month": 1, "exp_year": 2030, "cvc": "12"}"#, 402, "card_error", "invalid_cvc", "cvc"),
            (#"{"number": 4242424242424242, "exp_month": 1, "exp_year": 2030}"#, 400, "invalid_request_error", "parameter_invalid", "number"),
            (#"{"number": "4242424242424242", "exp_month": "01", "exp_year": 2030}"#, 400, "invalid_request_error", "parameter_invalid", "exp_month"),
            (#"{"number": "4242424242424242", "exp_year": 2030}"#, 400, "invalid_request_error", "parameter_missing", "exp_month"),
            (
                // Issue 66: it said invalid_currency; the parameter that is missing is named.
                #"{"number": "4242424242424242", "exp_month": 1, "exp_year": 2030, "amount": 100}"#, 400, "invalid_request_error",
                "parameter_missing",
                "currency"
            ),
            (
                #"{"number": "4242424242424242", "exp_month": 1, "exp_year": 2030, "amount": 0, "currency": "usd"}"#, 400, "invalid_request_error",
                "invalid_amount", "amount"
            ),
            (
                #"{"number": "4242424242424242", "exp_month": 1, "exp_year": 2030, "currency": "XYZ"}"#, 400, "invalid_request_error",
                "invalid_currency", "currency"
            ),
            // Numbers no integer field holds: named, not "not JSON".
            (#"{"number": "4242424242424242", "exp_month": 1.5, "exp_year": 2030}"#, 400, "invalid_request_error", "parameter_invalid", "exp_month"),
            (
                #"{"number": "4242424242424242", "exp_month": 1, "exp_year": 2030, "amount": 9223372036854775808, "currency": "USD"}"#, 400,
                "invalid_request_error", "parameter_invalid", "amount"
            ),
            // A currency binds only with an amount; a currency in mixed case is no code.
            (
                #"{"number": "4242424242424242", "exp_month": 1, "exp_year": 2030, "currency": "usd"}"#, 400, "invalid_request_error",
                "parameter_missing", "amount"
            ),
            (
                #"{"number": "4242424242424242", "exp_month": 1, "exp_year": 2030, "amount": 5, "currency": "Usd"}"#, 400, "invalid_request_error",
                "invalid_currency", "currency"
            ),
            // null is not a string: leave a field out instead.
            (
                #"{"number": "4242424242424242", "exp_month": 1, "exp_year": 2030, "cvc": null}"#, 400, "invalid_request_error", "parameter_invalid",
                "cvc"
            ),
            (
                #"{"number": "4242424242424242", "exp_month": 1, "exp_year": 2030, "holder": "\#(String(repeating: "A", count: 101))"}"#, 400,
                "invalid_request_error", "parameter_invalid", "holder"
            ),
            (#"{"number": "4242424242424242""#, 400, "invalid_request_error", "invalid_json", nil),
            (#"[1, 2, 3]"#, 400, "invalid_request_error", "parameter_invalid", nil),
            ("", 400, "invalid_request_error", "invalid_json", nil),
        ] as [(String, Int, String, String, String?)]
    )
    func badInput(_ json: String, _ status: Int, _ type: String, _ code: String, _ param: String?) async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            let (answer, body) = try await client.send(.post, "/v1/tokens", key: fixture.shop.publishable, json: json)
            #expect(answer.code == status)
            let error = try decode(ErrorBody.self, body).error
            #expect(error.type == type)
            #expect(error.code == code)
            #expect(error.param == param)
            #expect(!error.message.isEmpty)
            #expect(!error.message.contains("4242424242424242"))
        }
    }

    @Test("a body over the limit is 413; unknown routes are a JSON 404", arguments: StoreKind.allCases)
    func limits(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let huge =
                #"{"number": "4242424242424242", "holder": ""# + String(repeating: "A", count: 100_000) + #"", "exp_month": 1, "exp_year": 2030}"#
            let (status, body) = try await client.send(.post, "/v1/tokens", key: fixture.shop.publishable, json: huge)
            #expect(status == .contentTooLarge)
            #expect(try decode(ErrorBody.self, body).error.code == "body_too_large")
            let (missing, route) = try await client.send(.get, "/v1/nothing", key: fixture.shop.secret)
            #expect(missing == .notFound)
            #expect(try decode(ErrorBody.self, route).error.type == "invalid_request_error")
            #expect(try await client.send(.get, "/healthz", key: nil).0 == .ok)
        }
    }

    @Test("the server's logs hold no card number, whatever the requests carried", arguments: StoreKind.allCases)
    func logsHoldNoCardData(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        let numbers = ["4242424242424242", "4242424242424241", "5555555555554444", "378282246310005"]
        try await fixture.application().test(.router) { client in
            for number in numbers {
                let json = #"{"number": "\#(number)", "exp_month": 12, "exp_year": 2030, "cvc": "987"}"#
                try await client.send(.post, "/v1/tokens", key: fixture.shop.publishable, json: json)
                try await client.send(.post, "/v1/tokens", key: nil, json: json)
                try await client.send(.post, "/v1/tokens", key: fixture.shop.publishable, json: String(json.dropLast()))
            }
        }
        let lines = fixture.logs.all
        #expect(lines.count >= 12)
        #expect(lines.contains { $0.contains("status=201") && $0.contains("merchant=\(fixture.shop.merchant.id)") })
        for line in lines {
            for number in numbers { #expect(!line.contains(number), "a PAN in a log line") }
            // Ids are long letters-and-digits words that may hold 987 by chance; a CVC stands alone.
            let words = line.split { !$0.isLetter && !$0.isNumber }
            #expect(!words.contains("987"), "a CVC in a log line")
        }
    }
}
