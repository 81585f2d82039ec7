import Crypto
import Foundation
import PostgresVault
import StoreTestSupport
import Synchronization

@testable import Payments
@testable import SQLiteVault
@testable import Tokenizer

/// A clock the test moves by hand.
final class TestClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Mutex(start)
    }

    var now: Date { current.withLock { $0 } }

    func advance(seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}

/// A vault on a private in-memory store (or a file), with a fresh key and a moveable clock.
struct VaultFixture {
    let vault: Vault
    let clock: TestClock
    let merchant: MerchantKeys

    init(store: (any VaultStore)? = nil, lifetime: Duration = .seconds(300)) async throws {
        let clock = TestClock()
        let keys = KeyRing(masterKey: SymmetricKey(size: .bits256))
        let configuration = Vault.Configuration(tokenLifetime: lifetime, now: { clock.now })
        let vault = try await Vault.open(store: try store ?? SQLiteVaultStore.inMemory(), keys: keys, configuration: configuration)
        self.vault = vault
        self.clock = clock
        self.merchant = try await vault.createMerchant(named: "test-merchant")
    }

    /// A fixture on a new store of the kind: SQLite in memory, or PostgreSQL in a schema of its own.
    init(_ kind: StoreKind, lifetime: Duration = .seconds(300)) async throws {
        try await self.init(store: try await kind.makeStore(), lifetime: lifetime)
    }

    /// A fixture on a vault made by the caller, sharing `clock`.
    init(vault: Vault, clock: TestClock) async throws {
        self.vault = vault
        self.clock = clock
        self.merchant = try await vault.createMerchant(named: "test-merchant")
    }

    var merchantID: String { merchant.merchant.id }

    /// Another server on this fixture's vault, with its key and clock: on PostgreSQL a store of
    /// its own (its own connections) on the same schema, as a second instance has; on SQLite
    /// the same store.
    func secondServer() async throws -> Vault {
        var store = vault.store
        if let postgres = store as? PostgresVaultStore { store = try await PostgresVaultStore.open(postgres.settings) }
        return try await Vault.open(store: store, keys: vault.keys, configuration: vault.configuration)
    }

    /// Visa test card 4242…, expiring in 2030 (the test clock is in 2027).
    static let visa = CardInput(number: "4242424242424242", expMonth: 12, expYear: 2030, cvc: "123", holder: "ALEX MORGAN")
}

/// A fresh folder under the system's temporary folder, removed by the caller.
func temporaryFolder() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("vault-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A store in WAL mode on a file in a fresh folder (with the file's path), removed when `body`
/// returns.
func withFileStore<T>(_ body: (SQLiteVaultStore, String) async throws -> T) async throws -> T {
    let folder = try temporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("vault.sqlite").path
    return try await body(try SQLiteVaultStore(path: path), path)
}
