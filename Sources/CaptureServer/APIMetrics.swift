import CardCapture
import CoreMetrics
import Metrics
public import Prometheus

/// What the server counts, through swift-metrics into a Prometheus registry of its own
/// (served at `GET /metrics`): requests by route and status with their durations, scans by
/// outcome with their durations, transactions by outcome, tokens made.
///
/// Labels are route templates (`/v1/tokens/{id}`), statuses and outcomes: never ids,
/// merchants or card data.
public final class APIMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory
    /// Counters of the token and transaction routes, made once: looking a counter up through
    /// the factory on every request cost more than the rest of the bookkeeping.
    private let tokensCreated: [String: CoreMetrics.Counter]
    private let transactions: [String: CoreMetrics.Counter]

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        // Most API requests take a few milliseconds; a scan takes a tenth of a second or more.
        factory.durationHistogramBuckets = [
            Self.requestDuration: [
                .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
                .milliseconds(100), .milliseconds(250), .seconds(1), .seconds(5),
            ],
            Self.scanDuration: [
                .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5),
                .seconds(10),
            ],
        ]
        self.factory = factory
        func counters(_ label: String, _ dimension: String, _ values: [String]) -> [String: CoreMetrics.Counter] {
            Dictionary(uniqueKeysWithValues: values.map { ($0, CoreMetrics.Counter(label: label, dimensions: [(dimension, $0)], factory: factory)) })
        }
        self.tokensCreated = counters("tokens_created_total", "source", ["card", "scan"])
        self.transactions = counters("transactions_total", "status", ["succeeded", "declined", "failed"])
    }

    static let requestDuration = "http_request_duration_seconds"
    static let scanDuration = "scan_duration_seconds"

    /// One answered request: `route` is the matched template (`NotFound` for no route).
    func request(method: String, route: String, status: Int, duration: Duration) {
        Counter(label: "http_requests_total", dimensions: [("method", method), ("route", route), ("status", String(status))], factory: factory)
            .increment()
        Timer(label: Self.requestDuration, dimensions: [("method", method), ("route", route)], factory: factory).recordNanoseconds(
            duration.nanoseconds
        )
    }

    /// One image scanned: `found`, `not_found`, or the error code that stopped it.
    func scan(outcome: String, duration: Duration) {
        Counter(label: "scans_total", dimensions: [("outcome", outcome)], factory: factory).increment()
        Timer(label: Self.scanDuration, dimensions: [], factory: factory).recordNanoseconds(duration.nanoseconds)
    }

    /// One token made, from a card's number or from a scan.
    func tokenCreated(from source: String) {
        (tokensCreated[source] ?? Counter(label: "tokens_created_total", dimensions: [("source", source)], factory: factory)).increment()
    }

    /// One transaction recorded: `succeeded`, `declined` or `failed`.
    func transaction(status: String) {
        (transactions[status] ?? Counter(label: "transactions_total", dimensions: [("status", status)], factory: factory)).increment()
    }

    /// The Prometheus text exposition of everything counted so far.
    func exposition() -> [UInt8] { registry.emitToBuffer() }
}
