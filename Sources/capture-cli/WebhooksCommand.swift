import ArgumentParser
import CaptureClient
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Payments
import Synchronization
import Tokenizer

/// `capture-cli webhooks`: a backend developer's side of webhooks.
struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks",
        abstract: "Receive webhook events while developing, and send an event again.",
        subcommands: [Listen.self, Resend.self]
    )

    struct Resend: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send an event again, signed anew with the same body, to every endpoint that takes its type (needs a secret key).",
            discussion: """
                Events are kept for the retention period whether or not an endpoint took them (GET /v1/events), so an \
                event from before an endpoint was made can be sent to it. An endpoint with a delivery of the event still \
                pending is left to it. Prints one line per endpoint it is sent to (the delivery, the endpoint).

                Exit status: 0 when sent to at least one endpoint, 1 when to none (no endpoint takes its type, or each \
                has it pending), 2 on bad usage or when the server refuses it (an unknown event).
                """
        )

        @Argument(help: "The event (evt_…).")
        var event: String

        @OptionGroup var server: ServerOptions

        func validate() throws {
            guard event.hasPrefix("evt_") else { throw ValidationError("give an event id, such as evt_…; GET /v1/events lists them") }
        }

        func run() async throws {
            let (list, data) = try await server.client().call { try await $0.resendEvent(path: .init(id: event)).ok.body.json }
            if server.json { print(String(decoding: data, as: UTF8.self)) }
            guard !list.data.isEmpty else {
                Terminal.writeError(
                    "capture-cli: \(event) was not sent: no endpoint takes its type now, or each one has it pending already"
                )
                throw ExitCode(1)
            }
            if !server.json {
                for delivery in list.data { print("\(delivery.id) \(delivery.endpoint) \(delivery._type.rawValue)") }
            }
        }
    }

    struct Listen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Receive webhook events on a local port, check each one's signature, and print it.",
            discussion: """
                Register the address it prints with POST /v1/webhook_endpoints, then give the secret that answer \
                showed. Each event signed with that secret is answered 204 and printed as a line (its type, its id and \
                its object's id; the whole event with --json), once: an event id received in the last 24 hours (a retry, \
                or a replayed request) is answered 204 and not printed again. Anything else is answered 400 and told on \
                standard error. Runs until interrupted.
                """
        )

        @Option(help: "The address to listen on.")
        var host = "127.0.0.1"

        @Option(help: "The port to listen on.")
        var port = 9000

        @Option(help: "The endpoint's signing secret (whsec_…); defaults to $CAPTURE_WEBHOOK_SECRET.")
        var secret: String?

        @Flag(help: "Print each event's JSON as it came, one per line.")
        var json = false

        func validate() throws {
            guard (0...65_535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
            guard let secret = secret ?? ProcessInfo.processInfo.environment["CAPTURE_WEBHOOK_SECRET"], secret.hasPrefix("whsec_") else {
                throw ValidationError("give --secret whsec_… (shown once, when the endpoint was made) or set CAPTURE_WEBHOOK_SECRET")
            }
        }

        func run() async throws {
            let verifier = WebhookVerifier(secret: secret ?? ProcessInfo.processInfo.environment["CAPTURE_WEBHOOK_SECRET"] ?? "")
            let json = json
            let seen = SeenEvents()
            let router = Router()
            // The address it prints ("/") and any path under it: "**" alone leaves "/" unrouted.
            let receive: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
                let body = Array(try await request.body.collect(upTo: 1 << 20).readableBytesView)
                do {
                    try verifier.verify(body: body, signature: request.headers[HTTPField.Name(WebhookVerifier.header)!])
                } catch {
                    Terminal.writeError(
                        "capture-cli: refused a request to \(request.uri.path): \(error): no Capture-Signature of this body under this secret "
                            + "within 5 minutes of now (answered 400)"
                    )
                    return Response(status: .badRequest)
                }
                // A signed event comes again when a 2xx was lost on the way (the server retries
                // it), or when someone replays a request they saw: acknowledged, told once.
                let id = (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["id"] as? String
                if let id, !seen.insert(id, at: Date()) {
                    Terminal.writeError("capture-cli: \(id) came again; already received, not printed twice (answered 204)")
                    return Response(status: .noContent)
                }
                Self.print(json ? String(decoding: body, as: UTF8.self) : Self.summary(of: body))
                return Response(status: .noContent)
            }
            router.post("/", use: receive)
            router.post("**", use: receive)
            var logger = Logger(label: "capture-cli.webhooks")
            logger.logLevel = .warning
            let app = Application(
                router: router,
                configuration: .init(address: .hostname(host, port: port), serverName: "capture-webhooks"),
                onServerRunning: { channel in
                    let bound = channel.localAddress?.port ?? port
                    Terminal.writeError("listening for webhooks on http://\(host):\(bound)/ (Ctrl-C to stop)")
                },
                logger: logger
            )
            try await app.runService()
        }

        /// The event ids received in the last day (the server's retries stop after 24 hours),
        /// at most ``limit`` of them: at the limit, those past the day go, then the oldest.
        final class SeenEvents: Sendable {
            static let limit = 100_000
            static let window: TimeInterval = 24 * 60 * 60
            private let times = Mutex<[String: Date]>([:])

            /// Whether `id` is new (or last seen more than a day ago); it is remembered from now.
            func insert(_ id: String, at now: Date) -> Bool {
                times.withLock { times in
                    if let seen = times[id], now.timeIntervalSince(seen) <= Self.window { return false }
                    if times.count >= Self.limit {
                        times = times.filter { now.timeIntervalSince($0.value) <= Self.window }
                        if times.count >= Self.limit, let oldest = times.min(by: { $0.value < $1.value }) { times[oldest.key] = nil }
                    }
                    times[id] = now
                    return true
                }
            }
        }

        /// `type evt_… object_id` for a line on a terminal.
        static func summary(of body: [UInt8]) -> String {
            guard let event = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else { return "(not JSON)" }
            let object = (event["data"] as? [String: Any])?["object"] as? [String: Any]
            var line = "\(event["type"] as? String ?? "?") \(event["id"] as? String ?? "?")"
            if let id = object?["id"] as? String { line += " " + id }
            if let status = object?["status"] as? String { line += " " + status }
            return line
        }

        /// A line on standard output, written at once (print's buffer would hold it in a pipe).
        static func print(_ line: String) {
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
    }
}
