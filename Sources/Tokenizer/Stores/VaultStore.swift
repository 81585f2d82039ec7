public import Foundation

/// Where the vault keeps its records. One protocol, so that the embedded SQLite store and a
/// PostgreSQL store shared by several servers are interchangeable.
///
/// Card data reaches a store only sealed. Every operation that must not race (spending a
/// token) is one atomic step in the store, across every process that shares it.
public protocol VaultStore: Sendable {
    /// The key id the store's card data is sealed under; nil for a store that never held any.
    func masterKeyID() async throws -> String?
    /// Records the key id on first use.
    func setMasterKeyID(_ keyID: String) async throws

    /// Adds a merchant and its keys, all or nothing.
    func insertMerchant(_ merchant: MerchantRecord, keys: [APIKeyRecord]) async throws
    func merchant(named name: String) async throws -> MerchantRecord?
    /// The key with this SHA-256 hash (hex), if any.
    func apiKey(hash: String) async throws -> APIKeyRecord?

    func insertToken(_ token: TokenRecord) async throws
    /// A merchant's token; another merchant's token is nil.
    func token(id: String, merchantID: String) async throws -> TokenRecord?
    /// Marks the token used and erases its CVC, if it is the merchant's, unused, not expired
    /// at `now`, and bound to nothing or to this amount and currency; atomically, so that
    /// of any number of concurrent callers exactly one gets ``TokenSpend/spent(_:)``.
    func spendToken(id: String, merchantID: String, amount: Int, currency: String, at now: Date) async throws -> TokenSpend
    /// Erases the sealed card data of tokens that expired before `now` or were spent: a
    /// token's card data outlives neither. Returns how many tokens were purged.
    func purgeTokenCardData(before now: Date) async throws -> Int
}
