public import CardCapture
import Foundation
import HTTPTypes
public import Hummingbird
import HummingbirdCore
public import HummingbirdTLS
public import Logging
import NIOCore
public import Payments
import ServiceLifecycle
public import Tokenizer

/// The HTTP API of the contract (DESIGN.md), over a vault. `capture-cli serve` and the tests
/// build the same router.
///
/// ```swift
/// let app = CaptureAPI(vault: vault).application(host: "127.0.0.1", port: 8080, logger: logger)
/// try await app.runService()
/// ```
public struct CaptureAPI: Sendable {
    public let vault: Vault
    /// Who authorizes charges: the sandbox unless told otherwise.
    public let processor: any Processor
    /// Reads `POST /v1/scans` images; without one, scans answer 503 and all else works.
    public let scanner: CardScanner?
    /// A scanner loading beside the server (`serve`), used when ``scanner`` is nil: scans wait
    /// for it (503 `scanner_loading`), and `/readyz` says `starting` until it has loaded.
    public var scannerSlot: ScannerSlot?
    /// How often expired tokens' card data is purged.
    public var sweepInterval: Duration
    /// What `GET /metrics` shows.
    public let metrics: APIMetrics
    /// How many images may be held at once (scanning or waiting for a thread); more are 429.
    public var scanLimit = 4 * System.coreCount
    /// How long a still picture's scan (`POST /v1/scans`, a page's photo) may search before it
    /// answers with what it decided (``CardScanner/Configuration/timeBudget``); nil for no
    /// bound. `serve --scan-time-budget`. Without one, a picture made to confuse the scanner
    /// held a thread for a minute.
    public var scanTimeBudget: Duration? = .seconds(3)
    /// How long a request holds its Idempotency-Key before a retry may take it over, and how
    /// old a pending charge must be before the sweeper settles it (its request died).
    public var idempotencyLease: Duration = .seconds(30)
    /// This server as the holder of its requests' Idempotency-Keys, heard from while it runs
    /// (``application(host:port:logger:)``): a retry on another server takes a key over within
    /// its grace of this one dying, not at the lease's end. Nil when the processor promises no
    /// bound on an authorization's time.
    public let presence: ServerPresence?
    /// Tokens a publishable key may create a minute from one client address (a third of that
    /// at once); 0 for no limit. `serve --token-rate-limit`.
    public var tokenRateLimit = 60 {
        didSet { tokenLimiter = Self.limiter(perMinute: tokenRateLimit, clock: rateLimitClock) }
    }
    /// The limiter's clock (time since a start); nil for the real one. For tests.
    var rateLimitClock: (@Sendable () -> Duration)? {
        didSet { tokenLimiter = Self.limiter(perMinute: tokenRateLimit, clock: rateLimitClock) }
    }
    private var tokenLimiter: RateLimiter? = Self.limiter(perMinute: 60, clock: nil)
    /// Reverse proxies whose `X-Forwarded-For` names the client the token limit counts by
    /// (`serve --trusted-proxy`); none by default, and then the header is ignored.
    public var trustedProxies = TrustedProxies()
    /// The address the hosted checkout page is reached at (`serve --public-url`, such as
    /// `https://pay.example.com`); nil for the address each API request was sent to.
    public var publicURL: String?
    /// Days after which expired tokens and scans are deleted outright (their card data goes
    /// minutes after they expire); 0 keeps them. `serve --retention-days`.
    public var retentionDays = 30
    /// Timeouts and the cap on open connections (`serve --idle-timeout`, `--header-timeout`,
    /// `--body-timeout`, `--max-connections`).
    public var connectionLimits = ConnectionLimits()
    /// How webhooks are sent: how often the queue is read, how long an endpoint has to
    /// answer, and when a failed delivery is tried again.
    public var webhooks = WebhookSettings()
    /// The address the server listens at, for the links in webhook events when there is no
    /// ``publicURL``; ``application(host:port:logger:)`` sets it.
    var listenURL = "http://127.0.0.1:8080"
    /// HTTPS for the server itself (`serve --tls-cert --tls-key`); nil serves plain HTTP (behind
    /// a proxy that ends TLS, or for development on one machine).
    public var tls: TLSConfiguration?

    public init(
        vault: Vault,
        scanner: CardScanner? = nil,
        processor: any Processor = SandboxProcessor(),
        sweepInterval: Duration = .seconds(30),
        metrics: APIMetrics = APIMetrics()
    ) {
        self.metrics = metrics
        self.vault = vault
        self.scanner = scanner
        self.processor = processor
        self.sweepInterval = sweepInterval
        presence = ServerPresence(longestAuthorization: processor.longestAuthorization)
    }

    /// Every route: `/healthz`, `/metrics` and `/openapi.json` open, `/v1/…` behind an API key.
    public func buildRouter() -> Router<APIContext> {
        // HEAD wherever GET: the GET's status and headers (Content-Length included), no body;
        // a load balancer's `HEAD /healthz` checks the database as a GET does.
        let router = Router(context: APIContext.self, options: .autoGenerateHeadEndpoints)
        router.middlewares.add(RequestLogMiddleware(metrics: metrics))
        let knownRoutes = KnownRoutes()
        router.middlewares.add(MethodMiddleware(routes: knownRoutes))
        router.middlewares.add(BodyDrainMiddleware())
        if overHTTPS { router.middlewares.add(StrictTransportMiddleware()) }
        // A load balancer takes an instance whose database does not answer out of service:
        // within a second, whatever the database does (`/healthz` as before, `/readyz` by
        // its usual name); `/livez` says only that the process answers.
        let probe = HealthProbe { [vault] in await vault.store.ping() }
        let healthy: @Sendable (Request, APIContext) async -> Response = { _, _ in
            guard await probe.answers() else {
                return APIJSON.response(.serviceUnavailable, Array(#"{"status":"unavailable","database":"unreachable"}"#.utf8))
            }
            return APIJSON.response(.ok, Array(#"{"status":"ok"}"#.utf8))
        }
        router.get("healthz", use: healthy)
        // Ready: the database answers, and the scanner's models have loaded (or failed to).
        router.get("readyz") { [scannerSlot] request, context in
            if let scannerSlot, !scannerSlot.isSettled {
                return APIJSON.response(.serviceUnavailable, Array(#"{"status":"starting","scanner":"loading"}"#.utf8))
            }
            return await healthy(request, context)
        }
        router.get("livez") { _, _ in APIJSON.response(.ok, Array(#"{"status":"alive"}"#.utf8)) }
        router.get("openapi.json") { _, _ in APIJSON.response(.ok, Self.openAPIDocument) }
        router.get("metrics") { [payments, vault] _, _ in
            // The queue is read from the store as it is asked for; without the store, the
            // gauges keep what they last showed and the rest is still served.
            if let queue = try? await payments.webhookQueueState() { metrics.webhookQueue(queue, now: vault.configuration.now()) }
            if let pending = try? await vault.store.pendingTransactionCount() { metrics.pendingTransactions(pending) }
            if let connections = vault.store.connectionState { metrics.databaseConnections(connections) }
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
        let v1 = router.group("v1").add(middleware: AuthMiddleware(vault: vault)).add(middleware: QueryParameterMiddleware())
            .add(middleware: PathParameterMiddleware())
        let idempotent = IdempotentRequests(keys: IdempotencyKeys(vault: vault, lease: idempotencyLease, presence: presence))
        TokenRoutes(vault: vault, metrics: metrics, idempotent: idempotent, limiter: tokenLimiter, trustedProxies: trustedProxies).add(to: v1)
        let scanning = makeScanning()
        ScanRoutes(vault: vault, scanning: scanning, metrics: metrics, idempotent: idempotent, trustedProxies: trustedProxies).add(to: v1)
        PaymentRoutes(payments: payments, idempotent: idempotent, metrics: metrics).add(to: v1)
        CheckoutRoutes(payments: payments, idempotent: idempotent, publicURL: publicURL, overTLS: tls != nil).add(to: v1)
        WebhookRoutes(payments: payments, idempotent: idempotent).add(to: v1)
        EventRoutes(payments: payments, idempotent: idempotent).add(to: v1)
        CheckoutPageRoutes(
            payments: payments,
            scanning: scanning,
            secureCookies: overHTTPS,
            limiter: tokenLimiter,
            trustedProxies: trustedProxies,
            metrics: metrics
        )
        .add(to: router)
        knownRoutes.learn(router)
        return router
    }

    /// Whether the server is reached over https (its public address, else its own TLS): every
    /// answer then carries HSTS, and the page's cookies are `__Host-` and Secure.
    var overHTTPS: Bool { publicURL?.lowercased().hasPrefix("https:") ?? (tls != nil) }

    /// The scanner's places and threads, its still pictures' search bounded by ``scanTimeBudget``:
    /// on ``scanner``, or on the one ``scannerSlot`` loads.
    func makeScanning() -> ScanRoutes.Scanning? {
        guard let slot = scanner.map({ ScannerSlot(ready: $0) }) ?? scannerSlot else { return nil }
        let budget = scanTimeBudget
        return ScanRoutes.Scanning(slot: slot, adjust: { $0.searching(firstPassOnly: false, timeBudget: budget) }, limit: scanLimit)
    }

    /// The OpenAPI 3.1 document of every route (`openapi.json` beside this file; a test keeps
    /// it true to the routes and error codes).
    public static let openAPIDocument: [UInt8] = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json"), let data = try? Data(contentsOf: url) else {
            // The file is part of the target; without it the build itself is broken.
            preconditionFailure("openapi.json is missing from the CaptureServer bundle")
        }
        return Array(data)
    }()

    private static func limiter(perMinute: Int, clock: (@Sendable () -> Duration)?) -> RateLimiter? {
        perMinute > 0 ? RateLimiter(perMinute: perMinute, clock: clock) : nil
    }

    /// Payments that write webhook events, with sessions' links to this server's pages.
    var payments: Payments {
        var payments = Payments(vault: vault, processor: processor, webhookObjects: APIWebhookObjects(baseURL: publicURL ?? listenURL))
        payments.webhookAddresses = webhooks.addresses
        return payments
    }

    /// The server with the vault's sweeper and the webhook dispatcher beside it. With ``tls``
    /// set, a certificate and key that do not go together make `runService()` throw at start.
    public func application(host: String, port: Int, logger: Logger) -> some ApplicationProtocol {
        var api = self
        api.listenURL = (tls == nil ? "http://" : "https://") + (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
        return api.makeApplication(host: host, port: port, logger: logger)
    }

    /// A server configuration for HTTPS from PEM files: the certificate chain (the server's
    /// certificate first) and its private key.
    ///
    /// - Throws: a message saying which file could not be used and why.
    public static func tlsConfiguration(certificate: String, key: String) throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificate)
        } catch {
            throw TLSSetupError(message: "cannot read the certificate \(certificate) as PEM: \(error)")
        }
        guard !chain.isEmpty else { throw TLSSetupError(message: "\(certificate) holds no PEM certificate") }
        let privateKey: NIOSSLPrivateKey
        do {
            privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
        } catch {
            throw TLSSetupError(message: "cannot read the private key \(key) as PEM: \(error)")
        }
        return TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
    }

    private func makeApplication(host: String, port: Int, logger: Logger) -> some ApplicationProtocol {
        let limits = connectionLimits
        let registry = ConnectionRegistry(
            limit: limits.maximumConnections,
            perAddress: limits.maximumConnectionsPerAddress,
            slowBody: limits.slowBody
        )
        let http = HTTPServerBuilder.http1(
            configuration: .init(
                additionalChannelHandlers: [
                    UnreadableRequestResponder(logger: logger, metrics: metrics, strictTransport: overHTTPS),
                    ConnectionGuard(registry: registry, limits: limits, trustedProxies: trustedProxies),
                ],
                idleTimeout: TimeAmount(limits.idleTimeout)
            )
        )
        var server = http
        if let tls {
            do {
                server = try .tls(http, tlsConfiguration: tls)
            } catch {
                // `.tls` only wraps the builder; the TLS context (where a bad key fails) is
                // made when the server starts, and that error comes out of runService().
                preconditionFailure("HTTPServerBuilder.tls threw before building anything: \(error)")
            }
        }
        // First, so that it stops last: after the server's requests have ended.
        let heartbeat: [any Service] = presence.map { [ServerHeartbeat(presence: $0, vault: vault, logger: logger)] } ?? []
        return Application(
            router: buildRouter(),
            server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: "card-capture"),
            services: heartbeat + [
                VaultSweeper(
                    payments: payments,
                    interval: sweepInterval,
                    pendingAge: idempotencyLease,
                    retentionDays: retentionDays,
                    logger: logger,
                    metrics: metrics
                ),
                WebhookDispatcher(payments: payments, configuration: webhooks.dispatcher, logger: logger, metrics: metrics),
            ],
            logger: logger
        )
    }
}

/// Why HTTPS could not be set up from the files given.
public struct TLSSetupError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// How webhooks are sent (`serve --webhook-timeout`); the retry schedule is Stripe-like and
/// set only by tests.
public struct WebhookSettings: Sendable {
    /// Seconds an endpoint has to answer.
    public var timeout: Duration = .seconds(10)
    /// How often the queue is read when nothing was due.
    public var pollInterval: Duration = .seconds(1)
    /// When failed deliveries are tried again: 30 s, then doubling to an hour, for a day.
    public var schedule = Payments.WebhookSchedule()
    /// Deliveries on their way at once, and at once to one endpoint: an endpoint that does not
    /// answer holds only its own share.
    public var senders = 16
    public var sendersPerEndpoint = 4
    /// Deliveries on their way at once to one merchant's endpoints: a merchant whose endpoints
    /// do not answer holds at most this many senders.
    public var sendersPerMerchant = 8
    /// How long an attempt runs before it is cut short when every sender is busy and another
    /// delivery waits (tried again on the schedule).
    public var contested: Duration = .seconds(2)
    /// Where endpoints may point: public addresses only by default (`serve
    /// --webhook-allow-private` allows loopback and private networks, for local development).
    public var addresses = WebhookAddressPolicy()

    public init() {}

    var dispatcher: WebhookDispatcher.Configuration {
        WebhookDispatcher.Configuration(
            pollInterval: pollInterval,
            timeout: timeout,
            batch: senders,
            perEndpoint: sendersPerEndpoint,
            perMerchant: sendersPerMerchant,
            contested: contested,
            schedule: schedule
        )
    }
}
