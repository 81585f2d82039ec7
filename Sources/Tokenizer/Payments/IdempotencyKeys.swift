import Crypto
public import Foundation

/// Safe retries: a request sent again with the same `Idempotency-Key` gets the first answer
/// and runs nothing twice (a token is never spent twice); the same key with another request
/// is refused; while the first runs, a second with its key is refused too. Keys are kept
/// 24 hours, per merchant.
public struct IdempotencyKeys: Sendable {
    /// What a call with a key came to.
    public enum Result: Sendable {
        /// The answer, and whether it is the stored answer of an earlier call.
        case answered(status: Int, body: Data, replayed: Bool)
        case mismatch
        case inProgress
    }

    let vault: Vault
    /// How long a key is remembered.
    public var window: TimeInterval = 24 * 3600

    public init(vault: Vault) {
        self.vault = vault
    }

    /// Runs `operation` once per key and request.
    ///
    /// - Parameters:
    ///   - key: the caller's key (1 to 255 characters).
    ///   - request: what identifies the request: method, path and body.
    ///   - operation: does the work and gives the answer to store. When it throws, the key is
    ///     released and the error passed on, so a corrected retry may use the key.
    public func run(
        merchantID: String,
        key: String,
        request: [UInt8],
        _ operation: () async throws -> (status: Int, body: Data)
    ) async throws -> Result {
        let hash = KeyRing.hex(SHA256.hash(data: request))
        let now = vault.configuration.now()
        let store = vault.store
        let claim = try await vault.storing("claim the idempotency key") {
            try await store.claimIdempotency(merchantID: merchantID, key: key, requestHash: hash, now: now, window: window)
        }
        switch claim {
        case .replay(let status, let body):
            return .answered(status: status, body: body, replayed: true)
        case .mismatch:
            return .mismatch
        case .inProgress:
            return .inProgress
        case .claimed:
            let answer: (status: Int, body: Data)
            do {
                answer = try await operation()
            } catch {
                try? await store.releaseIdempotency(merchantID: merchantID, key: key)
                throw error
            }
            try await vault.storing("store the answer") {
                try await store.finishIdempotency(merchantID: merchantID, key: key, status: answer.status, body: answer.body)
            }
            return .answered(status: answer.status, body: answer.body, replayed: false)
        }
    }

    /// Forgets keys past the window.
    @discardableResult
    public func purge() async throws(VaultError) -> Int {
        let cutoff = vault.configuration.now().addingTimeInterval(-window)
        let store = vault.store
        return try await vault.storing("purge idempotency keys") { try await store.purgeIdempotency(before: cutoff) }
    }
}
