import CardCapture
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Payments
import Testing
import Tokenizer

@Suite("The API under abuse: card numbers where ids belong, strict bodies")
struct HardeningTests {
    @Test("a body with broken chunked framing is a 400 JSON error, not a 500 logged as the server's")
    func brokenChunks() async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.live) { client in
            let port = try #require(client.port)
            for chunks in ["zz\r\n{}\r\n0\r\n\r\n", "-1\r\n{}\r\n0\r\n\r\n", "ffffffffffffffffff\r\n{}\r\n0\r\n\r\n"] {
                let connection = try RawConnection(port: port)
                let head = RawConnection.head("/v1/clients", key: fixture.shop.secret, type: "application/json", length: nil)
                #expect(await connection.send(head + Array(chunks.utf8)))
                let answer = await connection.receive()
                #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(80))")
                #expect(answer.contains(#""code":"invalid_request""#), "\(answer)")
            }
        }
        #expect(!fixture.logs.all.contains { $0.contains("request failed") }, "a client's framing is not logged as the server's error")
    }

    @Test("a card number given as an id, whole or in groups: the path's is 400 not echoed, the body's masked in the 404, both in the logged path")
    func cardNumberAsID() async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            // An id in the path that is no id of its kind is 400, openapi.json's pattern named.
            let (read, readBody) = try await client.send(.get, "/v1/tokens/4242424242424242", key: fixture.shop.secret)
            #expect(read == .badRequest)
            let (spent, spentBody) = try await client.send(
                .post,
                "/v1/transactions",
                key: fixture.shop.secret,
                json: #"{"token": "4242424242424242", "amount": 100, "currency": "EUR"}"#
            )
            #expect(spent == .notFound)
            let (other, otherBody) = try await client.send(.get, "/v1/transactions/tran_5555555555554444x", key: fixture.shop.secret)
            #expect(other == .badRequest)
            // Written in groups, as the API itself takes a number, and percent-encoded in a path.
            let (grouped, groupedBody) = try await client.send(.get, "/v1/tokens/4242-4242-4242-4242", key: fixture.shop.secret)
            #expect(grouped == .badRequest)
            let (spaced, spacedBody) = try await client.send(
                .post,
                "/v1/transactions",
                key: fixture.shop.secret,
                json: #"{"token": "5555 5555 5555 4444", "amount": 100, "currency": "EUR"}"#
            )
            #expect(spaced == .notFound)
            let (encoded, encodedBody) = try await client.send(.get, "/v1/clients/4242%204242%204242%204242", key: fixture.shop.secret)
            #expect(encoded == .badRequest)
            let (listed, listedBody) = try await client.send(.get, "/v1/transactions?client=4242.4242.4242.4242", key: fixture.shop.secret)
            #expect(listed == .notFound)
            for body in [readBody, spentBody, otherBody, groupedBody, spacedBody, encodedBody, listedBody] {
                let error = try decode(ErrorBody.self, body).error
                let digits = error.message.filter(\.isNumber)
                #expect(!digits.contains("4242424242424242") && !digits.contains("5555555555554444"), "\(error.message)")
                if error.code == "parameter_invalid" {
                    #expect(error.param == "id", "the path's id is named, not echoed: \(error.message)")
                } else {
                    #expect(error.message.contains("****"), "the message names what it was sent, masked: \(error.message)")
                }
            }
        }
        let logged = fixture.logs.all.joined(separator: "\n")
        #expect(logged.contains("/v1/tokens/424242******4242"))
        #expect(logged.contains("/v1/tokens/4242-42**-****-4242"))
        // The logged path is percent-decoded before it is masked (a number sent as %34%32… is masked too).
        #expect(logged.contains("/v1/clients/4242 42** **** 4242"))
        for number in ["4242424242424242", "5555555555554444", "4242-4242-4242-4242", "4242%204242%204242%204242", "5555 5555 5555 4444"] {
            #expect(!logged.contains(number))
        }
    }

    @Test(
        "a key given twice in one object is refused, however it is spelled; so is a NUL inside a string",
        arguments: [
            (#"{"number": "4242424242424242", "number": "5555555555554444", "exp_month": 12, "exp_year": 2030}"#, "number"),
            (#"{"number": "4242424242424242", "exp_month": 12, "exp_year": 2030, "\u0065xp_year": 2031}"#, "exp_year"),
            (#"{"number": "4242424242424242", "exp_month": 12, "exp_year": 2030, "holder": "AL\u0000EX"}"#, "NUL"),
        ]
    )
    func strictBodies(json: String, named: String) async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            let (status, body) = try await client.send(.post, "/v1/tokens", key: fixture.shop.publishable, json: json)
            #expect(status == .badRequest)
            let error = try decode(ErrorBody.self, body).error
            #expect(error.code == "invalid_json")
            #expect(error.message.contains(named), "\(error.message)")
            #expect(!error.message.contains("4242424242424242"))
        }
    }

    @Test("the same key in two different objects, and braces and escapes inside strings, are all fine")
    func strictButNotWrong() async throws {
        let fixture = try await APIFixture()
        let json = #"{"number": "4242424242424242", "exp_month": 12, "exp_year": 2030, "holder": "A {\"number\": 1} \\u0000 B"}"#
        try await fixture.application().test(.router) { client in
            let (status, body) = try await client.send(.post, "/v1/tokens", key: fixture.shop.publishable, json: json)
            #expect(status == .created, "\(String(decoding: body, as: UTF8.self))")
        }
    }

    /// The sandbox, except that refunds fail (a processor that is down).
    struct RefusingRefunds: Processor {
        let sandbox = SandboxProcessor()
        struct Down: Error {}

        func authorize(_ request: AuthorizationRequest) async throws -> AuthorizationOutcome { try await sandbox.authorize(request) }
        func outcome(ofAuthorization reference: String) async throws -> AuthorizationOutcome? {
            try await sandbox.outcome(ofAuthorization: reference)
        }
        func refund(reference: String, amount: Int, currency: Currency) async throws { throw Down() }
    }

    @Test("a refund the processor fails is a 502 processor_error and an error log line; nothing is refunded")
    func failedRefund() async throws {
        let fixture = try await APIFixture()
        try await fixture.application(processor: RefusingRefunds()).test(.router) { client in
            let token = try await client.token(fixture)
            let (charged, chargeBody) = try await client.charge(fixture, #"{"token": "\#(token)", "amount": 1000, "currency": "EUR"}"#)
            #expect(charged == .created)
            let id = try decode(TransactionBody.self, chargeBody).id
            let (refunded, refundBody) = try await client.send(.post, "/v1/transactions/\(id)/refunds", key: fixture.shop.secret, json: "{}")
            #expect(refunded == .badGateway)
            #expect(try decode(ErrorBody.self, refundBody).error.code == "processor_error")
            let (_, readBody) = try await client.send(.get, "/v1/transactions/\(id)", key: fixture.shop.secret)
            #expect(try decode(TransactionBody.self, readBody).amount_refunded == 0)
        }
        #expect(fixture.logs.all.contains { $0.hasPrefix("error") && $0.contains("code=processor_error") })
    }
}
