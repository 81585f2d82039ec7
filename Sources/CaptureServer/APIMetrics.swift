import CardCapture
import CoreMetrics
import Foundation
import Metrics
public import Prometheus
import Synchronization
import Tokenizer

/// What the server counts, through swift-metrics into a Prometheus registry of its own
/// (served at `GET /metrics`): requests by route and status with their durations, scans by
/// outcome with their durations, transactions by outcome, tokens made, webhook attempts and
/// deliveries by outcome and the webhook queue.
///
/// Labels are route templates (`/v1/tokens/{id}`), statuses and outcomes: never ids,
/// merchants or card data.
public final class APIMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory
    /// Every series' handler, made once: looking one up through the factory on every request
    /// cost more than the rest of the bookkeeping. Labels are bounded (route templates,
    /// statuses, outcomes), so is this.
    private let counters = Mutex<[[String]: CoreMetrics.Counter]>([:])
    private let timers = Mutex<[[String]: CoreMetrics.Timer]>([:])
    private let gauges = Mutex<[[String]: CoreMetrics.Gauge]>([:])
    /// Tokens made by source and transactions by status, found by that one value: the table
    /// above builds and hashes a key of the label and every dimension, a percent of a token
    /// request's time (perf, bench-api).
    private let tokenCounters = Mutex<[String: CoreMetrics.Counter]>([:])
    private let transactionCounters = Mutex<[String: CoreMetrics.Counter]>([:])

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
            Self.cameraAcceptDuration: [
                .seconds(1), .seconds(2), .seconds(3), .seconds(5), .seconds(10), .seconds(20), .seconds(30), .seconds(60), .seconds(120),
            ],
        ]
        self.factory = factory
        // Every known series from the start, at 0: rate() and alerts see a counter before its
        // first increment (Prometheus' own advice for labelled counters).
        for status in ["succeeded", "declined", "failed", "pending"] { _ = counter("transactions_total", "status", status, in: transactionCounters) }
        for outcome in ["succeeded", "failed"] { _ = counter("webhook_deliveries_total", [("outcome", outcome)]) }
        for outcome in ["succeeded", "retry", "failed"] { _ = counter("webhook_attempts_total", [("outcome", outcome)]) }
        _ = counter("refunds_total", [])
        _ = counter("transactions_settled_by_sweeper_total", [])
    }

    static let requestDuration = "http_request_duration_seconds"
    static let scanDuration = "scan_duration_seconds"
    static let cameraAcceptDuration = "camera_accept_duration_seconds"

    /// One answered request: `route` is the matched template (`NotFound` for no route).
    func request(method: String, route: String, status: Int, duration: Duration) {
        counter("http_requests_total", [("method", method), ("route", route), ("status", String(status))]).increment()
        timer(Self.requestDuration, [("method", method), ("route", route)]).recordNanoseconds(duration.nanoseconds)
    }

    /// One image scanned: `found`, `not_found`, or the error code that stopped it; `source`
    /// says where it came from: `api` (`POST /v1/scans`) or `page` (the hosted page's photo).
    func scan(outcome: String, source: String, duration: Duration) {
        counter("scans_total", [("outcome", outcome), ("source", source)]).increment()
        timer(Self.scanDuration, []).recordNanoseconds(duration.nanoseconds)
    }

    /// One frame from a hosted page's camera read: `found`, `unverified`, `not_found`, or the
    /// error code that stopped it. Frames are counted, never kept.
    func cameraFrame(outcome: String) {
        counter("camera_frames_total", [("outcome", outcome)]).increment()
    }

    /// A card accepted from a page's camera, `after` its first frame.
    func cameraAccepted(after duration: Duration) {
        counter("camera_scans_accepted_total", []).increment()
        timer(Self.cameraAcceptDuration, []).recordNanoseconds(duration.nanoseconds)
    }

    /// One token made, from a card's number or from a scan.
    func tokenCreated(from source: String) {
        counter("tokens_created_total", "source", source, in: tokenCounters).increment()
    }

    /// One transaction answered: `succeeded`, `declined`, `failed`, or `pending` (its outcome not
    /// written; the sweeper settles it and counts it again by its outcome).
    func transaction(status: String) {
        counter("transactions_total", "status", status, in: transactionCounters).increment()
    }

    /// A charge left pending (its request died, or its outcome could not be written) settled
    /// by the sweeper: counted in `transactions_total` by its outcome, and here.
    func settledBySweeper(status: String) {
        transaction(status: status)
        counter("transactions_settled_by_sweeper_total", []).increment()
    }

    /// One refund made.
    func refund() {
        counter("refunds_total", []).increment()
    }

    /// One webhook attempt, by what followed it: `succeeded`, `retry` or `failed` (given up).
    /// A delivery ends with the first or the last, counted in `webhook_deliveries_total`.
    func webhookAttempt(outcome: String) {
        counter("webhook_attempts_total", [("outcome", outcome)]).increment()
        if outcome != "retry" { counter("webhook_deliveries_total", [("outcome", outcome)]).increment() }
    }

    /// The webhook queue as the store has it now (read when `/metrics` is asked): deliveries
    /// pending, over every merchant, and the age of the oldest (0 with none).
    func webhookQueue(_ state: WebhookQueueState, now: Date) {
        gauge("webhook_queue_pending").record(state.pending)
        let age = state.oldestPendingCreatedAt.map { max(0, now.timeIntervalSince($0)) } ?? 0
        gauge("webhook_oldest_pending_age_seconds").record(age)
    }

    /// The counter of `label` with one dimension, kept in `made` by that dimension's value.
    private func counter(
        _ label: String,
        _ dimension: String,
        _ value: String,
        in made: borrowing Mutex<[String: CoreMetrics.Counter]>
    ) -> CoreMetrics.Counter {
        Self.handler(in: made, value) { CoreMetrics.Counter(label: label, dimensions: [(dimension, value)], factory: factory) }
    }

    private func counter(_ label: String, _ dimensions: [(String, String)]) -> CoreMetrics.Counter {
        Self.handler(in: counters, label, dimensions) { CoreMetrics.Counter(label: label, dimensions: dimensions, factory: factory) }
    }

    private func gauge(_ label: String) -> CoreMetrics.Gauge {
        Self.handler(in: gauges, label, []) { CoreMetrics.Gauge(label: label, dimensions: [], factory: factory) }
    }

    private func timer(_ label: String, _ dimensions: [(String, String)]) -> CoreMetrics.Timer {
        Self.handler(in: timers, label, dimensions) { CoreMetrics.Timer(label: label, dimensions: dimensions, factory: factory) }
    }

    /// The handler kept under `key` in `made`, made on first use.
    private static func handler<Key: Hashable & Sendable, Handler: Sendable>(
        in made: borrowing Mutex<[Key: Handler]>,
        _ key: Key,
        make: () -> Handler
    ) -> Handler {
        made.withLock { made in
            if let handler = made[key] { return handler }
            let handler = make()
            made[key] = handler
            return handler
        }
    }

    /// The series' handler from `made`, made and kept on first use.
    private static func handler<Handler: Sendable>(
        in made: borrowing Mutex<[[String]: Handler]>,
        _ label: String,
        _ dimensions: [(String, String)],
        make: () -> Handler
    ) -> Handler {
        handler(in: made, [label] + dimensions.flatMap { [$0.0, $0.1] }, make: make)
    }

    /// The Prometheus text exposition of everything counted so far.
    func exposition() -> [UInt8] { registry.emitToBuffer() }
}
