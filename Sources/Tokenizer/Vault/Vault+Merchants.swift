import CardCapture
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

/// What `capture-cli keys rotate` printed once: the new keys, and the old ones with the end
/// the rotation gave them.
public struct RotatedKeys: Sendable {
    public let merchant: MerchantRecord
    /// The new publishable key, when one was rotated.
    public let publishable: String?
    /// The new secret key, when one was rotated.
    public let secret: String?
    /// The keys that were replaced, with their end.
    public let retired: [APIKeyRecord]
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
        // The name is printed by `keys list` and shown on the hosted page: a control character
        // (an escape sequence for the terminal, a line break in a log) has no place in it.
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw VaultError(.invalidMerchant, "a merchant's name may not hold control characters (tabs, line breaks, escapes)")
        }
        if try await storing("look up the merchant", { try await store.merchant(named: trimmed) }) != nil {
            throw VaultError(.merchantExists, "a merchant named '\(trimmed)' exists already; its keys were printed when it was created")
        }
        let now = configuration.now()
        let merchant = MerchantRecord(id: ObjectID.random(.merchant).rawValue, name: trimmed, createdAt: now)
        let publishable = ObjectID.random(.publishableKey).rawValue
        let secret = ObjectID.random(.secretKey).rawValue
        let records = [
            newKeyRecord(publishable, .publishable, merchant: merchant.id, at: now), newKeyRecord(secret, .secret, merchant: merchant.id, at: now),
        ]
        try await storing("create the merchant") { try await store.insertMerchant(merchant, keys: records) }
        return MerchantKeys(merchant: merchant, publishable: publishable, secret: secret)
    }

    /// Every merchant, by name.
    public func merchants() async throws(VaultError) -> [MerchantRecord] {
        try await storing("list the merchants") { try await store.merchants() }
    }

    /// One merchant's keys (by its name or id), or every merchant's; oldest first.
    public func apiKeys(merchant: String?) async throws(VaultError) -> [APIKeyRecord] {
        var merchantID: String?
        if let merchant { merchantID = try await findMerchant(merchant).id }
        return try await storing("list the keys") { try await store.apiKeys(merchantID: merchantID) }
    }

    /// Ends a key now, given the key itself or its id (``APIKeyRecord/id``). A server on the
    /// same store refuses it within ``Configuration/keyRecheckInterval``. Revoking a key that has
    /// ended already changes nothing.
    ///
    /// - Returns: the key's record, with its end.
    /// - Throws: ``VaultError/Code/apiKeyNotFound`` for a key or id this vault does not have.
    public func revokeAPIKey(_ keyOrID: String) async throws(VaultError) -> APIKeyRecord {
        let record = try await findKey(keyOrID)
        let now = configuration.now()
        try await storing("revoke the key") { try await store.updateAPIKeys(insert: [], expire: [record.hash], at: now) }
        knownKeys.forget(record.hash)
        return record.ending(at: now)
    }

    /// Issues new keys of the given kinds for a merchant (by name or id) and ends its working
    /// keys of those kinds after `grace` (zero: now), so that clients can move over without an
    /// outage.
    public func rotateKeys(merchant: String, kinds: Set<APIKeyKind>, grace: Duration) async throws(VaultError) -> RotatedKeys {
        let owner = try await findMerchant(merchant)
        let now = configuration.now()
        let end = now.addingTimeInterval(grace.seconds)
        let current = try await storing("list the keys") { try await store.apiKeys(merchantID: owner.id) }
        let retiring = current.filter { kinds.contains($0.kind) && $0.isActive(at: now) }
        let publishable = kinds.contains(.publishable) ? ObjectID.random(.publishableKey).rawValue : nil
        let secret = kinds.contains(.secret) ? ObjectID.random(.secretKey).rawValue : nil
        let fresh =
            [
                publishable.map { newKeyRecord($0, .publishable, merchant: owner.id, at: now) },
                secret.map { newKeyRecord($0, .secret, merchant: owner.id, at: now) },
            ]
            .compactMap { $0 }
        try await storing("rotate the keys") { try await store.updateAPIKeys(insert: fresh, expire: retiring.map(\.hash), at: end) }
        for key in retiring { knownKeys.forget(key.hash) }
        return RotatedKeys(merchant: owner, publishable: publishable, secret: secret, retired: retiring.map { $0.ending(at: end) })
    }

    /// The key record behind an API key, or nil for a key this vault never issued. A record
    /// found is trusted for ``Configuration/keyRecheckInterval``, then read again, so that a
    /// revocation by another process takes effect within that time.
    ///
    /// - Throws: ``VaultError/Code/apiKeyRevoked`` for a key that has ended.
    public func authenticate(apiKey: String) async throws(VaultError) -> APIKeyRecord? {
        guard apiKey.hasPrefix("pk_") || apiKey.hasPrefix("sk_"), apiKey.utf8.count <= 64 else { return nil }
        // Looked up by its keyed hash: an unknown key's timing tells nothing of a stored one.
        let digest = KeyRing.hex(keys.apiKeyCode(apiKey))
        let now = configuration.now()
        let record: APIKeyRecord
        if let known = knownKeys.record(for: digest, at: now, freshFor: configuration.keyRecheckInterval) {
            record = known
        } else {
            guard let stored = try await storing("look up the key", { try await store.apiKey(hash: digest) }) else {
                knownKeys.forget(digest)
                return nil
            }
            knownKeys.remember(stored, at: now)
            record = stored
        }
        let expected: APIKeyKind = apiKey.hasPrefix("pk_") ? .publishable : .secret
        guard record.kind == expected else { return nil }
        if !record.isActive(at: now), let end = record.expiresAt {
            throw VaultError(
                .apiKeyRevoked,
                "this API key was revoked at \(StoreDate.iso8601(end)); use the merchant's current key (`capture-cli keys list` shows which are active)"
            )
        }
        return record
    }

    private func newKeyRecord(_ key: String, _ kind: APIKeyKind, merchant: String, at now: Date) -> APIKeyRecord {
        APIKeyRecord(hash: keys.apiKeyDigest(key), merchantID: merchant, kind: kind, createdAt: now, hint: String(key.suffix(4)))
    }

    private func findMerchant(_ nameOrID: String) async throws(VaultError) -> MerchantRecord {
        let all = try await merchants()
        guard let found = all.first(where: { $0.id == nameOrID }) ?? all.first(where: { $0.name == nameOrID }) else {
            throw VaultError(.merchantNotFound, "no merchant is named '\(nameOrID)' or has that id; `capture-cli keys list` shows them")
        }
        return found
    }

    private func findKey(_ keyOrID: String) async throws(VaultError) -> APIKeyRecord {
        let notFound = VaultError(.apiKeyNotFound, "no API key of this vault is that key or has that id; `capture-cli keys list` shows the ids")
        if keyOrID.hasPrefix("key_") {
            let all = try await storing("list the keys") { try await store.apiKeys(merchantID: nil) }
            guard keyOrID.count == 20, let found = all.first(where: { $0.id == keyOrID }) else { throw notFound }
            return found
        }
        guard keyOrID.hasPrefix("pk_") || keyOrID.hasPrefix("sk_"), keyOrID.utf8.count <= 64 else { throw notFound }
        let digest = KeyRing.hex(keys.apiKeyCode(keyOrID))
        guard let found = try await storing("look up the key", { try await store.apiKey(hash: digest) }) else { throw notFound }
        return found
    }
}

/// API keys found in the store, by digest, each with the time it was read: a request within
/// the recheck interval skips the store. At most 10,000 are kept.
final class KnownAPIKeys: Sendable {
    private let records = Mutex<[String: (record: APIKeyRecord, readAt: Date)]>([:])

    /// The record read less than `freshFor` before `now`, if any.
    func record(for digest: String, at now: Date, freshFor interval: Duration) -> APIKeyRecord? {
        records.withLock { known in
            guard let entry = known[digest] else { return nil }
            let age = now.timeIntervalSince(entry.readAt)
            return age >= 0 && age < interval.seconds ? entry.record : nil
        }
    }

    func remember(_ record: APIKeyRecord, at now: Date) {
        records.withLock { known in
            if known.count >= 10_000 { known.removeAll() }
            known[record.hash] = (record, now)
        }
    }

    func forget(_ digest: String) {
        _ = records.withLock { $0.removeValue(forKey: digest) }
    }
}
