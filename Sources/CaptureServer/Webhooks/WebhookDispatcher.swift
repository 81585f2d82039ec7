import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Payments
import ServiceLifecycle
import Synchronization
import Tokenizer

/// Sends webhook deliveries from the store's queue until shut down: every `pollInterval` it
/// leases the deliveries that are due, posts each event to its endpoint signed with the
/// endpoint's secret, and records the attempt; a delivery that fails is tried again on the
/// schedule, for a day. The queue is in the store, so deliveries survive a restart (a lease
/// left by a process that died lapses and the delivery is taken over), and several servers
/// on one store never send one delivery at once.
///
/// Delivery is at least once: an endpoint may see an event twice (a crash after it answered,
/// before the answer was recorded) and should ignore an `evt_` id it has handled.
struct WebhookDispatcher: Service {
    struct Configuration: Sendable {
        /// How often the queue is looked at when it had nothing due.
        var pollInterval: Duration = .seconds(1)
        /// How long an endpoint has to answer, from connecting to the last byte.
        var timeout: Duration = .seconds(10)
        /// Deliveries sent at once.
        var batch = 16
        /// Deliveries sent at once to one endpoint.
        var perEndpoint = 4
        /// Deliveries sent at once to one merchant's endpoints together.
        var perMerchant = 8
        /// How long an attempt runs before it may be cut short while every sender is busy and
        /// another delivery is due (it is tried again on the schedule).
        var contested: Duration = .seconds(2)
        var schedule = Payments.WebhookSchedule()
    }

    let payments: Payments
    let configuration: Configuration
    let logger: Logger
    /// Where attempts are counted (`webhook_attempts_total`, `webhook_deliveries_total`).
    var metrics: APIMetrics?

    func run() async throws {
        let client = Self.client(configuration, logger: logger)
        // Cancelled mid-sleep on shutdown; a delivery cut short keeps its lease, which lapses,
        // and is sent again after the restart. Those leased and not yet sent are given back.
        let unsent = await cancelWhenGracefulShutdown { await dispatch(with: client) }
        if !unsent.isEmpty {
            do throws(VaultError) {
                try await payments.releaseWebhookDeliveries(unsent)
            } catch {
                logger.warning(
                    "giving back leased webhook deliveries failed: they are sent when their lease lapses",
                    metadata: ["count": "\(unsent.count)", "code": "\(error.code)", "cause": "\(error.cause ?? error.message)"]
                )
            }
        }
        try? await client.shutdown()
    }

    /// Keeps up to `batch` deliveries on their way: due ones are leased ahead, up to `batch`
    /// in hand that may start (besides those waiting for their share) and for each endpoint
    /// (merchant) as many again as it may have on their way, so that as one ends the next is
    /// already in hand, and the store is asked again while the others are sent. A slow endpoint holds only its own (at most `perEndpoint` at once,
    /// and its merchant's endpoints together `perMerchant`), never the deliveries behind it.
    /// While every sender is busy, the attempt that has run longest, past `contested`, is cut
    /// short when another delivery waits: endpoints that do not answer cannot keep others
    /// waiting for their whole timeout. An attempt's outcome is recorded as the next one
    /// starts. Returns the deliveries in hand when it was cancelled, never sent.
    private func dispatch(with client: HTTPClient) async -> [DueWebhookDelivery] {
        /// A delivery on its way.
        struct Running {
            let endpointID: String
            let merchantID: String
            let started: ContinuousClock.Instant
            let cut: Cut
        }
        enum Done: Sendable {
            case sent(deliveryID: String, Attempt?)
            case leased([DueWebhookDelivery])
            case recorded
            case waited
        }
        return await withTaskGroup(of: Done.self) { group in
            // Deliveries on their way, by delivery id: what is counted against the shares and
            // what may be cut short.
            var running: [String: Running] = [:]
            // Leased and not yet sent, oldest first.
            var inHand: [DueWebhookDelivery] = []
            var leasing = false
            // The last lease found nothing: the next waits for the poll or a delivery's end.
            var quiet = false
            // A delivery ended while a lease was being asked for: what it held counted against
            // its endpoint's share in that lease, so an empty answer is no reason to wait.
            var endedWhileLeasing = false
            var waiting = false
            /// The deliveries on their way, by endpoint and by merchant.
            func shares() -> (byEndpoint: [String: Int], byMerchant: [String: Int]) {
                running.values.reduce(into: ([:], [:])) { counts, running in
                    counts.byEndpoint[running.endpointID, default: 0] += 1
                    counts.byMerchant[running.merchantID, default: 0] += 1
                }
            }
            func mayStart(_ delivery: DueWebhookDelivery, _ byEndpoint: [String: Int], _ byMerchant: [String: Int]) -> Bool {
                byEndpoint[delivery.delivery.endpointID, default: 0] < configuration.perEndpoint
                    && byMerchant[delivery.merchantID, default: 0] < configuration.perMerchant
            }
            func startWhatMay() {
                var (byEndpoint, byMerchant) = shares()
                var index = 0
                while index < inHand.count && running.count < configuration.batch {
                    let delivery = inHand[index]
                    guard mayStart(delivery, byEndpoint, byMerchant) else {
                        index += 1
                        continue
                    }
                    inHand.remove(at: index)
                    byEndpoint[delivery.delivery.endpointID, default: 0] += 1
                    byMerchant[delivery.merchantID, default: 0] += 1
                    let cut = Cut()
                    let id = delivery.delivery.id
                    running[id] = Running(endpointID: delivery.delivery.endpointID, merchantID: delivery.merchantID, started: .now, cut: cut)
                    group.addTask { .sent(deliveryID: id, await send(delivery, with: client, cut: cut)) }
                }
            }
            func leaseMore() {
                // Those in hand that wait for their endpoint's or merchant's share leave room:
                // they must not keep another merchant's deliveries from being leased.
                let (byEndpoint, byMerchant) = shares()
                let room = configuration.batch - inHand.filter { mayStart($0, byEndpoint, byMerchant) }.count
                guard !leasing, !quiet, room > 0 else { return }
                leasing = true
                let holding =
                    running.values.map { (endpoint: $0.endpointID, merchant: $0.merchantID) }
                    + inHand.map { (endpoint: $0.delivery.endpointID, merchant: $0.merchantID) }
                group.addTask { .leased(await lease(room, holding: holding)) }
            }
            /// Every sender busy, one attempt past its fair time, and a delivery in hand that
            /// its endpoint's and merchant's shares let start: the attempt is cut short.
            func cutWhenContested() {
                guard running.count >= configuration.batch else { return }
                let (byEndpoint, byMerchant) = shares()
                guard inHand.contains(where: { mayStart($0, byEndpoint, byMerchant) }),
                    let longest = running.values.filter({ !$0.cut.isSet }).min(by: { $0.started < $1.started }),
                    ContinuousClock.now - longest.started >= configuration.contested
                else { return }
                longest.cut.set()
            }
            while !Task.isCancelled {
                startWhatMay()
                leaseMore()
                cutWhenContested()
                // Look again after the poll interval (more may be due, or an attempt may have
                // run past its fair time while every sender is busy), or sooner when a lease
                // comes back or a delivery ends (its endpoint may have more).
                if !waiting {
                    waiting = true
                    group.addTask {
                        try? await Task.sleep(for: configuration.pollInterval)
                        return .waited
                    }
                }
                switch await group.next() {
                case .sent(let id, let attempt)?:
                    running[id] = nil
                    quiet = false
                    if leasing { endedWhileLeasing = true }
                    if let attempt {
                        // Recorded to the end even when the dispatcher is stopped meanwhile:
                        // an answer the endpoint gave is not sent again.
                        group.addTask {
                            await Task { await record(attempt) }.value
                            return .recorded
                        }
                    }
                case .leased(let more)?:
                    leasing = false
                    quiet = more.isEmpty && !endedWhileLeasing
                    endedWhileLeasing = false
                    inHand += more
                case .waited?:
                    waiting = false
                    quiet = false
                case .recorded?:
                    break
                case nil:
                    // Nothing on its way and no wait set (not expected): wait, never spin.
                    try? await Task.sleep(for: configuration.pollInterval)
                }
            }
            group.cancelAll()
            // A lease that came back as the dispatcher stopped is in hand too.
            while let done = await group.next() {
                if case .leased(let more) = done { inHand += more }
            }
            return inHand
        }
    }

    /// Leases up to `limit` due deliveries for long enough to wait in hand behind an attempt
    /// and then be sent. `holding` are the deliveries this dispatcher has on their way or in
    /// hand: with them no endpoint (merchant) has more than twice its share, half on their way
    /// and half next.
    private func lease(_ limit: Int, holding: [(endpoint: String, merchant: String)]) async -> [DueWebhookDelivery] {
        do throws(VaultError) {
            return try await payments.dueWebhookDeliveries(
                limit: limit,
                lease: configuration.timeout * 4,
                perEndpoint: configuration.perEndpoint * 2,
                perMerchant: configuration.perMerchant * 2,
                sending: holding.reduce(into: [:]) { $0[$1.endpoint, default: 0] += 1 },
                sendingByMerchant: holding.reduce(into: [:]) { $0[$1.merchant, default: 0] += 1 }
            )
        } catch {
            if !Task.isCancelled {
                logger.error(
                    "reading the webhook queue failed",
                    metadata: ["code": "\(error.code)", "cause": "\(error.cause ?? error.message)"]
                )
            }
            return []
        }
    }

    /// An attempt made, to be recorded.
    struct Attempt: Sendable {
        let due: DueWebhookDelivery
        let statusCode: Int?
        let failure: String?
        let started: Date
        let duration: Duration
    }

    /// Posts one delivery; what came of it, or nil when the dispatcher was stopped first (the
    /// lease lapses and the delivery is sent again after the restart).
    private func send(_ due: DueWebhookDelivery, with client: HTTPClient, cut: Cut) async -> Attempt? {
        let started = Date()
        let clock = ContinuousClock()
        let start = clock.now
        var statusCode: Int?
        var failure: String?
        // Refused by the address policy: the attempt says only that (no time taken).
        var refused = false
        // A client of this delivery's own, connected to the address checked.
        var pinned: HTTPClient?
        do {
            // A URL stored before its checks were as they are now (a port past 65535 stops the
            // process inside the HTTP client) is a failed attempt, never sent.
            let address = try WebAddress(due.endpointURL, param: "url")
            // Resolved and checked now, and connected to at the address checked.
            switch await payments.webhookAddresses.destination(of: address) {
            case .asWritten:
                break
            case .pinned(let ip):
                guard case .domain(let name) = address.host else { break }
                pinned = Self.client(configuration, logger: logger, dnsOverride: [name: ip])
            case .unresolved:
                throw Undeliverable(message: "the endpoint's host name does not resolve")
            case .refused:
                refused = true
                throw Undeliverable(message: WebhookAddressPolicy.refusal)
            }
            let secret = try payments.webhookSecret(of: due)
            var request = HTTPClientRequest(url: address.text)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "User-Agent", value: "card-capture-webhooks/1")
            request.headers.add(name: WebhookSignature.headerName, value: WebhookSignature.header(body: due.body, secret: secret, at: started))
            request.body = .bytes(ByteBuffer(bytes: due.body))
            // The exchange runs as a task of its own, so that cutting it short leaves this one
            // free to record the attempt.
            let exchange = Task { [configuration, logger, pinned] in
                let response = try await (pinned ?? client).execute(request, timeout: TimeAmount(configuration.timeout), logger: logger)
                // Read (and drop) what the endpoint says, up to a bound, so the connection can
                // be used again; a longer answer only costs the connection.
                _ = try? await response.body.collect(upTo: 64 * 1024)
                return Int(response.status.code)
            }
            cut.attach(exchange)
            statusCode = try await withTaskCancellationHandler {
                try await exchange.value
            } onCancel: {
                exchange.cancel()
            }
        } catch let error as VaultError {
            failure = error.message
        } catch let error as Undeliverable {
            failure = error.message
        } catch {
            failure = Self.describe(error, timeout: configuration.timeout)
        }
        let duration = refused ? .zero : clock.now - start
        if let pinned { try? await pinned.shutdown() }
        if cut.isSet {
            statusCode = nil
            failure = "cut short after \(duration.components.seconds) s without an answer: other deliveries were waiting"
        } else if Task.isCancelled {
            // Cut short by shutdown: not the endpoint's failure.
            return nil
        }
        return Attempt(due: due, statusCode: statusCode, failure: failure, started: started, duration: duration)
    }

    /// Records an attempt, counts it, and logs one that failed.
    private func record(_ attempt: Attempt) async {
        let due = attempt.due
        do {
            let outcome = try await payments.recordWebhookAttempt(
                due,
                statusCode: attempt.statusCode,
                error: attempt.failure,
                startedAt: attempt.started,
                duration: attempt.duration,
                schedule: configuration.schedule
            )
            let counted =
                switch outcome {
                case .succeeded: "succeeded"
                case .retry: "retry"
                case .failed: "failed"
                }
            metrics?.webhookAttempt(outcome: counted)
            if outcome != .succeeded {
                var metadata: Logger.Metadata = [
                    "delivery": "\(due.delivery.id)",
                    "endpoint": "\(due.delivery.endpointID)",
                    "attempt": "\(due.delivery.attempts)",
                    "outcome": "\(outcome == .failed ? "given up" : "will retry")",
                ]
                if let statusCode = attempt.statusCode { metadata["status"] = "\(statusCode)" }
                if let failure = attempt.failure { metadata["error"] = "\(failure)" }
                logger.warning("webhook delivery failed", metadata: metadata)
            }
        } catch {
            logger.error(
                "recording a webhook attempt failed",
                metadata: ["delivery": "\(due.delivery.id)", "code": "\(error.code)", "cause": "\(error.cause ?? error.message)"]
            )
        }
    }

    /// Cuts one attempt's exchange short to make room (not on shutdown), and remembers that
    /// it did.
    final class Cut: Sendable {
        private let state = Mutex<(isSet: Bool, exchange: Task<Int, any Error>?)>((false, nil))

        var isSet: Bool { state.withLock { $0.isSet } }

        /// The exchange to cancel; cancelled at once when the cut came first.
        func attach(_ exchange: Task<Int, any Error>) {
            let already = state.withLock { state in
                state.exchange = exchange
                return state.isSet
            }
            if already { exchange.cancel() }
        }

        func set() {
            let exchange = state.withLock { state in
                state.isSet = true
                return state.exchange
            }
            exchange?.cancel()
        }
    }

    /// A delivery not sent, and why.
    struct Undeliverable: Error {
        let message: String
    }

    /// The client deliveries go through; with `dnsOverride`, one for a single delivery to a
    /// host name, connected to the address checked (TLS still names and verifies the host).
    static func client(_ configuration: Configuration, logger: Logger, dnsOverride: [String: String] = [:]) -> HTTPClient {
        var settings = HTTPClient.Configuration(
            // A redirect is an answer that is not 2xx: following it would send a signed
            // event to an address nobody registered.
            redirectConfiguration: .disallow,
            timeout: .init(connect: TimeAmount(configuration.timeout), read: TimeAmount(configuration.timeout)),
            decompression: .disabled
        )
        settings.dnsOverride = dnsOverride
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: settings, backgroundActivityLogger: logger)
    }

    /// A few words on why no answer came, for the attempt's record: never the endpoint's URL,
    /// which may carry a secret of the merchant's in its query.
    static func describe(_ error: any Error, timeout: Duration) -> String {
        let seconds = timeout.components.seconds
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .writeTimeout:
                return "no answer within \(seconds) s"
            case .connectTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout:
                return "could not connect within \(seconds) s"
            case .remoteConnectionClosed:
                return "the endpoint closed the connection without answering"
            case .invalidURL, .emptyHost, .emptyScheme:
                return "the endpoint's URL cannot be used"
            default:
                return "the request failed (\(error.shortDescription))"
            }
        }
        // Refused, unreachable, no such host: NIO's connection errors.
        return "could not connect to the endpoint (\(String(describing: type(of: error))))"
    }
}
