import Foundation
import Payments
import Testing
import Tokenizer

#if canImport(Glibc)
import Glibc
#endif

/// `webhooks listen` receiving what a real `capture-cli serve` sends, and `webhooks resend`.
@Suite("webhooks listen and resend, through the built binary")
struct WebhooksCommandTests {
    /// A loopback port nobody listens on now (the system's pick for a socket closed at once).
    static func freePort() throws -> Int {
        let socket = try LoopbackSocket(listening: false)
        close(socket.descriptor)
        return socket.port
    }

    /// Waits up to 30 s for `file` to hold `text`.
    static func wait(for text: String, in file: URL) -> String {
        var content = ""
        for _ in 0..<600 {
            content = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
            if content.contains(text) { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return content
    }

    @Test("listen prints each event the server signs for it, and refuses a request without the signature")
    func listen() throws {
        // `webhooks listen` is on loopback: a local development set-up.
        try CheckoutCommandTests.withServer(options: ["--webhook-allow-private"]) { server, _, secret in
            let port = try Self.freePort()
            let (created, endpointData) = try http(
                "POST",
                server.url + "/v1/webhook_endpoints",
                key: secret,
                type: "application/json",
                // The address `listen` prints, as its help says to register; other paths below.
                body: Data(#"{"url": "http://127.0.0.1:\#(port)/", "events": ["checkout_session.canceled"]}"#.utf8)
            )
            #expect(created == 201)
            let endpoint = try #require(try JSONSerialization.jsonObject(with: endpointData) as? [String: Any])
            let signingSecret = try #require(endpoint["secret"] as? String)

            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("listen-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let out = folder.appendingPathComponent("out")
            let err = folder.appendingPathComponent("err")
            _ = FileManager.default.createFile(atPath: out.path, contents: nil)
            _ = FileManager.default.createFile(atPath: err.path, contents: nil)
            let listener = Process()
            listener.executableURL = CLIRunner.binary
            listener.arguments = ["webhooks", "listen", "--port", "\(port)", "--secret", signingSecret]
            listener.standardOutput = try FileHandle(forWritingTo: out)
            listener.standardError = try FileHandle(forWritingTo: err)
            try listener.run()
            defer {
                listener.terminate()
                listener.waitUntilExit()
            }
            #expect(Self.wait(for: "listening for webhooks on http://127.0.0.1:\(port)/", in: err).contains("listening"))

            let (_, sessionData) = try http(
                "POST",
                server.url + "/v1/checkout_sessions",
                key: secret,
                type: "application/json",
                body: Data(#"{"amount": 500, "currency": "EUR", "return_url": "https://shop.example/done"}"#.utf8)
            )
            let session = try #require(try JSONSerialization.jsonObject(with: sessionData) as? [String: Any])
            let id = try #require(session["id"] as? String)
            #expect(try http("POST", server.url + "/v1/checkout_sessions/\(id)/cancel", key: secret, type: nil, body: nil).0 == 200)
            let printed = Self.wait(for: id, in: out)
            #expect(printed.contains("checkout_session.canceled evt_") && printed.contains("\(id) canceled"), "\(printed)")

            let (forged, _) = try http(
                "POST",
                "http://127.0.0.1:\(port)/hooks",
                key: nil,
                type: "application/json",
                body: Data(#"{"type": "checkout_session.completed"}"#.utf8)
            )
            #expect(forged == 400)
            #expect(Self.wait(for: "refused", in: err).contains("no Capture-Signature of this body under this secret"))
            #expect(!((try? String(contentsOf: out, encoding: .utf8)) ?? "").contains("completed"), "a forged event printed")

            // A signed event sent twice (a retry whose 2xx was lost, or a replay of a request
            // seen on the way) is acknowledged both times and printed once.
            let event = Data(#"{"id": "evt_replayed0001", "type": "checkout_session.completed", "data": {"object": {"id": "cs_x"}}}"#.utf8)
            let signature = WebhookSignature.header(body: Array(event), secret: signingSecret, at: Date())
            for _ in 0..<2 {
                let (status, _) = try http(
                    "POST",
                    "http://127.0.0.1:\(port)/hooks",
                    key: nil,
                    type: "application/json",
                    body: event,
                    headers: [WebhookSignature.headerName: signature]
                )
                #expect(status == 204)
            }
            #expect(Self.wait(for: "evt_replayed0001 came again", in: err).contains("already received, not printed twice"))
            let lines = ((try? String(contentsOf: out, encoding: .utf8)) ?? "").split(separator: "\n")
            #expect(lines.filter { $0.contains("evt_replayed0001") }.count == 1, "\(lines)")
        }
    }

    @Test("resend sends a kept event to an endpoint made after it; nothing to send exits 1, an unknown event 2")
    func resend() throws {
        try CheckoutCommandTests.withServer(options: ["--webhook-allow-private"]) { server, _, secret in
            // An event from before any endpoint: kept all the same.
            let (_, sessionData) = try http(
                "POST",
                server.url + "/v1/checkout_sessions",
                key: secret,
                type: "application/json",
                body: Data(#"{"amount": 500, "currency": "EUR", "return_url": "https://shop.example/done"}"#.utf8)
            )
            let id = try #require((try JSONSerialization.jsonObject(with: sessionData) as? [String: Any])?["id"] as? String)
            #expect(try http("POST", server.url + "/v1/checkout_sessions/\(id)/cancel", key: secret, type: nil, body: nil).0 == 200)
            let (_, eventsData) = try http("GET", server.url + "/v1/events?type=checkout_session.canceled", key: secret, type: nil, body: nil)
            let events = (try JSONSerialization.jsonObject(with: eventsData) as? [String: Any])?["data"] as? [[String: Any]] ?? []
            let event = try #require(events.first?["id"] as? String)
            let arguments = ["webhooks", "resend", event, "--server", server.url, "--key", secret]

            let none = try CLIRunner.run(arguments)
            #expect(none.status == 1 && none.stderr.contains("\(event) was not sent: no endpoint takes its type now"), "\(none.stderr)")

            // Nobody listens at the endpoint: the delivery stays pending, retried on the schedule.
            let (_, endpointData) = try http(
                "POST",
                server.url + "/v1/webhook_endpoints",
                key: secret,
                type: "application/json",
                body: Data(#"{"url": "http://127.0.0.1:\#(try Self.freePort())/hooks"}"#.utf8)
            )
            let endpoint = try #require((try JSONSerialization.jsonObject(with: endpointData) as? [String: Any])?["id"] as? String)
            let sent = try CLIRunner.run(arguments)
            #expect(sent.status == 0 && sent.stdout.hasPrefix("whd_") && sent.stdout.contains(" \(endpoint) checkout_session.canceled"), "\(sent)")
            let again = try CLIRunner.run(arguments)
            #expect(again.status == 1 && again.stderr.contains("each one has it pending already"))

            let unknown = try CLIRunner.run(["webhooks", "resend", "evt_0000000000000000000000", "--server", server.url, "--key", secret])
            #expect(unknown.status == 2 && unknown.stderr.contains("event_not_found"))
            let usage = try CLIRunner.run(["webhooks", "resend", "cs_x", "--server", server.url, "--key", secret])
            #expect(usage.status == 2 && usage.stderr.contains("give an event id"))
        }
    }

    @Test("listen without a secret is refused with what to give")
    func needsSecret() throws {
        let refused = try CLIRunner.run(["webhooks", "listen", "--port", "0"])
        #expect(refused.status == 2 && refused.stderr.contains("give --secret whsec_"))
    }
}
