import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Payments
import Synchronization
import Testing
import Tokenizer

@testable import CaptureServer

/// `serve --log-format`: one JSON object or one text line per event, nothing else in it.
@Suite("Server log lines")
struct ServerLogHandlerTests {
    /// The lines a handler wrote.
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }

        func logger(_ format: ServerLogHandler.Format) -> Logger {
            var logger = Logger(label: "test.server") { label in
                ServerLogHandler(
                    label: label,
                    format: format,
                    sink: { line in self.lines.withLock { $0.append(String(decoding: line, as: UTF8.self)) } }
                )
            }
            logger.logLevel = .info
            return logger
        }
    }

    /// Issue 65: every JSON error line carried two "message" keys (the line's and the error's).
    @Test("a metadata key named like a field of the line is written apart; no key appears twice")
    func fixedKeys() throws {
        let lines = Lines()
        let logger = lines.logger(.json)
        logger.error("request failed", metadata: ["message": "the vault's database is unavailable", "level": "x", "source": "y", "code": "z"])
        let line = try #require(lines.all.first)
        for key in ["message", "level", "source", "time", "label"] {
            #expect(line.components(separatedBy: "\"\(key)\":").count == 2, "\(key) once in \(line)")
        }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["message"] as? String == "request failed" && object["meta_message"] as? String == "the vault's database is unavailable")
        #expect(object["level"] as? String == "error" && object["meta_level"] as? String == "x" && object["code"] as? String == "z")
    }

    @Test("a JSON line is one object: time, level, message, label, source, and the metadata with numbers as numbers")
    func json() throws {
        let lines = Lines()
        var logger = lines.logger(.json)
        logger[metadataKey: "server"] = "a"
        logger.info(
            "said \"hi\"\n\u{1B}[31m",
            metadata: ["status": .stringConvertible(201), "duration_ms": .stringConvertible(LogNumber("0.53")), "name": "é\\x", "list": ["1", "2"]]
        )
        logger.debug("not at info")
        let line = try #require(lines.all.first)
        #expect(lines.all.count == 1 && line.hasSuffix("}\n") && line.filter { $0 == "\n" }.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["message"] as? String == "said \"hi\"\n\u{1B}[31m" && object["level"] as? String == "info")
        #expect(object["label"] as? String == "test.server" && object["server"] as? String == "a")
        #expect(object["status"] as? Int == 201 && object["duration_ms"] as? Double == 0.53 && object["name"] as? String == "é\\x")
        #expect(object["list"] as? [String] == ["1", "2"])
        let time = try #require(object["time"] as? String)
        #expect(time.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(time)")
        let parsed = try #require(ISO8601DateFormatter.withFractions.date(from: time))
        #expect(abs(parsed.timeIntervalSinceNow) < 60)
    }

    @Test("a text line is one line: control characters shown, not sent to the terminal")
    func text() throws {
        let lines = Lines()
        lines.logger(.text).warning("a\nb\u{1B}[2J", metadata: ["merchant": "x\ny"])
        let line = try #require(lines.all.first)
        #expect(line.filter { $0 == "\n" }.count == 1 && !line.contains("\u{1B}"))
        #expect(line.contains(" warning test.server: a\\u{a}b\\u{1b}[2J merchant=x\\u{a}y ["), "\(line)")
    }

    @Test("the request line names the route template and request id, masks digit runs in the path, and never holds the query")
    func requestLine() async throws {
        let fixture = try await APIFixture()
        let lines = Lines()
        let app = Application(router: CaptureAPI(vault: fixture.vault).buildRouter(), logger: lines.logger(.json))
        try await app.test(.router) { client in
            var headers = HTTPFields()
            headers[.authorization] = "Bearer \(fixture.shop.secret)"
            let id = try await client.execute(uri: "/v1/tokens/tok_4242424242424242?secret=sk_leak", method: .get, headers: headers) {
                $0.headers[HTTPField.Name("Request-Id")!]
            }
            let object = try #require(
                lines.all.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.first {
                    $0["message"] as? String == "request"
                }
            )
            // Refused for its unknown query parameter, and logged without its value.
            #expect(object["route"] as? String == "/v1/tokens/{id}" && object["status"] as? Int == 400)
            #expect(object["request_id"] as? String == id && object["method"] as? String == "GET" && object["duration_ms"] is Double)
            #expect(object["path"] as? String == "/v1/tokens/tok_424242******4242")
            let all = lines.all.joined()
            #expect(!all.contains("4242424242424242") && !all.contains("sk_leak") && !all.contains(fixture.shop.secret))

            // Percent-encoded or full-width, the number is masked all the same (issue 64: the
            // log read `%34%32…` back as it came).
            let encoded = "/v1/tokens/" + "4242424242424242".map { "%3\($0)" }.joined()
            let fullWidth = "/v1/tokens/" + "4242424242424242".map { $0 == "4" ? "%EF%BC%94" : "%EF%BC%92" }.joined()
            for uri in [encoded, fullWidth] {
                _ = try await client.execute(uri: uri, method: .get, headers: headers) { $0.status }
            }
            let paths = lines.all.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .filter { $0["message"] as? String == "request" }.compactMap { $0["path"] as? String }
            #expect(paths.suffix(2) == ["/v1/tokens/424242******4242", "/v1/tokens/424242******4242"], "\(paths)")
            let logged = lines.all.joined()
            #expect(!logged.contains("%34%32%34%32") && !logged.contains("４２４２４２４２"))
        }
    }
}

extension ISO8601DateFormatter {
    static var withFractions: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
