import CardCapture
import Foundation
import Payments
public import Prometheus
import Synchronization
import Tokenizer

/// What the server counts, in a Prometheus registry of its own (served at `GET /metrics`, each
/// metric with its `# HELP` line): requests by route and status with their durations, errors by
/// code, scans by outcome with their durations, transactions by outcome, tokens made, webhook
/// attempts and deliveries by outcome, the webhook queue, charges pending, the sweeper's last
/// pass and the database's connections.
///
/// Labels are route templates (`/v1/tokens/{id}`), statuses, codes and outcomes: never ids,
/// merchants or card data.
public final class APIMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    /// Every series, made once: looking one up in the registry on every request cost more than
    /// the rest of the bookkeeping. Labels are bounded (route templates, statuses, codes,
    /// outcomes), so is this.
    private let counters = Mutex<[[String]: Prometheus.Counter]>([:])
    private let histograms = Mutex<[[String]: DurationHistogram]>([:])
    private let gauges = Mutex<[[String]: Prometheus.Gauge]>([:])
    /// Tokens made by source and transactions by status, found by that one value: the table
    /// above builds and hashes a key of the label and every dimension, a percent of a token
    /// request's time (perf, bench-api).
    private let tokenCounters = Mutex<[String: Prometheus.Counter]>([:])
    private let transactionCounters = Mutex<[String: Prometheus.Counter]>([:])

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        // Every known series from the start, at 0: rate() and alerts see a counter before its
        // first increment (Prometheus' own advice for labelled counters).
        for status in ["succeeded", "declined", "failed", "pending"] { _ = counter("transactions_total", "status", status, in: transactionCounters) }
        for outcome in ["succeeded", "failed"] { _ = counter("webhook_deliveries_total", [("outcome", outcome)]) }
        for outcome in ["succeeded", "retry", "failed"] { _ = counter("webhook_attempts_total", [("outcome", outcome)]) }
        _ = counter("api_errors_total", [("status", "503"), ("code", "storage_unavailable")])
        _ = counter("refunds_total", [])
        _ = counter("transactions_settled_by_sweeper_total", [])
        _ = counter("database_unavailable_total", [])
        _ = gauge("sweeper_last_success_timestamp_seconds")
    }

    static let requestDuration = "http_request_duration_seconds"
    static let scanDuration = "scan_duration_seconds"
    static let cameraAcceptDuration = "camera_accept_duration_seconds"

    /// Each metric's `# HELP` line: what it counts (docs/metrics.md says which alert it serves).
    static let help: [String: String] = [
        "http_requests_total": "Requests answered, by method, route template and status.",
        requestDuration: "Time to answer a request, by method and route template.",
        "api_errors_total": "Requests answered with an error object, by status and code (503s by cause: storage_unavailable, scanner_loading, ...).",
        "scans_total": "Pictures scanned, by outcome (found, not_found, cancelled, an error code) and source (api, page).",
        scanDuration: "Time to scan a picture.",
        "camera_frames_total": "Hosted-page camera frames read, by outcome; frames are never kept.",
        "camera_scans_accepted_total": "Cards accepted from a hosted page's camera.",
        cameraAcceptDuration: "Time from a camera's first frame to its card accepted.",
        "tokens_created_total": "Tokens made, by source (card, scan).",
        "transactions_total": "Charges answered, by status (succeeded, declined, failed, pending); those the sweeper settles by their outcome.",
        "transactions_settled_by_sweeper_total": "Charges left pending that the sweeper settled from the processor's record.",
        "transactions_pending": "Charges pending now (outcome not written; the sweeper settles them), read from the database when asked.",
        "refunds_total": "Refunds made.",
        "webhook_attempts_total": "Webhook attempts, by what followed (succeeded, retry, failed: given up).",
        "webhook_deliveries_total": "Webhook deliveries ended, by outcome (succeeded, failed: given up).",
        "webhook_queue_pending": "Webhook deliveries pending over every merchant, read from the database when asked.",
        "webhook_oldest_pending_age_seconds": "Age of the oldest pending webhook delivery (0 with none), read from the database when asked.",
        "sweeper_last_success_timestamp_seconds":
            "When this server last finished a sweep, Unix seconds (0 before its first; servers on one database take turns).",
        "database_connections_in_use": "Database connections this server holds now (PostgreSQL).",
        "database_connection_waits": "Requests of this server waiting for a database connection now (PostgreSQL).",
        "database_unavailable_total": "Requests refused because the database gave no connection within the bound or closed it (PostgreSQL).",
    ]

    /// Histogram buckets: most API requests take a few milliseconds; a scan takes a tenth of a
    /// second or more; a camera a few seconds.
    static let buckets: [String: [Duration]] = [
        requestDuration: [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .seconds(1), .seconds(5),
        ],
        scanDuration: [
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5),
            .seconds(10),
        ],
        cameraAcceptDuration: [
            .seconds(1), .seconds(2), .seconds(3), .seconds(5), .seconds(10), .seconds(20), .seconds(30), .seconds(60), .seconds(120),
        ],
    ]

    /// One answered request: `route` is the matched template (`NotFound` for no route).
    func request(method: String, route: String, status: Int, duration: Duration) {
        counter("http_requests_total", [("method", method), ("route", route), ("status", String(status))]).increment()
        histogram(Self.requestDuration, [("method", method), ("route", route)]).recordNanoseconds(duration.nanoseconds)
    }

    /// One request answered with an error object: its status and code.
    func apiError(status: Int, code: String) {
        counter("api_errors_total", [("status", String(status)), ("code", code)]).increment()
    }

    /// One image scanned: `found`, `not_found`, or the error code that stopped it; `source`
    /// says where it came from: `api` (`POST /v1/scans`) or `page` (the hosted page's photo).
    func scan(outcome: String, source: String, duration: Duration) {
        counter("scans_total", [("outcome", outcome), ("source", source)]).increment()
        histogram(Self.scanDuration, []).recordNanoseconds(duration.nanoseconds)
    }

    /// One frame from a hosted page's camera read: `found`, `unverified`, `not_found`, or the
    /// error code that stopped it. Frames are counted, never kept.
    func cameraFrame(outcome: String) {
        counter("camera_frames_total", [("outcome", outcome)]).increment()
    }

    /// A card accepted from a page's camera, `after` its first frame.
    func cameraAccepted(after duration: Duration) {
        counter("camera_scans_accepted_total", []).increment()
        histogram(Self.cameraAcceptDuration, []).recordNanoseconds(duration.nanoseconds)
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
        gauge("webhook_queue_pending").set(Int64(state.pending))
        let age = state.oldestPendingCreatedAt.map { max(0, now.timeIntervalSince($0)) } ?? 0
        gauge("webhook_oldest_pending_age_seconds").set(age)
    }

    /// Charges pending now, as the store has it (read when `/metrics` is asked).
    func pendingTransactions(_ count: Int) {
        gauge("transactions_pending").set(Int64(count))
    }

    /// A sweep this server finished.
    func swept(at date: Date) {
        gauge("sweeper_last_success_timestamp_seconds").set(date.timeIntervalSince1970)
    }

    /// The database's connections as the store counts them (read when `/metrics` is asked).
    func databaseConnections(_ state: StoreConnectionState) {
        gauge("database_connections_in_use").set(Int64(state.inUse))
        gauge("database_connection_waits").set(Int64(state.waiting))
        let before = lastUnavailable.exchange(state.unavailable, ordering: .relaxed)
        counter("database_unavailable_total", []).increment(by: Int64(max(0, state.unavailable - before)))
    }

    /// The store's count of refusals when last read, so that the counter adds what is new.
    private let lastUnavailable = Atomic<Int>(0)

    /// The counter of `label` with one dimension, kept in `made` by that dimension's value.
    private func counter(
        _ label: String,
        _ dimension: String,
        _ value: String,
        in made: borrowing Mutex<[String: Prometheus.Counter]>
    ) -> Prometheus.Counter {
        Self.handler(in: made, value) { registry.makeCounter(descriptor: Self.descriptor(label), labels: [(dimension, value)]) }
    }

    private func counter(_ label: String, _ dimensions: [(String, String)]) -> Prometheus.Counter {
        Self.handler(in: counters, label, dimensions) {
            dimensions.isEmpty
                ? registry.makeCounter(descriptor: Self.descriptor(label))
                : registry.makeCounter(descriptor: Self.descriptor(label), labels: dimensions)
        }
    }

    private func gauge(_ label: String) -> Prometheus.Gauge {
        Self.handler(in: gauges, label, []) { registry.makeGauge(descriptor: Self.descriptor(label)) }
    }

    private func histogram(_ label: String, _ dimensions: [(String, String)]) -> DurationHistogram {
        Self.handler(in: histograms, label, dimensions) {
            let buckets = Self.buckets[label] ?? []
            return dimensions.isEmpty
                ? registry.makeDurationHistogram(descriptor: Self.descriptor(label), buckets: buckets)
                : registry.makeDurationHistogram(descriptor: Self.descriptor(label), labels: dimensions, buckets: buckets)
        }
    }

    /// A metric's full name with its help text (one text per name: the registry refuses two).
    private static func descriptor(_ name: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help[name] ?? "")
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
