import Foundation
import GRDB
import Payments
public import PostgresVault
import SQLiteVault
public import Tokenizer

/// The two stores every vault, payments, checkout, webhook and key test runs against: the
/// same test, given each as its argument.
///
/// ```swift
/// @Test("…", arguments: StoreKind.allCases)
/// func spendOnce(store: StoreKind) async throws {
///     let fixture = try await VaultFixture(store)
/// ```
public enum StoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case postgres

    public var description: String { rawValue }

    /// A new, empty store of this kind: SQLite in memory, or PostgreSQL in a schema of its own
    /// on the test cluster.
    public func makeStore() async throws -> any VaultStore {
        switch self {
        case .sqlite: try SQLiteVaultStore.inMemory()
        case .postgres: try await TestPostgres.store()
        }
    }
}

/// The PostgreSQL cluster the tests run against: `CAPTURE_TEST_POSTGRES`, set by
/// scripts/swift-tests.sh (`make test`), which starts a throwaway cluster and stops it after.
public enum TestPostgres {
    public static let variable = "CAPTURE_TEST_POSTGRES"

    /// The settings of a new schema on the test cluster: stores opened with them share it
    /// (two servers on one vault).
    public static func newVault(poolSize: Int = 3) throws -> PostgresSettings {
        guard let url = ProcessInfo.processInfo.environment[variable], !url.isEmpty else {
            throw MissingCluster()
        }
        var settings = try PostgresSettings(url: url)
        settings.schema = "vault_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        settings.poolSize = poolSize
        // Hundreds of tests start at once on two cores: a connection may take a while.
        settings.connectionWait = .seconds(60)
        return settings
    }

    /// The URL of a new, empty database on the test cluster (for a server started as a process).
    public static func newDatabase() async throws -> String {
        guard let url = ProcessInfo.processInfo.environment[variable], !url.isEmpty else { throw MissingCluster() }
        let name = "cli_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        // One administrator's connection for the whole process, and a database asked for again
        // when no connection came in time: the command-line tests start while the other test
        // process opens a hundred connections at once on two cores, and a fresh pool's first
        // connection, retried with growing pauses, once missed its 60 s there (in a fresh
        // clone's `make test`).
        var attempt = 0
        while true {
            attempt += 1
            do {
                try await Administrator.shared.store(url: url).execute(sql: "CREATE DATABASE \(name)")
                break
            } catch is StoreUnavailable where attempt < 3 {
                await Administrator.shared.forget()
            }
        }
        guard var components = URLComponents(string: url) else { throw MissingCluster() }
        components.path = "/" + name
        return components.string ?? url
    }

    /// The process's connection for making databases.
    actor Administrator {
        static let shared = Administrator()
        private var opened: PostgresVaultStore?

        func store(url: String) throws -> PostgresVaultStore {
            if let opened { return opened }
            var settings = try PostgresSettings(url: url)
            // As newVault's: the suite's other process may hold the machine's two cores meanwhile.
            settings.connectionWait = .seconds(60)
            settings.poolSize = 1
            let store = try PostgresVaultStore.connect(settings)
            opened = store
            return store
        }

        /// Drops the connection that did not come, so the next try starts a pool afresh.
        func forget() {
            opened = nil
        }
    }

    /// A store on a new schema of the test cluster.
    public static func store(poolSize: Int = 3) async throws -> PostgresVaultStore {
        // Asked again when no connection came in time, as ``newDatabase()`` is.
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await PostgresVaultStore.open(try newVault(poolSize: poolSize))
            } catch is StoreUnavailable where attempt < 3 {
                continue
            }
        }
    }

    /// The test cluster is not there: the test fails (it is never skipped) and says how to
    /// give it one.
    public struct MissingCluster: Error, CustomStringConvertible {
        public var description: String {
            """
            \(TestPostgres.variable) is not set: run the tests with `make test` (scripts/swift-tests.sh starts a throwaway \
            PostgreSQL), or start one with `scripts/postgres-cluster.sh start DIR` and set \(TestPostgres.variable) to the \
            URL it prints
            """
        }
    }
}

extension VaultStore {
    /// Runs SQL on the store's tables behind its back (a test's tampering), on either store.
    public func execute(sql: String) async throws {
        switch self {
        case let store as SQLiteVaultStore: try await store.database.write { db in try db.execute(sql: sql) }
        case let store as PostgresVaultStore: try await store.execute(sql: sql)
        default: throw UnknownStore()
        }
    }

    /// The first column of each row of `sql`, as text, on either store.
    public func strings(sql: String) async throws -> [String] {
        switch self {
        case let store as SQLiteVaultStore: try await store.database.read { db in try String.fetchAll(db, sql: sql) }
        case let store as PostgresVaultStore: try await store.strings(sql: sql)
        default: throw UnknownStore()
        }
    }
}

/// A store neither SQLite nor PostgreSQL.
struct UnknownStore: Error {}
