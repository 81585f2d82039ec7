import Foundation
public import Logging
import PostgresNIO
import Synchronization
public import Tokenizer

/// The vault on PostgreSQL, for several servers that share one vault: the same contract as
/// the embedded SQLite store, each operation that must not race one statement or one
/// transaction that PostgreSQL makes atomic across every connection (row locks, unique keys,
/// `FOR UPDATE SKIP LOCKED` for webhook leases, advisory locks for the sweeps).
///
/// Card data reaches it sealed, as it reaches SQLite: bind values are ciphertext and
/// fingerprints, never numbers, so PostgreSQL's own log cannot hold a card number.
///
/// ```swift
/// let store = try await PostgresVaultStore.open(PostgresSettings(url: "postgres://capture@db/vault"))
/// let vault = try await Vault.open(store: store, keys: keys)
/// ```
public final class PostgresVaultStore: VaultStore {
    let client: PostgresClient
    public let settings: PostgresSettings
    let logger: Logger
    /// The pool's connections live while this task runs: it ends with the store.
    private let pool: Task<Void, Never>
    /// The requests waiting for a connection, and the prepared statements running: refused by
    /// ``watchdog`` when their wait is over or their connection closed.
    private let watched = Watched()
    private let watchdog: Task<Void, Never>
    /// Connections held, requests waiting for one, and requests refused for want of one
    /// (``connectionState``, for `/metrics`).
    private let held = Atomic<Int>(0)
    private let waiting = Atomic<Int>(0)
    private let refused = Atomic<Int>(0)
    /// Connection cuts a test asked for (``cutConnection(under:afterRunning:)``).
    private let faults = Mutex<[(match: String, afterRunning: Bool)]>([])
    /// How many of them wait: none (every server's case), and a statement takes no lock for them.
    private let armed = Atomic<Int>(0)

    public var connectionState: StoreConnectionState? {
        StoreConnectionState(
            inUse: held.load(ordering: .relaxed),
            waiting: waiting.load(ordering: .relaxed),
            unavailable: refused.load(ordering: .relaxed)
        )
    }
    /// Charges' settlements, written a batch at a time (``settleTransaction(_:as:events:answer:)``):
    /// one batch at once, of at most 32 charges. One batch at a time makes the batches larger:
    /// against two, with two servers at 32 connections (scripts/bench-api-compare.sh, 3 turns),
    /// charges went from 2,690 to 3,629 a second and their p99 from 22 to 16 ms.
    let settlements = Batches<Settling, Result<Bool, any Error>>(lanes: 1, size: 32)
    /// Tokens' spends, the same way (``spendToken(id:merchantID:amount:currency:at:charge:)``),
    /// with and without key claims apart (each its own statement).
    let spends = Batches<Spending, Result<SpendOutcome, any Error>>(lanes: 1, size: 32)
    let keyedSpends = Batches<Spending, Result<SpendOutcome, any Error>>(lanes: 1, size: 32)
    /// Webhook attempts' outcomes, the same way (``finishWebhookAttempt(_:outcome:)``): a
    /// dispatcher sending to endpoints that answer in a few ms records hundreds a second.
    let attemptFinishes = Batches<Finishing, Result<Void, any Error>>(lanes: 1, size: 64)

    private init(settings: PostgresSettings, logger: Logger) throws {
        let client = PostgresClient(configuration: try settings.clientConfiguration(), backgroundLogger: logger)
        self.client = client
        self.settings = settings
        self.logger = logger
        pool = Task { await client.run() }
        watchdog = Task { [watched] in
            while !Task.isCancelled {
                try? await Task.sleep(for: Watched.tick)
                watched.refuseOverdue()
            }
        }
    }

    deinit {
        pool.cancel()
        watchdog.cancel()
    }

    /// Connects and brings the schema up to date (under an advisory lock, so that servers
    /// starting together migrate once). Throws ``StoreSchemaTooNew`` when the database's
    /// schema is newer than this build knows, and ``StoreUnavailable`` when the database
    /// cannot be reached within the settings' wait.
    public static func open(_ settings: PostgresSettings, logger: Logger = PostgresVaultStore.defaultLogger) async throws -> PostgresVaultStore {
        let store = try PostgresVaultStore(settings: settings, logger: logger)
        try await store.probe()
        _ = try await store.migrate()
        return store
    }

    /// One connection made directly, and closed: a wrong password, a database that does not
    /// exist or a certificate refused is PostgreSQL's own error (``PostgresStoreError``), where
    /// the pool would only keep trying until the wait ran out. A server that cannot be reached
    /// is ``StoreUnavailable``.
    public func probe() async throws {
        do {
            let connection = try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.any(),
                configuration: try settings.connectionConfiguration(),
                id: 0,
                logger: logger
            ).get()
            try? await connection.close()
        } catch {
            throw Self.classify(error)
        }
    }

    /// Connects without migrating: for `capture-cli migrate`, which reports what it did.
    public static func connect(_ settings: PostgresSettings, logger: Logger = PostgresVaultStore.defaultLogger) throws -> PostgresVaultStore {
        try PostgresVaultStore(settings: settings, logger: logger)
    }

    /// The store's own log: warnings and errors only (the driver tells of each failed
    /// connection attempt at `info`, several a second while the database is down; the requests
    /// refused meanwhile are logged by the server).
    public static var defaultLogger: Logger {
        var logger = Logger(label: "capture.postgres")
        logger.logLevel = .warning
        return logger
    }

    // MARK: - Running statements

    /// Runs `body` on a connection of the pool. A request waits at most the settings'
    /// `connectionWait` for one (the database down, restarting, or every connection busy) and
    /// is then refused with ``StoreUnavailable``, whatever the pool does with its wait; once it
    /// has a connection it is never cut short, so that an answered request is one the
    /// database finished, and a refused one ran nothing.
    ///
    /// Within a request (``StoreWaitBudget/current``), its waits together stay within
    /// `connectionWait`: a request that waited 3 s for one statement's connection waits at
    /// most 2 s for the next, and none once the bound is spent.
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let gate = LeaseGate()
        let client = self.client
        let bound = settings.connectionWait
        let budget = StoreWaitBudget.current
        let wait = budget?.allowed(of: bound) ?? bound
        let refusal = "no connection to PostgreSQL within \(bound.components.seconds) s"
        guard wait > .zero else {
            refused.add(1, ordering: .relaxed)
            throw StoreUnavailable(reason: refusal + " (this request's waits together)")
        }
        let start = ContinuousClock.now
        let waited = Mutex<Duration?>(nil)
        defer { budget?.spend(waited.withLock { $0 } ?? ContinuousClock.now - start) }
        // Counted as waiting until a connection comes or the request is refused, whichever
        // is first.
        let stillWaiting = Flag()
        waiting.add(1, ordering: .relaxed)
        let stopWaiting = { @Sendable [self] in
            if stillWaiting.clear() { waiting.subtract(1, ordering: .relaxed) }
        }
        defer { stopWaiting() }
        // Cleared once `body` has the connection: a connection failing from then on may have
        // carried a write's commit to the database before it failed.
        let unsent = Flag()
        do {
            return try await watched.run(
                refusing: refusal,
                when: .after(start + wait),
                gate: gate
            ) { [self] endWatch in
                do {
                    return try await client.withConnection { connection in
                        endWatch()
                        stopWaiting()
                        waited.withLock { $0 = ContinuousClock.now - start }
                        // Too late: the request was refused meanwhile. The connection goes back.
                        guard gate.enter() else { throw CancellationError() }
                        held.add(1, ordering: .relaxed)
                        defer { held.subtract(1, ordering: .relaxed) }
                        _ = unsent.clear()
                        return try await body(connection)
                    }
                } catch {
                    let classified = Self.classify(error)
                    guard var unavailable = classified as? StoreUnavailable else { throw classified }
                    unavailable.mayHaveCommitted = unavailable.mayHaveCommitted || !unsent.isSet
                    throw unavailable
                }
            }
        } catch let error as StoreUnavailable {
            refused.add(1, ordering: .relaxed)
            throw error
        }
    }

    /// Runs `body` in a transaction (READ COMMITTED), committed when it returns and rolled
    /// back when it throws. A deadlock or serialization failure, which PostgreSQL resolves
    /// by failing one of the transactions, runs it again (at most three times).
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await withConnection { [logger, self] connection in
                    // A test's cut (``cutConnection(under:afterRunning:)``) matches the block as
                    // "BEGIN … COMMIT".
                    try await injecting(Self.block) {
                        try await Self.inTransaction(connection, logger) { connection in try await body(connection) }
                    }
                }
            } catch let error as PostgresStoreError where attempt < 3 && error.isRetryable {
                continue
            }
        }
    }

    /// Runs `body` between BEGIN and COMMIT on `connection`, or ROLLBACK when it throws (the
    /// statements sent as every other: see ``result(_:_:_:)``).
    static func inTransaction<T>(
        _ connection: PostgresConnection,
        _ logger: Logger,
        _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await execute("BEGIN", connection, logger)
        do {
            let result = try await body(connection)
            try await execute("COMMIT", connection, logger)
            return result
        } catch {
            _ = try? await execute("ROLLBACK", connection, logger)
            throw error
        }
    }

    /// One statement on a connection of the pool, its rows read to the end.
    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await withConnection { [logger, self] connection in
            try await injecting(query.sql) { try await Self.rows(query, connection, logger) }
        }
    }

    /// One statement that changes rows; returns how many it changed.
    @discardableResult
    func execute(_ query: PostgresQuery) async throws -> Int {
        try await withConnection { [logger, self] connection in
            try await injecting(query.sql) { try await Self.execute(query, connection, logger) }
        }
    }

    static let block = "BEGIN … COMMIT"

    /// For tests: the connection is cut, once, under the next statement whose text holds
    /// `match`: before it reaches the database, or after it ran there (`afterRunning`: its
    /// commit made, its answer lost).
    package func cutConnection(under match: String, afterRunning: Bool) {
        faults.withLock { $0.append((match, afterRunning)) }
        armed.add(1, ordering: .relaxed)
    }

    /// Runs the statement (or block) `sql`, `run`, with the cuts ``cutConnection(under:afterRunning:)``
    /// asked for it thrown before or after it.
    private func injecting<T>(_ sql: String, _ run: () async throws -> T) async throws -> T {
        try injected(sql, ran: false)
        let result = try await run()
        try injected(sql, ran: true)
        return result
    }

    /// Throws the cut asked for this statement at this point, if any.
    private func injected(_ sql: String, ran: Bool) throws {
        guard armed.load(ordering: .relaxed) > 0 else { return }
        let cut = faults.withLock { faults -> Bool in
            guard let index = faults.firstIndex(where: { $0.afterRunning == ran && sql.contains($0.match) }) else { return false }
            faults.remove(at: index)
            return true
        }
        guard cut else { return }
        armed.subtract(1, ordering: .relaxed)
        throw StoreUnavailable(reason: "the connection to PostgreSQL was cut (injected by a test)")
    }

    static func rows(_ query: PostgresQuery, _ connection: PostgresConnection, _ logger: Logger) async throws -> [PostgresRow] {
        try await result(query, connection, logger).rows
    }

    @discardableResult
    static func execute(_ query: PostgresQuery, _ connection: PostgresConnection, _ logger: Logger) async throws -> Int {
        try await result(query, connection, logger).metadata.rows ?? 0
    }

    /// The statement's rows, read to the end, and its command tag (the rows it changed).
    ///
    /// Sent from the connection's event loop, after a look at whether it is still open:
    /// postgres-nio writes a statement to its channel without a promise for the write, so one
    /// written to a connection that closed meanwhile (PostgreSQL restarting) would wait for an
    /// answer forever. On the loop, an open channel's handler gets the statement and fails it
    /// if the connection closes later.
    private static func result(_ query: PostgresQuery, _ connection: PostgresConnection, _ logger: Logger) async throws -> PostgresQueryResult {
        let loop = connection.eventLoop
        let result = loop.flatSubmit { () -> EventLoopFuture<PostgresQueryResult> in
            guard !connection.isClosed else {
                return loop.makeFailedFuture(StoreUnavailable(reason: "the connection to PostgreSQL closed"))
            }
            return connection.query(query, logger: logger)
        }
        return try await result.get()
    }

    /// One of a request's hot statements, kept prepared on each connection of the pool:
    /// PostgreSQL parses and plans it once per connection instead of once per request (on a
    /// charge, parsing and planning cost the database twice what running its statements did).
    ///
    /// postgres-nio sends a prepared statement from the calling task, not from the connection's
    /// event loop, so the look at whether the connection is open (see ``result(_:_:_:)``)
    /// cannot keep it from reaching a connection that closed meanwhile, where it would wait
    /// for an answer forever: the watchdog refuses such a wait once it sees the connection
    /// closed, and the request is answered as unavailable.
    func rows<Text>(_ statement: Prepared<Text>) async throws -> [PostgresRow] {
        let closed = "the connection to PostgreSQL closed"
        return try await withConnection { [logger, watched, self] connection in
            guard !connection.isClosed else { throw StoreUnavailable(reason: closed) }
            return try await injecting(Text.sql) {
                try await watched.run(refusing: closed, when: .closed(connection)) { _ in
                    var rows: [PostgresRow] = []
                    for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
                    return rows
                }
            }
        }
    }

    /// A batch's items written by `write` in one statement; when that fails for something
    /// other than the database being away (a deadlock with another server's batch, which
    /// PostgreSQL ends by failing one, or one item's fault), each item on its own, so that one
    /// item's fault is not the others'. The database away fails them all at once, rather than
    /// each after its own wait.
    static func inBatchOrAlone<Item: Sendable, Value: Sendable>(
        _ items: [Item],
        _ write: ([Item]) async throws -> [Value]
    ) async throws -> [Result<Value, any Error>] {
        do {
            return try await write(items).map { .success($0) }
        } catch let error where items.count > 1 && !(error is StoreUnavailable) {
            var results: [Result<Value, any Error>] = []
            for item in items {
                do {
                    results.append(.success(try await write([item])[0]))
                } catch {
                    results.append(.failure(error))
                }
            }
            return results
        }
    }

    /// Errors of the connection (refused, closed, the server shutting down or out of
    /// connections) as ``StoreUnavailable``: the request may be tried again. Others as they are.
    static func classify(_ error: any Error) -> any Error {
        if error is StoreUnavailable || error is CancellationError { return error }
        let underlying = (error as? PostgresTransactionError).flatMap { $0.closureError ?? $0.beginError ?? $0.commitError } ?? error
        guard let psql = underlying as? PSQLError else { return error }
        if let tls = psql.underlying, tls is NIOSSLError || tls is BoringSSLError || "\(type(of: tls))".contains("SSL") {
            // Cut without TLS's goodbye (PostgreSQL crashed or killed, its machine gone): the
            // database is away, which is no setting to mend.
            if case .uncleanShutdown? = tls as? NIOSSLError {
                return StoreUnavailable(reason: "the connection to PostgreSQL was cut")
            }
            return PostgresStoreError(state: "", message: "TLS with the server failed (\(tls)): check sslmode and sslrootcert")
        }
        switch psql.code {
        case .connectionError, .serverClosedConnection, .uncleanShutdown, .clientClosedConnection, .poolClosed:
            return StoreUnavailable(reason: "the connection to PostgreSQL failed or closed")
        case .server:
            let state = psql.serverInfo?[.sqlState] ?? ""
            // 08: connection exceptions; 57P01-03: the server shutting down or starting;
            // 53300: too many connections; 25P03: this connection's transaction ended by
            // PostgreSQL after 30 s idle (``PostgresSettings/startupParameters``).
            if state.hasPrefix("08") || ["57P01", "57P02", "57P03", "53300", "25P03"].contains(state) {
                return StoreUnavailable(reason: "PostgreSQL refused the request (SQLSTATE \(state))")
            }
            return PostgresStoreError(state: state, message: psql.serverInfo?[.message] ?? "")
        case .sslUnsupported:
            return PostgresStoreError(state: "", message: "the server does not offer TLS, which the URL's sslmode requires")
        default:
            return PostgresStoreError(state: "", message: "\(psql.code)")
        }
    }

    // MARK: - Health

    /// Whether the database answers a query now, within the connection wait.
    public func ping() async -> Bool {
        (try? await rows("SELECT 1")) != nil
    }
}

/// A statement PostgreSQL refused for a reason other than its availability: its SQLSTATE and
/// message (which name tables and constraints, never bound values).
public struct PostgresStoreError: Error, CustomStringConvertible {
    public let state: String
    public let message: String

    public var description: String {
        state.isEmpty ? "the connection to PostgreSQL failed: \(message)" : "PostgreSQL refused (SQLSTATE \(state)): \(message)"
    }

    /// A deadlock or a serialization failure: the transaction may run again.
    var isRetryable: Bool { state == "40001" || state == "40P01" }
    /// A unique key's violation.
    var isUniqueViolation: Bool { state == "23505" }
}

extension Date {
    /// The time as the stores keep it, to the millisecond: what SQLite gives back, so that a
    /// record reads back equal whichever store kept it.
    var stored: Date { StoreDate.stored(self) }
}

extension PostgresVaultStore {
    /// Runs SQL as it is, for tests that change or read the tables behind the store's back.
    package func execute(sql: String) async throws {
        try await execute(PostgresQuery(unsafeSQL: sql))
    }

    /// The first column of each row of `sql`, as text.
    package func strings(sql: String) async throws -> [String] {
        try await rows(PostgresQuery(unsafeSQL: sql)).map { try $0.decode(String.self) }
    }
}
