import Foundation
import Synchronization

/// A new merchant's keys, as printed once by `capture-cli keys create`: the store keeps only
/// their digests.
public struct MerchantKeys: Sendable {
    public let merchant: MerchantRecord
    /// `pk_…`: may create tokens and scans only; safe to ship in a point-of-sale client.
    public let publishable: String
    /// `sk_…`: may do everything for the merchant; keep it on the merchant's server.
    public let secret: String
}

extension Vault {
    /// Creates a merchant with a new publishable and secret key.
    ///
    /// - Throws: ``VaultError/Code/merchantExists`` when the name is taken.
    public func createMerchant(named name: String) async throws(VaultError) -> MerchantKeys {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.count <= 100 else {
            throw VaultError(.invalidMerchant, "a merchant needs a name of 1 to 100 characters")
        }
        if try await storing("look up the merchant", { try await store.merchant(named: trimmed) }) != nil {
            throw VaultError(.merchantExists, "a merchant named '\(trimmed)' exists already; its keys were printed when it was created")
        }
        let now = configuration.now()
        let merchant = MerchantRecord(id: ObjectID.random(.merchant).rawValue, name: trimmed, createdAt: now)
        let publishable = ObjectID.random(.publishableKey).rawValue
        let secret = ObjectID.random(.secretKey).rawValue
        let records = [
            APIKeyRecord(hash: keys.apiKeyDigest(publishable), merchantID: merchant.id, kind: .publishable, createdAt: now),
            APIKeyRecord(hash: keys.apiKeyDigest(secret), merchantID: merchant.id, kind: .secret, createdAt: now),
        ]
        try await storing("create the merchant") { try await store.insertMerchant(merchant, keys: records) }
        return MerchantKeys(merchant: merchant, publishable: publishable, secret: secret)
    }

    /// The key record behind an API key, or nil for a key this vault never issued.
    public func authenticate(apiKey: String) async throws(VaultError) -> APIKeyRecord? {
        guard apiKey.hasPrefix("pk_") || apiKey.hasPrefix("sk_"), apiKey.utf8.count <= 64 else { return nil }
        let code = keys.apiKeyCode(apiKey)
        let digest = KeyRing.hex(code)
        let record: APIKeyRecord
        if let known = knownKeys.record(for: digest) {
            record = known
        } else {
            guard let stored = try await storing("look up the key", { try await store.apiKey(hash: digest) }) else { return nil }
            knownKeys.remember(stored)
            record = stored
        }
        // The lookup found the digest; confirm in constant time all the same.
        guard keys.apiKeyCode(code, matches: record.hash) else { return nil }
        let expected: APIKeyKind = apiKey.hasPrefix("pk_") ? .publishable : .secret
        return record.kind == expected ? record : nil
    }
}

/// API keys already found in the store, by digest: a key never changes once issued, so every
/// request after the first skips the store. Only keys that exist are kept, at most 10,000.
final class KnownAPIKeys: Sendable {
    private let records = Mutex<[String: APIKeyRecord]>([:])

    func record(for digest: String) -> APIKeyRecord? {
        records.withLock { $0[digest] }
    }

    func remember(_ record: APIKeyRecord) {
        records.withLock { known in
            if known.count >= 10_000 { known.removeAll() }
            known[record.hash] = record
        }
    }
}
