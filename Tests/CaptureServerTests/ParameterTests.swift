import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Payments
import StoreTestSupport
import Testing
import Tokenizer

@testable import CaptureServer

/// A misspelled or unknown parameter is refused by name, never dropped without a word.
@Suite("Unknown parameters")
struct ParameterTests {
    @Test("a JSON body's unknown key is 400 parameter_unknown naming it, with the near name; a token is not made unbound")
    func jsonBodies() async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            let card = #""number": "4242424242424242", "exp_month": 12, "exp_year": 2031, "cvc": "123""#
            let (status, data) = try await client.send(.post, "/v1/tokens", key: fixture.shop.publishable, json: "{\(card), \"amout\": 500}")
            let error = try errorDetail(data)
            #expect(status == .badRequest && error.code == "parameter_unknown" && error.param == "amout")
            #expect(error.message == "amout is not a parameter of this request's body; did you mean amount?", "\(error.message)")
            #expect(!error.message.contains("4242"))
            // A card number sent as a name is masked wherever the name is echoed.
            let (_, numberData) = try await client.send(
                .post,
                "/v1/tokens",
                key: fixture.shop.publishable,
                json: "{\(card), \"4000056655665556\": 1}"
            )
            let named = try errorDetail(numberData)
            #expect(named.code == "parameter_unknown" && named.param == "400005******5556" && !named.message.contains("4000056655665556"))
            // Spelled with an escape, it is the same key.
            let escaped = try await client.send(.post, "/v1/tokens", key: fixture.shop.publishable, json: #"{\#(card), "\u0061mout": 500}"#)
            #expect(try errorDetail(escaped.1).param == "amout")
            // The same body spelled right is taken, bound to its amount.
            let (made, tokenData) = try await client.send(
                .post,
                "/v1/tokens",
                key: fixture.shop.publishable,
                json: "{\(card), \"amount\": 500, \"currency\": \"EUR\"}"
            )
            let bound = try decode(TokenBody.self, tokenData).amount
            #expect(made == .created && bound == 500)

            let (_, clientData) = try await client.send(
                .post,
                "/v1/clients",
                key: fixture.shop.secret,
                json: #"{"email": "a@shop.example", "descripton": "VIP"}"#
            )
            #expect(try errorDetail(clientData).message.hasSuffix("did you mean description?"))
            // Far from every name: the names it takes.
            let (_, far) = try await client.send(.post, "/v1/clients", key: fixture.shop.secret, json: #"{"nickname": "x"}"#)
            #expect(try errorDetail(far).message == "nickname is not a parameter of this request's body; it takes email, description")
            // Free-form metadata keeps any keys of its own.
            let session = #"{"amount": 500, "currency": "EUR", "return_url": "https://shop.example/done", "metadata": {"ordr": "17"}}"#
            #expect(try await client.send(.post, "/v1/checkout_sessions", key: fixture.shop.secret, json: session).0 == .created)
            // A POST that takes nothing refuses a body with keys, and takes {}.
            let (_, sessionData) = try await client.send(.post, "/v1/checkout_sessions", key: fixture.shop.secret, json: session)
            let id = try #require((try JSONSerialization.jsonObject(with: sessionData) as? [String: Any])?["id"] as? String)
            let (refused, refusedData) = try await client.send(
                .post,
                "/v1/checkout_sessions/\(id)/cancel",
                key: fixture.shop.secret,
                json: #"{"reason": "x"}"#
            )
            let refusal = try errorDetail(refusedData).message
            #expect(refused == .badRequest && refusal.hasSuffix("which takes none"))
            #expect(try await client.send(.post, "/v1/checkout_sessions/\(id)/cancel", key: fixture.shop.secret, json: "{}").0 == .ok)
        }
    }

    @Test("a query parameter a route does not take is 400 parameter_unknown; the ones it takes work")
    func queries() async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            let key = fixture.shop.secret
            let (status, data) = try await client.send(.get, "/v1/transactions?limt=5", key: key)
            let error = try errorDetail(data)
            #expect(status == .badRequest && error.code == "parameter_unknown" && error.param == "limt")
            #expect(error.message == "limt is not a parameter of GET /v1/transactions; did you mean limit?", "\(error.message)")
            #expect(try await client.send(.get, "/v1/transactions?limit=5", key: key).0 == .ok)
            // Given twice (in any spelling), a parameter has no one meaning: refused, named.
            for query in ["limit=5&limit=100", "limit=5&l%69mit=100", "created[gte]=1&created%5Bgte%5D=2"] {
                let route = query.hasPrefix("created") ? "/v1/events" : "/v1/transactions"
                let (twice, twiceData) = try await client.send(.get, "\(route)?\(query)", key: key)
                let refused = try errorDetail(twiceData)
                #expect(twice == .badRequest && refused.code == "parameter_invalid" && refused.message.contains("more than once"), "\(query)")
            }
            // A name spelled with escapes is the name the route reads, not one it skips.
            let (encoded, encodedData) = try await client.send(.get, "/v1/transactions?l%69mit=1001", key: key)
            #expect(try encoded == .badRequest && errorDetail(encodedData).param == "limit")
            #expect(try await client.send(.get, "/v1/events?created[gte]=1&type=refund.created&limit=2", key: key).0 == .ok)
            // Brackets as a client's library encodes them are the same names, and still checked.
            let (_, tokenData) = try await client.send(.post, "/v1/tokens", key: fixture.shop.publishable, json: visaBody)
            let token = try decode(TokenBody.self, tokenData).id
            let charge = #"{"token": "\#(token)", "amount": 500, "currency": "EUR"}"#
            #expect(try await client.send(.post, "/v1/transactions", key: key, json: charge).0 == .created)
            func events(_ query: String) async throws -> Int? {
                let (_, data) = try await client.send(.get, "/v1/events?\(query)", key: key)
                return ((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["data"] as? [Any])?.count
            }
            let (all, none) = (try await events("created%5Bgte%5D=0"), try await events("created%5Bgte%5D=9999999999"))
            #expect(all == 1 && none == 0)
            let (badEncoded, badData) = try await client.send(.get, "/v1/events?created%5Bgt%5D=x", key: key)
            let badParam = try errorDetail(badData).param
            #expect(badEncoded == .badRequest && badParam == "created[gt]")
            let (_, readData) = try await client.send(.get, "/v1/transactions/tran_x?expand=card", key: key)
            #expect(try errorDetail(readData).message == "expand is not a parameter of GET /v1/transactions/{id}, which takes none")
            let (posted, postData) = try await client.send(.post, "/v1/clients?email=a@b.example", key: key, json: "{}")
            let postParam = try errorDetail(postData).param
            #expect(posted == .badRequest && postParam == "email")
        }
    }

    @Test("the hosted page's form refuses a field it does not have, charging nothing")
    func form() async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            let id = try await client.openSession(fixture, #"{"amount": 500, "currency": "EUR", "return_url": "https://shop.example/done"}"#)
            let page = try await client.visit(.get, "/pay/\(id)")
            var fields = try page.card("4242424242424242")
            fields["cardnumber"] = "4242424242424242"
            let paid = try await client.visit(.post, "/pay/\(id)", cookie: page.cookie, form: fields)
            #expect(paid.status == .badRequest && paid.html.contains("does not have (cardnumber)"), "\(paid.status)")
            #expect(!paid.html.contains("4242424242424242"))
            let after = try await client.session(fixture, id)
            #expect(after.attempts == 0 && after.transaction == nil)
        }
    }

    @Test("edits between names: insertions, deletions, substitutions, neighbours swapped")
    func distance() {
        func edits(_ a: String, _ b: String) -> Int { KnownParameters.distance(Array(a.utf8), Array(b.utf8)) }
        #expect(edits("amout", "amount") == 1 && edits("amuont", "amount") == 1 && edits("limt", "limit") == 1)
        #expect(edits("ammount", "amount") == 1 && edits("amnt", "amount") == 2 && edits("", "abc") == 3 && edits("same", "same") == 0)
        let known = KnownParameters(["amount", "currency", "number"])
        #expect(known.nearest(to: "AMOUT") == "amount" && known.nearest(to: "curency") == "currency" && known.nearest(to: "holder") == nil)
    }
}
