import CaptureServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Payments
import Testing
import Tokenizer

/// Requests that cannot be read as HTTP/1.1 are answered with the API's JSON error and a
/// request id that the log line names, before any routing.
@Suite("Unreadable requests: JSON errors before routing")
struct UnreadableRequestTests {
    struct Answer {
        let head: String
        let error: [String: Any]
    }

    /// Sends `bytes` on a new connection and reads every answer until the server closes it.
    static func exchange(_ port: Int, _ bytes: [UInt8]) async throws -> (text: String, answers: [Answer]) {
        let connection = try RawConnection(port: port, timeout: 10)
        #expect(await connection.send(bytes))
        var text = ""
        while true {
            let part = await connection.receive()
            if part.isEmpty { break }
            text += part
        }
        // Each answer: its head, then as many bytes as its Content-Length says.
        var answers: [Answer] = []
        var rest = Substring(text)
        while rest.hasPrefix("HTTP/1.1 "), let end = rest.range(of: "\r\n\r\n") {
            let head = String(rest[rest.index(rest.startIndex, offsetBy: 9)..<end.lowerBound])
            let length = head.firstMatch(of: /Content-Length: ([0-9]+)/).flatMap { Int($0.1) } ?? 0
            let bytes = Array(rest[end.upperBound...].utf8)
            let body = Array(bytes.prefix(length))
            let error = (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["error"] as? [String: Any] ?? [:]
            answers.append(Answer(head: head, error: error))
            rest = Substring(String(decoding: bytes.dropFirst(length), as: UTF8.self))
        }
        return (text, answers)
    }

    @Test(
        "bad framing, a bad Content-Length, headers past the limit and another HTTP version are JSON errors with a logged request id",
        arguments: [
            ("GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", "400", "invalid_content_length"),
            ("POST /v1/tokens HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", "400", "invalid_content_length"),
            ("BLAH\r\n\r\n", "400", "invalid_http_request"),
            ("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 100_000) + "\r\n\r\n", "431", "request_headers_too_large"),
            ("GET /healthz HTTP/9.1\r\nHost: x\r\n\r\n", "505", "http_version_not_supported"),
        ]
    )
    func unreadable(request: String, status: String, code: String) async throws {
        let fixture = try await APIFixture()
        let api = CaptureAPI(vault: fixture.vault)
        try await api.application(host: "127.0.0.1", port: 0, logger: fixture.logs.logger()).test(.live) { client in
            let (text, answers) = try await Self.exchange(try #require(client.port), Array(request.utf8))
            let answer = try #require(answers.first, "\(text)")
            #expect(answer.head.hasPrefix(status + " ") && answer.head.contains("Content-Type: application/json"), "\(answer.head)")
            #expect(answer.head.contains("Connection: close"))
            #expect(answer.error["code"] as? String == code && answer.error["type"] as? String == "invalid_request_error")
            #expect((answer.error["message"] as? String)?.isEmpty == false)
            let id = try #require(answer.error["request_id"] as? String)
            #expect(id.hasPrefix("req_") && answer.head.contains("Request-Id: \(id)"))
            #expect(fixture.logs.all.contains { $0.contains("request_id=\(id)") && $0.contains("status=\(status)") && $0.contains("code=\(code)") })
        }
    }

    @Test("over https (its public address), the decoder's refusals carry HSTS as every other answer does; over http they do not")
    func strictTransport() async throws {
        let fixture = try await APIFixture()
        for publicURL in ["https://pay.example", nil] {
            var api = CaptureAPI(vault: fixture.vault)
            api.publicURL = publicURL
            try await api.application(host: "127.0.0.1", port: 0, logger: fixture.logs.logger()).test(.live) { client in
                let request = "POST /v1/tokens HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                let (text, answers) = try await Self.exchange(try #require(client.port), Array(request.utf8))
                let answer = try #require(answers.first, "\(text)")
                #expect(answer.head.hasPrefix("400 "), "\(answer.head)")
                #expect(answer.head.contains("Strict-Transport-Security: max-age=31536000") == (publicURL != nil), "\(answer.head)")
            }
        }
    }

    @Test("requests read whole before the bad one are answered first, in order; then the refusal, and the connection closes")
    func pipelined() async throws {
        let fixture = try await APIFixture()
        let api = CaptureAPI(vault: fixture.vault)
        try await api.application(host: "127.0.0.1", port: 0, logger: fixture.logs.logger()).test(.live) { client in
            let bytes = Array(
                ("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/nothing HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "GET /healthz HTTP/1.1\r\nContent-Length: -1\r\n\r\n").utf8
            )
            let (text, answers) = try await Self.exchange(try #require(client.port), bytes)
            #expect(answers.map { String($0.head.prefix(3)) } == ["200", "404", "400"], "\(text)")
            #expect(answers.last?.error["code"] as? String == "invalid_content_length")
            // Every error carries the request id of its log line, routed or not.
            let routed = try #require(answers.dropFirst().first?.error["request_id"] as? String)
            #expect(fixture.logs.all.contains { $0.contains("request_id=\(routed)") && $0.contains("status=404") })
        }
    }

    @Test("a chunked body that breaks its framing mid-request is that request's JSON 400")
    func badChunk() async throws {
        let fixture = try await APIFixture()
        let api = CaptureAPI(vault: fixture.vault)
        try await api.application(host: "127.0.0.1", port: 0, logger: fixture.logs.logger()).test(.live) { client in
            let head = RawConnection.head("/v1/tokens", key: fixture.shop.publishable, type: "application/json", length: nil)
            let (text, answers) = try await Self.exchange(try #require(client.port), head + Array("zz\r\n{}\r\n".utf8))
            let answer = try #require(answers.first, "\(text)")
            #expect(answer.head.hasPrefix("400 ") && answer.error["code"] as? String == "invalid_request", "\(text)")
            #expect((answer.error["request_id"] as? String)?.hasPrefix("req_") == true)
        }
    }
}
