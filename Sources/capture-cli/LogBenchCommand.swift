import ArgumentParser
import CaptureServer
import Foundation
import Logging

/// `capture-cli bench-logs` (not in the help; `make bench-api` runs it): what one request log
/// line costs with swift-log's `StreamLogHandler` (the server's text line before
/// `--log-format`) and with the server's own handler in each format, written to standard
/// error, which the caller points at /dev/null. Rounds interleave the three, so a machine
/// whose speed drifts slows each alike; the figures are medians over the rounds.
struct LogBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-logs",
        abstract: "Measure a request log line's cost with each log handler (standard error to /dev/null).",
        shouldDisplay: false
    )

    @Option(help: "Lines per handler and round.")
    var lines = 100_000

    @Option(help: "Rounds.")
    var rounds = 7

    func validate() throws {
        guard lines >= 1, rounds >= 1 else { throw ValidationError("--lines and --rounds must be at least 1") }
    }

    func run() throws {
        let handlers: [(name: String, logger: Logger)] = [
            ("stream_text", Logger(label: "capture-cli.serve") { StreamLogHandler.standardError(label: $0) }),
            ("server_text", Logger(label: "capture-cli.serve") { ServerLogHandler(label: $0, format: .text) }),
            ("server_json", Logger(label: "capture-cli.serve") { ServerLogHandler(label: $0, format: .json) }),
        ]
        var nanoseconds = [String: [Double]]()
        for _ in 0..<rounds {
            for (name, base) in handlers {
                // A request's logger and line as the request log middleware writes them.
                var logger = base
                logger[metadataKey: "hb.request.id"] = "3f7fbf950a6fedd08c4f8ce59a2963b2"
                let start = ContinuousClock.now
                for index in 0..<lines {
                    logger.info(
                        "request",
                        metadata: [
                            "method": "POST",
                            "route": "/v1/tokens",
                            "path": "/v1/tokens",
                            "status": .stringConvertible(201),
                            "duration_ms": .stringConvertible(LogNumber(index % 2 == 0 ? "0.53" : "1.20")),
                            "merchant": "mer_2m3y9NeeDehHQwADjj3ola",
                            "request_id": "req_4AdW0xxNa9wRM7LG2cAKp5",
                        ]
                    )
                }
                let elapsed = ContinuousClock.now - start
                nanoseconds[name, default: []].append(Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9)
            }
        }
        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        let perLine = nanoseconds.mapValues { median($0) / Double(lines) }
        let baseline = perLine["stream_text"] ?? 1
        var report: [String: Any] = ["lines": lines, "rounds": rounds]
        for (name, value) in perLine {
            report[name + "_ns_per_line"] = (value * 10).rounded() / 10
            report[name + "_vs_stream"] = (value / baseline * 1000).rounded() / 1000
        }
        let data = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    }
}
