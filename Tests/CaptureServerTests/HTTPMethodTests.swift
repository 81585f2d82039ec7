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

/// HTTP as clients expect it: HEAD wherever GET is, 405 with Allow on a known path, 415 for
/// a body that is not JSON where JSON is taken.
@Suite("HTTP methods and media types")
struct HTTPMethodTests {
    struct Answer {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let body: Data
    }

    static func ask(_ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, key: String? = nil) async throws -> Answer {
        var headers = HTTPFields()
        if let key { headers[.authorization] = "Bearer \(key)" }
        return try await client.execute(uri: uri, method: method, headers: headers, body: nil) { response in
            Answer(status: response.status, headers: response.headers, body: Data(response.body.readableBytesView))
        }
    }

    @Test("HEAD answers wherever GET does: the same status and headers, no body")
    func head() async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            let (created, tokenData) = try await client.send(
                .post,
                "/v1/tokens",
                key: fixture.shop.publishable,
                json: #"{"number": "4242424242424242", "exp_month": 12, "exp_year": 2031, "cvc": "123"}"#
            )
            #expect(created == .created)
            let token = try #require((try JSONSerialization.jsonObject(with: tokenData) as? [String: Any])?["id"] as? String)
            for (uri, key) in [
                ("/healthz", nil), ("/openapi.json", nil), ("/pay/assets/checkout.js", nil), ("/v1/tokens/\(token)", fixture.shop.secret),
            ] {
                let get = try await Self.ask(client, .get, uri, key: key)
                let head = try await Self.ask(client, .head, uri, key: key)
                #expect(get.status == .ok && head.status == get.status, "\(uri)")
                #expect(head.body.isEmpty, "\(uri)")
                #expect(head.headers[.contentType] == get.headers[.contentType], "\(uri)")
                #expect(head.headers[.contentLength] == String(get.body.count), "\(uri)")
            }
            // HEAD is checked like GET: no key, no answer.
            #expect(try await Self.ask(client, .head, "/v1/tokens/\(token)").status == .unauthorized)
        }
    }

    @Test(
        "a known path with a method it does not take is 405 with Allow; an unknown path stays 404",
        arguments: [
            ("DELETE", "/v1/tokens", "POST"),
            ("GET", "/v1/tokens", "POST"),
            ("TRACE", "/healthz", "GET, HEAD"),
            ("PUT", "/pay/cs_anything", "GET, HEAD, POST"),
            ("PATCH", "/v1/transactions/tr_x", "GET, HEAD"),
            ("POST", "/metrics", "GET, HEAD"),
        ]
    )
    func methodNotAllowed(method: String, uri: String, allow: String) async throws {
        let fixture = try await APIFixture()
        try await fixture.application().test(.router) { client in
            let answer = try await Self.ask(client, try #require(HTTPRequest.Method(method)), uri, key: fixture.shop.secret)
            #expect(answer.status == .methodNotAllowed)
            #expect(answer.headers[.allow] == allow)
            let error = try decode(ErrorBody.self, answer.body).error
            #expect(error.code == "method_not_allowed" && error.message.contains("it takes \(allow)"))
            #expect(answer.headers[HTTPField.Name("Request-Id")!]?.hasPrefix("req_") == true)
            let unknown = try await Self.ask(client, try #require(HTTPRequest.Method(method)), "/v1/nothing-here", key: fixture.shop.secret)
            #expect(unknown.status == .notFound)
            #expect(try decode(ErrorBody.self, unknown.body).error.code == "route_not_found")
        }
    }

    static func post(_ client: some TestClientProtocol, _ uri: String, key: String, type: String?, body: String) async throws -> Answer {
        var headers = HTTPFields()
        headers[.authorization] = "Bearer \(key)"
        if let type { headers[.contentType] = type }
        return try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body)) { response in
            Answer(status: response.status, headers: response.headers, body: Data(response.body.readableBytesView))
        }
    }

    @Test("a JSON route takes JSON (a charset of UTF-8 too) and refuses any other type, or none, with 415")
    func mediaTypes() async throws {
        let fixture = try await APIFixture()
        let card = #"{"number": "4242424242424242", "exp_month": 12, "exp_year": 2031, "cvc": "123"}"#
        try await fixture.application().test(.router) { client in
            for type in ["application/json", "application/json; charset=utf-8", "Application/JSON;charset=\"UTF-8\""] {
                let answer = try await Self.post(client, "/v1/tokens", key: fixture.shop.publishable, type: type, body: card)
                #expect(answer.status == .created, "\(type)")
            }
            for (type, says) in [
                ("application/x-www-form-urlencoded", "does not take 'application/x-www-form-urlencoded'"),
                ("text/plain", "does not take 'text/plain'"),
                // Another JSON-based type is another format (JSON:API, a merge patch): not this one.
                ("application/vnd.api+json", "does not take 'application/vnd.api+json'"),
                ("application/json; charset=latin1", "UTF-8 only, not charset='latin1'"),
                (nil, "has no Content-Type"),
            ] as [(String?, String)] {
                let answer = try await Self.post(client, "/v1/tokens", key: fixture.shop.publishable, type: type, body: card)
                #expect(answer.status == .unsupportedMediaType, "\(type ?? "none")")
                let error = try decode(ErrorBody.self, answer.body).error
                #expect(error.code == "unsupported_media_type" && error.type == "invalid_request_error")
                #expect(error.message.contains(says) && error.message.contains("application/json"), "\(error.message)")
                #expect(!error.message.contains("4242"))
            }
            // The secret-key routes too; a POST with no body and no type has no parameters.
            let client_ = try await Self.post(client, "/v1/clients", key: fixture.shop.secret, type: "text/plain", body: #"{"email": "a@b.example"}"#)
            #expect(client_.status == .unsupportedMediaType)
            let bare = try await Self.post(client, "/v1/clients", key: fixture.shop.secret, type: nil, body: "")
            #expect(bare.status == .created)
        }
    }
}
