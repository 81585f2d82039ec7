import ArgumentParser
import CaptureServer
import CardCapture
import Foundation
import Hummingbird
import Logging
import NIOCore
import OCRBridge
import Payments
import Tokenizer

/// `capture-cli serve`: the HTTP API on the embedded vault.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the HTTP API (scans, tokens, transactions) on a vault: an SQLite file, or PostgreSQL (--database postgres://…)."
    )

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on.")
    var port = 8080

    @Option(name: .customLong("token-ttl"), help: "How many seconds a token lives before it can no longer be spent.")
    var tokenTTL = 300

    @Option(
        name: .customLong("idempotency-lease"),
        help: "Seconds a request holds its Idempotency-Key; a retry after a crash is answered once it lapses."
    )
    var idempotencyLease = 30

    @Option(
        name: .customLong("sweep-interval"),
        help: """
            Seconds between the sweeper's passes: a charge left pending (its request died) is settled \
            within the Idempotency-Key lease plus this.
            """
    )
    var sweepInterval = 30

    @Option(
        name: .customLong("sandbox-latency"),
        help: "Milliseconds the sandbox processor takes per authorization, as a real one's round trip (for tests)."
    )
    var sandboxLatency = 0

    @Option(
        help: """
            The sandbox processor's journal of authorizations (default: beside an SQLite vault;             capture-sandbox.journal for a PostgreSQL one). Servers sharing a vault on one machine share it.
            """
    )
    var sandboxJournal: String?

    @Option(
        name: .customLong("token-rate-limit"),
        help:
            "Tokens a publishable key may create a minute from one client address, a third of them at once; refused cards count. 0 turns the limit off."
    )
    var tokenRateLimit = 60

    @Option(
        name: .customLong("scan-time-budget"),
        help: ArgumentHelp(
            "Milliseconds a still picture's scan may search before it answers with what it decided (the first look at the card finishes whatever the budget); 0 for no bound.",
            valueName: "ms"
        )
    )
    var scanTimeBudget = 3000

    @Option(
        name: .customLong("retention-days"),
        help: "Days after which expired tokens and scans are deleted (their card data goes minutes after expiry). 0 keeps them."
    )
    var retentionDays = 30

    @Option(name: .customLong("idle-timeout"), help: "Seconds a connection may send nothing, between requests or inside one, before it is closed.")
    var idleTimeout = 60

    @Option(name: .customLong("header-timeout"), help: "Seconds a request's head may take from its first byte.")
    var headerTimeout = 10

    @Option(name: .customLong("body-timeout"), help: "Seconds a request's body may take to arrive whole (10 MiB at 1.4 Mbit/s takes 60).")
    var bodyTimeout = 60

    @Option(
        name: .customLong("max-connections"),
        help:
            "Open connections at most; at the cap a new one closes the longest idle, else the upload stalled longest. Default: the open-files limit less 64, at most 10000."
    )
    var maxConnections: Int?

    @Option(
        name: .customLong("max-connections-per-address"),
        help: "Open connections one client address may hold (not a trusted proxy's). Default: a sixteenth of --max-connections, at least 8."
    )
    var maxConnectionsPerAddress: Int?

    @Option(
        name: .customLong("trusted-proxy"),
        help: ArgumentHelp(
            "A reverse proxy (address or block, e.g. 10.0.0.0/8) whose X-Forwarded-For names the client for the token limit; repeat for several.",
            valueName: "address[/bits]"
        )
    )
    var trustedProxies: [String] = []

    @Option(
        name: .customLong("public-url"),
        help: ArgumentHelp(
            "The address buyers reach this server at, for the hosted checkout page's links (default: the address each API request was sent to).",
            valueName: "url"
        )
    )
    var publicURL: String?

    @Option(
        name: .customLong("tls-cert"),
        help: ArgumentHelp(
            "Serve HTTPS with this certificate chain (PEM, the server's certificate first); needs --tls-key. A phone's browser gives the page's camera only to a secure page.",
            valueName: "pem"
        )
    )
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The private key of --tls-cert (PEM).", valueName: "pem"))
    var tlsKey: String?

    @Option(
        name: .customLong("webhook-timeout"),
        help: "Seconds a webhook endpoint has to answer before the delivery counts as failed and is tried again."
    )
    var webhookTimeout = 10

    @Flag(
        name: .customLong("webhook-allow-private"),
        help:
            "Let webhook endpoints point at loopback, private and link-local addresses (local development); by default only public addresses are sent to."
    )
    var webhookAllowPrivate = false

    @Option(
        name: .customLong("log-format"),
        help: ArgumentHelp(
            "json (one object per line, for a log collector) or text (for a person); json when standard error is not a terminal.",
            valueName: "format"
        )
    )
    var logFormat: LogFormat?

    @OptionGroup var vault: VaultOptions

    func validate() throws {
        guard (1...86_400).contains(tokenTTL) else { throw ValidationError("--token-ttl must be from 1 to 86400 seconds") }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        guard (0...10_000).contains(sandboxLatency) else { throw ValidationError("--sandbox-latency must be from 0 to 10000 ms") }
        guard (1...3600).contains(idempotencyLease) else { throw ValidationError("--idempotency-lease must be from 1 to 3600 seconds") }
        guard (1...3600).contains(sweepInterval) else { throw ValidationError("--sweep-interval must be from 1 to 3600 seconds") }
        guard (0...100_000).contains(tokenRateLimit) else { throw ValidationError("--token-rate-limit must be from 0 (off) to 100000 a minute") }
        guard (0...3650).contains(retentionDays) else { throw ValidationError("--retention-days must be from 0 (keep) to 3650") }
        guard (0...600_000).contains(scanTimeBudget) else { throw ValidationError("--scan-time-budget must be from 0 (no bound) to 600000 ms") }
        for (flag, seconds) in [("--idle-timeout", idleTimeout), ("--header-timeout", headerTimeout), ("--body-timeout", bodyTimeout)] {
            guard (1...3600).contains(seconds) else { throw ValidationError("\(flag) must be from 1 to 3600 seconds") }
        }
        guard (1...60).contains(webhookTimeout) else { throw ValidationError("--webhook-timeout must be from 1 to 60 seconds") }
        if vault.isPostgres, vault.databasePoolSize < 2 {
            throw ValidationError(
                "--database-pool-size must be at least 2 for serve: a sweep holds one connection for its lock while it works on another"
            )
        }
        if let maxConnections, !(1...1_000_000).contains(maxConnections) {
            throw ValidationError("--max-connections must be from 1 to 1000000")
        }
        if let maxConnectionsPerAddress, !(1...1_000_000).contains(maxConnectionsPerAddress) {
            throw ValidationError("--max-connections-per-address must be from 1 to 1000000")
        }
        if let publicURL {
            guard let url = URLComponents(string: publicURL), ["http", "https"].contains(url.scheme ?? ""), url.host?.isEmpty == false,
                url.query == nil, url.fragment == nil
            else {
                throw ValidationError("--public-url must be an http or https address such as https://pay.example.com")
            }
        }
        do {
            _ = try TrustedProxies(trustedProxies)
        } catch {
            throw ValidationError("--trusted-proxy: \(error)")
        }
        if (tlsCertificate == nil) != (tlsKey == nil) {
            throw ValidationError("--tls-cert and --tls-key go together: give the certificate chain and its private key")
        }
    }

    func run() async throws {
        // Every logger of the process (the server's, its libraries') writes this way.
        let format = logFormat?.handlerFormat ?? (isatty(2) == 1 ? .text : .json)
        LoggingSystem.bootstrap { label in ServerLogHandler(label: label, format: format) }
        var logger = Logger(label: "capture-cli.serve")
        logger.logLevel = .info
        logger.info("starting", metadata: ["pid": "\(getpid())", "host": .string(host), "port": "\(port)"])
        logger.info("opening the vault", metadata: ["database": .string(vault.shownDatabase)])
        let opened = try await vault.openVault(configuration: Vault.Configuration(tokenLifetime: .seconds(tokenTTL)))
        logger.info("vault open", metadata: ["database": .string(vault.shownDatabase), "key_id": .string(opened.keyID)])
        let scannerSlot = ScannerSlot()
        // The sandbox remembers its authorizations beside the vault, so that charges a crash
        // left pending are settled as they really ended.
        let journal = sandboxJournal ?? (vault.isPostgres ? "capture-sandbox.journal" : vault.database + ".sandbox")
        let processor: SandboxProcessor
        do {
            processor = try SandboxProcessor(journal: journal, latency: .milliseconds(sandboxLatency))
        } catch {
            Terminal.writeError("capture-cli: \(error)")
            throw ExitCode(2)
        }
        var api = CaptureAPI(vault: opened, processor: processor)
        api.scannerSlot = scannerSlot
        api.idempotencyLease = .seconds(idempotencyLease)
        api.sweepInterval = .seconds(sweepInterval)
        api.tokenRateLimit = tokenRateLimit
        api.retentionDays = retentionDays
        api.scanTimeBudget = scanTimeBudget > 0 ? .milliseconds(scanTimeBudget) : nil
        api.trustedProxies = try TrustedProxies(trustedProxies)
        api.publicURL = publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        var limits = ConnectionLimits(
            maximumConnections: maxConnections ?? ConnectionLimits.defaultMaximumConnections,
            maximumConnectionsPerAddress: maxConnectionsPerAddress
        )
        limits.idleTimeout = .seconds(idleTimeout)
        limits.headerTimeout = .seconds(headerTimeout)
        limits.bodyTimeout = .seconds(bodyTimeout)
        api.connectionLimits = limits
        api.webhooks.timeout = .seconds(webhookTimeout)
        api.webhooks.addresses.allowPrivate = webhookAllowPrivate
        logger.info("connections", metadata: ["max": "\(limits.maximumConnections)", "idle_timeout_s": "\(idleTimeout)"])
        if let tlsCertificate, let tlsKey {
            do {
                api.tls = try CaptureAPI.tlsConfiguration(certificate: tlsCertificate, key: tlsKey)
            } catch {
                Terminal.writeError("capture-cli: \(error)")
                throw ExitCode(2)
            }
        }
        // The scanner's models load beside the server, which listens at once: tokens and charges
        // are served meanwhile, scans are 503 scanner_loading, and /readyz says starting.
        let loading = ContinuousClock.now
        logger.info("loading the scanner's models")
        let loader = Task.detached { [logger] in
            do throws(OCRError) {
                scannerSlot.ready(try CardScanner())
                logger.info("scanner ready", metadata: ["load_ms": "\((ContinuousClock.now - loading).nanoseconds / 1_000_000)"])
            } catch {
                scannerSlot.off()
                logger.warning("scans are off: \(error.message)")
            }
        }
        let served: Result<Void, any Error>
        do {
            let app = api.application(host: host, port: port, logger: logger)
            try await app.runService()
            served = .success(())
        } catch {
            served = .failure(error)
        }
        // Whatever ended the server, the models' loading ends first: a process that exits while
        // OpenVINO loads can crash on its way out, and say so in place of the real reason.
        await loader.value
        do {
            try served.get()
            // SIGTERM or SIGINT: requests under way were answered first.
            logger.info("stopped: a signal asked the server to stop, and the requests under way were answered")
        } catch {
            guard let message = Self.listenFailure(error, host: host, port: port) else {
                // A certificate and key that do not go together fail when the server is built.
                if api.tls != nil && !(error is CancellationError) {
                    Terminal.writeError("capture-cli: HTTPS cannot be served with \(tlsCertificate ?? "") and \(tlsKey ?? ""): \(error)")
                    throw ExitCode(2)
                }
                throw error
            }
            Terminal.writeError("capture-cli: \(message)")
            throw ExitCode(2)
        }
    }

    /// What to tell someone whose server could not listen at `host`:`port`, in place of
    /// SwiftNIO's `bind(descriptor:ptr:bytes:)` text; nil for any other error.
    static func listenFailure(_ error: any Error, host: String, port: Int) -> String? {
        switch error {
        case let error as IOError where error.errnoCode == EADDRINUSE:
            return "port \(port) on \(host) is in use by another program; stop it or give serve another --port"
        case let error as IOError where error.errnoCode == EACCES:
            return "port \(port) needs privileges this user does not have; give a --port above 1023"
        case let error as IOError where error.errnoCode == EADDRNOTAVAIL:
            return "\(host) is not an address of this machine; give --host one of its addresses, such as 127.0.0.1 or 0.0.0.0"
        case is SocketAddressError, is SocketAddressError.UnknownHost:
            return "--host \(host) is neither an IP address nor a name this machine can resolve; give one such as 127.0.0.1"
        default:
            return nil
        }
    }
}

/// `serve --log-format`.
enum LogFormat: String, ExpressibleByArgument {
    case json, text

    var handlerFormat: ServerLogHandler.Format { self == .json ? .json : .text }
}
