import CardCapture
public import Foundation
import Synchronization

/// Safe retries: a request sent again with the same `Idempotency-Key` gets the first answer
/// and runs nothing twice (a token is never spent twice); the same key with another request
/// is refused; while the first runs, a second with its key is refused too. Keys are kept
/// 24 hours, per merchant.
///
/// A request holds its key on a lease. When the process running it dies, the key is not
/// stuck: once the lease lapses, the next retry takes the key over and gets a final answer:
/// the charge the dead request recorded, settled (``Payments/resolve(_:merchantID:)``), or,
/// when it had recorded nothing, a fresh run.
///
/// The stored answer is sealed under the vault's key (AES-GCM, bound to the merchant and
/// the key): a webhook endpoint's answer holds its signing secret, a token's the token, and a
/// copy of the database must not show them.
public struct IdempotencyKeys: Sendable {
    /// What a call with a key came to.
    public enum Result: Sendable {
        /// The answer, and whether it is the stored answer of an earlier call.
        case answered(status: Int, body: Data, replayed: Bool)
        case mismatch
        case inProgress
        /// The request ran, but its answer cannot be shown again: it was stored before stored
        /// answers were sealed, or under another vault key.
        case answerUnavailable
    }

    let vault: Vault
    /// How long a key is remembered.
    public var window: TimeInterval = 24 * 3600
    /// How long a request holds its key before a retry may take it over: longer than any
    /// request runs (a processor's answer included).
    public var lease: Duration = .seconds(30)

    public init(vault: Vault, lease: Duration = .seconds(30)) {
        self.vault = vault
        self.lease = lease
    }

    /// Runs `operation` once per key and request (see the other `run`): for an operation that
    /// cannot keep its answer in its own write.
    public func run(
        merchantID: String,
        key: String,
        request: [UInt8],
        recover: ((String) async throws -> (status: Int, body: Data))? = nil,
        _ operation: () async throws -> (status: Int, body: Data)
    ) async throws -> Result {
        try await run(merchantID: merchantID, key: key, request: request, recover: recover, keeping: { _ in try await operation() })
    }

    /// Runs `operation` once per key and request.
    ///
    /// - Parameters:
    ///   - key: the caller's key (1 to 255 characters).
    ///   - request: what identifies the request: method, path and body. The store keeps only
    ///     its keyed digest.
    ///   - recover: the answer for a key whose first request died after it recorded the
    ///     charge with this transaction id (given to requests that record charges).
    ///   - operation: does the work and gives the answer to store. When it throws, the key is
    ///     released and the error passed on, so a corrected retry may use the key. It is given
    ///     a ``Keeper``: an answer made with it and kept by the store in the operation's own
    ///     write (a charge's settlement) is not written again.
    public func run(
        merchantID: String,
        key: String,
        request: [UInt8],
        recover: ((String) async throws -> (status: Int, body: Data))? = nil,
        keeping operation: (Keeper) async throws -> (status: Int, body: Data)
    ) async throws -> Result {
        let hash = vault.keys.requestDigest(request)
        let now = vault.configuration.now()
        let store = vault.store
        let claim = try await vault.storing("claim the idempotency key") { [window, lease] in
            try await store.claimIdempotency(
                merchantID: merchantID,
                key: key,
                requestHash: hash,
                now: now,
                window: window,
                leaseUntil: now.addingTimeInterval(lease.seconds)
            )
        }
        let keeper = Keeper(keys: self, merchantID: merchantID, key: key)
        /// The request run under the claimed key; a failure frees the key for a corrected retry.
        func runClaimed() async throws -> (status: Int, body: Data) {
            do {
                return try await operation(keeper)
            } catch {
                try? await store.releaseIdempotency(merchantID: merchantID, key: key, at: now)
                throw error
            }
        }
        let answer: (status: Int, body: Data)
        var replayed = false
        switch claim {
        case .replay(let status, let sealed, let keyID):
            guard let sealed, keyID == vault.keys.keyID,
                let body = try? vault.keys.open(sealed, for: .storedAnswer, context: Self.context(merchantID: merchantID, key: key))
            else { return .answerUnavailable }
            return .answered(status: status, body: Data(body), replayed: true)
        case .mismatch:
            return .mismatch
        case .inProgress:
            return .inProgress
        case .claimed:
            answer = try await runClaimed()
        case .recovered(let transactionID):
            if let transactionID, let recover {
                // The first request recorded its charge and died: that charge is the answer.
                answer = try await recover(transactionID)
                replayed = true
            } else {
                // It died before it changed anything: this retry is the request.
                answer = try await runClaimed()
            }
        }
        if let kept = keeper.kept, kept == answer {
            // Kept already, in the write that settled the charge.
            return .answered(status: answer.status, body: answer.body, replayed: replayed)
        }
        let sealed = try seal(answer.body, merchantID: merchantID, key: key)
        let keyID = vault.keys.keyID
        try await vault.storing("store the answer") {
            try await store.finishIdempotency(merchantID: merchantID, key: key, status: answer.status, body: sealed, keyID: keyID)
        }
        return .answered(status: answer.status, body: answer.body, replayed: replayed)
    }

    /// An answer's body sealed for its key's row.
    func seal(_ body: Data, merchantID: String, key: String) throws -> Data {
        try vault.keys.seal(Array(body), for: .storedAnswer, context: Self.context(merchantID: merchantID, key: key))
    }

    /// Makes a claimed key's answer for the store to keep in the operation's own write, and
    /// learns whether it was kept (then ``run(merchantID:key:request:recover:keeping:)`` does
    /// not write it again).
    public final class Keeper: Sendable {
        private let keys: IdempotencyKeys
        private let merchantID: String
        private let key: String
        private let keptAnswer = Mutex<(status: Int, body: Data)?>(nil)

        init(keys: IdempotencyKeys, merchantID: String, key: String) {
            self.keys = keys
            self.merchantID = merchantID
            self.key = key
        }

        /// The answer `status` and `body` (in clear), sealed as the key's row keeps it.
        public func answer(status: Int, body: Data) throws -> IdempotentAnswer {
            IdempotentAnswer(
                merchantID: merchantID,
                key: key,
                status: status,
                body: try keys.seal(body, merchantID: merchantID, key: key),
                keyID: keys.vault.keys.keyID,
                keeper: self,
                plain: body
            )
        }

        /// Told by whoever had the store keep `answer` in a write that committed.
        func keep(_ answer: IdempotentAnswer) {
            keptAnswer.withLock { $0 = (answer.status, answer.plain) }
        }

        /// The answer the store kept in the operation's write, if it did.
        public var kept: (status: Int, body: Data)? { keptAnswer.withLock { $0 } }
    }

    /// What a stored answer is sealed to: its merchant and key, so that an answer moved to
    /// another key's row does not open.
    static func context(merchantID: String, key: String) -> String {
        "answer \(merchantID.utf8.count):\(merchantID) \(key)"
    }

    /// Forgets keys past the window.
    @discardableResult
    public func purge() async throws(VaultError) -> Int {
        let cutoff = vault.configuration.now().addingTimeInterval(-window)
        let store = vault.store
        return try await vault.storing("purge idempotency keys") { try await store.purgeIdempotency(before: cutoff) }
    }
}
