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

/// The statuses of openapi.json's contract: 400 for a request the document does not allow,
/// 422 for one it allows whose values cannot be used, 404 and 409 for the objects named.
@Suite("The document's rules, as the server answers them")
struct ContractTests {
    @Test("an e-mail address is one @ with something on either side and no space; null is left out, not sent")
    func clientFields() async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            for (email, taken) in [
                ("pat@example.com", true), ("zoë@exämple.de", true), ("a@b", true),
                ("pat example@x.com", false), ("@example.com", false), ("pat@", false), ("a@b@c", false), ("pat@exam\tple.com", false),
            ] {
                let json = try String(decoding: JSONSerialization.data(withJSONObject: ["email": email]), as: UTF8.self)
                let (status, data) = try await client.send(.post, "/v1/clients", key: fixture.shop.secret, json: json)
                if taken {
                    #expect(status == .created, "\(email)")
                } else {
                    #expect(status == .badRequest && (try? errorDetail(data).param) == "email", "\(email)")
                }
            }
            let (status, data) = try await client.send(.post, "/v1/clients", key: fixture.shop.secret, json: #"{"email": null}"#)
            let error = try errorDetail(data)
            #expect(status == .badRequest && error.code == "parameter_invalid" && error.param == "email")
            #expect(error.message == "email is null; give a value, or leave email out")
            // A webhook endpoint's events may be null: the document says so (every type).
            let (made, _) = try await client.send(
                .post,
                "/v1/webhook_endpoints",
                key: fixture.shop.secret,
                json: #"{"url": "https://shop.example/hooks", "events": null}"#
            )
            #expect(made == .created)
        }
    }

    @Test("an Idempotency-Key is 1 to 255 printable ASCII characters; another request under a used one is 422")
    func idempotencyKeys() async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            let body = #"{"email": "pat@example.com"}"#
            for key in ["clé", String(repeating: "k", count: 256), "tab\there"] {
                let (status, data, _) = try await client.post("/v1/clients", key: fixture.shop.secret, json: body, idempotencyKey: key)
                #expect(status == .badRequest && (try? errorDetail(data).code) == "idempotency_key_invalid", "\(key.prefix(10))")
            }
            let uuid = UUID().uuidString
            #expect(try await client.post("/v1/clients", key: fixture.shop.secret, json: body, idempotencyKey: uuid).0 == .created)
            let (reused, data, _) = try await client.post(
                "/v1/clients",
                key: fixture.shop.secret,
                json: #"{"email": "sam@example.com"}"#,
                idempotencyKey: uuid
            )
            #expect(try reused == .unprocessableContent && errorDetail(data).code == "idempotency_key_reused")
        }
    }

    @Test("a time filter past the document's maximum, or not plain digits, is 400; the maximum itself is taken")
    func eventTimes() async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            for (query, status) in [
                ("created[lte]=253402300799", HTTPResponse.Status.ok), ("created[lte]=253402300800", .badRequest),
                ("created[gt]=%2B5", .badRequest), ("created=-0", .badRequest), ("created=", .badRequest),
            ] {
                let (answer, _) = try await client.send(.get, "/v1/events?\(query)", key: fixture.shop.secret)
                #expect(answer == status, "\(query)")
            }
        }
    }

    @Test("an unknown id to start after is 404; a 17th webhook endpoint is 409; a saved card of another client is 422", arguments: StoreKind.allCases)
    func objectsNamed(store: StoreKind) async throws {
        let fixture = try await APIFixture(store)
        try await fixture.application().test(.router) { client in
            let (_, endpointData) = try await client.send(
                .post,
                "/v1/webhook_endpoints",
                key: fixture.shop.secret,
                json: #"{"url": "https://shop.example/0"}"#
            )
            let endpoint = try decode(IDBody.self, endpointData).id
            let unknown = ObjectID.random(.webhookDelivery).rawValue
            let (missing, missingData) = try await client.send(
                .get,
                "/v1/webhook_endpoints/\(endpoint)/deliveries?starting_after=\(unknown)",
                key: fixture.shop.secret
            )
            #expect(try missing == .notFound && errorDetail(missingData).code == "webhook_delivery_not_found")
            for index in 1..<16 {
                let json = #"{"url": "https://shop.example/\#(index)"}"#
                #expect(try await client.send(.post, "/v1/webhook_endpoints", key: fixture.shop.secret, json: json).0 == .created)
            }
            let (full, fullData) = try await client.send(
                .post,
                "/v1/webhook_endpoints",
                key: fixture.shop.secret,
                json: #"{"url": "https://shop.example/16"}"#
            )
            #expect(try full == .conflict && errorDetail(fullData).code == "webhook_endpoint_limit")

            let (_, patData) = try await client.send(.post, "/v1/clients", key: fixture.shop.secret, json: #"{"email": "pat@example.com"}"#)
            let (_, samData) = try await client.send(.post, "/v1/clients", key: fixture.shop.secret, json: #"{"email": "sam@example.com"}"#)
            let (pat, sam) = (try decode(IDBody.self, patData).id, try decode(IDBody.self, samData).id)
            let token = try await client.token(fixture)
            let (saved, savedData) = try await client.charge(
                fixture,
                #"{"token": "\#(token)", "amount": 500, "currency": "EUR", "client": "\#(pat)", "save_payment_method": true}"#
            )
            #expect(saved == .created)
            let method = try #require(try JSONSerialization.jsonObject(with: savedData) as? [String: Any])["payment_method"] as? String
            let (refused, refusedData) = try await client.charge(
                fixture,
                #"{"payment_method": "\#(method ?? "")", "amount": 500, "currency": "EUR", "client": "\#(sam)"}"#
            )
            let error = try errorDetail(refusedData)
            #expect(refused == .unprocessableContent && error.code == "payment_method_client_mismatch" && error.param == "client")
            // Over the limit of one payment (openapi.json's maximum): 422 amount_too_large.
            let (large, largeData) = try await client.charge(fixture, #"{"token": "\#(token)", "amount": 100000000, "currency": "EUR"}"#)
            #expect(try large == .unprocessableContent && errorDetail(largeData).code == "amount_too_large")
        }
    }
}
