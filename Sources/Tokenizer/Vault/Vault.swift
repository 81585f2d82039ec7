public import Foundation

/// The token vault: card data in, tokens out; tokens spent once, for their merchant, within
/// their life. Card data is sealed before it reaches the store and opened only to spend.
///
/// ```swift
/// let store = try SQLiteVaultStore(path: "vault.sqlite")
/// let (keys, _) = try KeyRing.load(environment: nil, file: "vault.sqlite.key", storeKeyID: try await store.masterKeyID())
/// let vault = try await Vault.open(store: store, keys: keys)
/// let merchant = try await vault.createMerchant(named: "corner-store")
/// let token = try await vault.createToken(for: merchant.merchant.id, card: CardInput(number: "4242424242424242", expMonth: 12, expYear: 2030))
/// ```
public struct Vault: Sendable {
    /// Settings, with the defaults of the contract.
    public struct Configuration: Sendable {
        /// How long a token lives: five minutes.
        public var tokenLifetime: Duration
        /// The clock; tests inject a fixed one.
        public var now: @Sendable () -> Date
        /// How long an API key found in the store is trusted before it is read again: the
        /// longest a revoked key keeps working on a running server. Two seconds.
        public var keyRecheckInterval: Duration

        public init(
            tokenLifetime: Duration = .seconds(300),
            keyRecheckInterval: Duration = .seconds(2),
            now: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.tokenLifetime = tokenLifetime
            self.keyRecheckInterval = keyRecheckInterval
            self.now = now
        }
    }

    public let store: any VaultStore
    package let keys: KeyRing
    public let configuration: Configuration
    /// Keys already authenticated once (see ``KnownAPIKeys``).
    let knownKeys = KnownAPIKeys()

    /// The vault on a store, under a key ring. A store used for the first time is marked
    /// with the key's id; a store marked with another key is refused.
    public static func open(store: any VaultStore, keys: KeyRing, configuration: Configuration = Configuration()) async throws -> Vault {
        let stored = try await store.masterKeyID()
        if let stored, stored != keys.keyID {
            throw VaultError(.keyMismatch, "the vault's data is under \(stored) but the master key given is \(keys.keyID)")
        }
        if stored == nil {
            // Read again: two servers opening a new shared vault at once with different keys
            // must not both go on (the first key recorded wins, the other server stops).
            try await store.setMasterKeyID(keys.keyID)
            if let recorded = try await store.masterKeyID(), recorded != keys.keyID {
                throw VaultError(.keyMismatch, "the vault's data is under \(recorded) but the master key given is \(keys.keyID)")
            }
        }
        return Vault(store: store, keys: keys, configuration: configuration)
    }

    init(store: any VaultStore, keys: KeyRing, configuration: Configuration) {
        self.store = store
        self.keys = keys
        self.configuration = configuration
    }

    /// The id of the master key the vault seals under.
    public var keyID: String { keys.keyID }

    /// Runs a store call, turning its failures into ``VaultError/Code/storage`` without
    /// passing on the store's own message (it may quote SQL with values).
    package func storing<T: Sendable>(_ what: String, _ operation: () async throws -> T) async throws(VaultError) -> T {
        do {
            return try await operation()
        } catch let error as VaultError {
            throw error
        } catch let error as StoreUnavailable where error.mayHaveCommitted {
            throw VaultError(
                .storageOutcomeUnknown,
                "the vault's database went away before this request was answered: a change it asked for may have been made; "
                    + "no money moved; look up what it would have made, or retry with the same Idempotency-Key, once the database is back in a few seconds",
                cause: "\(what): \(error.reason)"
            )
        } catch let error as StoreUnavailable {
            throw VaultError.storageUnavailable(cause: "\(what): \(error.reason)")
        } catch {
            throw VaultError(
                .storage,
                "the vault's store failed to \(what); try again, and check the server's disk and database if it persists",
                cause: String(describing: error)
            )
        }
    }
}
