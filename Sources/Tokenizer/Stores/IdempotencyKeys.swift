import CardCapture
public import Foundation
import Synchronization

/// Safe retries: a request sent again with the same `Idempotency-Key` gets the first answer
/// and runs nothing twice (a token is never spent twice); the same key with another request
/// is refused; while the first runs, a second with its key is refused too. Keys are kept
/// 24 hours, per merchant.
///
/// A request holds its key on a lease. When the process running it dies, the key is not
/// stuck: once the lease lapses, or its server has gone unheard for its ``ServerPresence``'s
/// grace (seconds, where the lease is 30), the next retry takes the key over and gets a final answer:
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
        /// Its first request still runs, or died: the key is free or recovered after
        /// `retryAfter` seconds (its lease), when known.
        case inProgress(retryAfter: Int?)
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
    /// This server as the keys' holder: a key held by a server gone silent is taken over
    /// before its lease lapses (``ServerPresence``). Nil: leases only.
    public var presence: ServerPresence?

    public init(vault: Vault, lease: Duration = .seconds(30), presence: ServerPresence? = nil) {
        self.vault = vault
        self.lease = lease
        self.presence = presence
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
    ///   - claimInFirstWrite: the operation claims the key in its first write
    ///     (``Keeper/unclaimed``), so that a key never seen costs no commit of its own. An
    ///     operation given this must make its first write with the claim or throw before it
    ///     writes anything; when it throws before the key is claimed (the key is taken, or the
    ///     request is refused before its write), the key is claimed on its own first and the
    ///     operation runs again as it would without this.
    ///   - operation: does the work and gives the answer to store. When it throws, the key is
    ///     released and the error passed on, so a corrected retry may use the key. It is given
    ///     a ``Keeper``: an answer made with it and kept by the store in the operation's own
    ///     write (a charge's settlement) is not written again.
    public func run(
        merchantID: String,
        key: String,
        request: [UInt8],
        recover: ((String) async throws -> (status: Int, body: Data))? = nil,
        claimInFirstWrite: Bool = false,
        keeping operation: (Keeper) async throws -> (status: Int, body: Data)
    ) async throws -> Result {
        let hash = vault.keys.requestDigest(request)
        let now = vault.configuration.now()
        let leaseUntil = now.addingTimeInterval(lease.seconds)
        let holder = presence?.holder
        let store = vault.store
        if claimInFirstWrite {
            let claim = IdempotencyKeyClaim(
                merchantID: merchantID,
                key: key,
                requestHash: hash,
                createdAt: now,
                leaseUntil: leaseUntil,
                holder: holder
            )
            let keeper = Keeper(keys: self, merchantID: merchantID, key: key, claim: claim)
            do {
                let answer = try await operation(keeper)
                assert(keeper.claim == .made, "an operation that claims its key in its first write answered without claiming it")
                return try await answered(answer, keeper: keeper, replayed: false)
            } catch {
                switch keeper.claim {
                case .made:
                    try? await store.releaseIdempotency(merchantID: merchantID, key: key, at: now)
                    throw error
                case .unknown:
                    // Its write failed and may have committed: the key, if it was claimed,
                    // lapses with its lease like a crashed request's.
                    throw error
                case .unclaimed, .taken:
                    break  // The key claimed on its own, below.
                }
            }
        }
        let claim = try await vault.storing("claim the idempotency key") { [window] in
            try await store.claimIdempotency(
                merchantID: merchantID,
                key: key,
                requestHash: hash,
                now: now,
                window: window,
                leaseUntil: leaseUntil,
                holder: holder
            )
        }
        let keeper = Keeper(keys: self, merchantID: merchantID, key: key, claim: nil)
        /// The request run under the claimed key; a failure frees the key for a corrected retry.
        func runClaimed() async throws -> (status: Int, body: Data) {
            do {
                return try await operation(keeper)
            } catch {
                try? await store.releaseIdempotency(merchantID: merchantID, key: key, at: now)
                throw error
            }
        }
        switch claim {
        case .replay(let status, let sealed, let keyID):
            guard let sealed, keyID == vault.keys.keyID,
                let body = try? vault.keys.open(sealed, for: .storedAnswer, context: Self.context(merchantID: merchantID, key: key))
            else { return .answerUnavailable }
            return .answered(status: status, body: Data(body), replayed: true)
        case .mismatch:
            return .mismatch
        case .inProgress(let until):
            return .inProgress(retryAfter: until.map { max(1, Int(($0.timeIntervalSince(now)).rounded(.up))) })
        case .claimed:
            return try await answered(try await runClaimed(), keeper: keeper, replayed: false)
        case .recovered(let transactionID):
            if let transactionID, let recover {
                // The first request recorded its charge and died: that charge is the answer.
                return try await answered(try await recover(transactionID), keeper: keeper, replayed: true)
            }
            // It died before it changed anything: this retry is the request.
            return try await answered(try await runClaimed(), keeper: keeper, replayed: false)
        }
    }

    /// A claimed key's answer, stored unless the operation's own write kept it, or unless it is
    /// not final (``unfinishedStatus``: a charge whose outcome could not be written, with the
    /// database away): the key then stays claimed until its lease lapses, and a retry after it
    /// is answered by the charge as settled (`recover`).
    private func answered(_ answer: (status: Int, body: Data), keeper: Keeper, replayed: Bool) async throws -> Result {
        if let kept = keeper.kept, kept == answer {
            // Kept already, in the write that settled the charge.
            return .answered(status: answer.status, body: answer.body, replayed: replayed)
        }
        if answer.status == Self.unfinishedStatus {
            return .answered(status: answer.status, body: answer.body, replayed: replayed)
        }
        let sealed = try seal(answer.body, merchantID: keeper.merchantID, key: keeper.key)
        let keyID = vault.keys.keyID
        let store = vault.store
        try await vault.storing("store the answer") { [merchantID = keeper.merchantID, key = keeper.key] in
            try await store.finishIdempotency(merchantID: merchantID, key: key, status: answer.status, body: sealed, keyID: keyID)
        }
        return .answered(status: answer.status, body: answer.body, replayed: replayed)
    }

    /// The status of an answer that is not final (202: accepted, its outcome still to be
    /// written): never kept as a key's answer.
    public static let unfinishedStatus = 202

    /// An answer's body sealed for its key's row.
    func seal(_ body: Data, merchantID: String, key: String) throws -> Data {
        try vault.keys.seal(Array(body), for: .storedAnswer, context: Self.context(merchantID: merchantID, key: key))
    }

    /// Makes a claimed key's answer for the store to keep in the operation's own write, and
    /// learns whether it was kept (then ``run(merchantID:key:request:recover:keeping:)`` does
    /// not write it again).
    public final class Keeper: Sendable {
        private let keys: IdempotencyKeys
        let merchantID: String
        let key: String
        private let keptAnswer = Mutex<(status: Int, body: Data)?>(nil)
        /// The key's row, for the operation's first write to make, when the key is not claimed
        /// yet (`run`'s `claimInFirstWrite`).
        private let firstWriteClaim: IdempotencyKeyClaim?
        private let claimState = Mutex(Claim.unclaimed)

        /// What became of a claim left to the operation's first write.
        package enum Claim: Sendable, Equatable {
            /// Not tried yet (or claimed before the operation ran).
            case unclaimed
            /// Made by the operation's write.
            case made
            /// The key had a row: nothing was written.
            case taken
            /// The write failed, and may have committed.
            case unknown
        }

        init(keys: IdempotencyKeys, merchantID: String, key: String, claim: IdempotencyKeyClaim?) {
            self.keys = keys
            self.merchantID = merchantID
            self.key = key
            self.firstWriteClaim = claim
        }

        /// The key's row for the operation's first write to make, while it is not made:
        /// nil when the key was claimed before the operation ran.
        public var unclaimed: IdempotencyKeyClaim? {
            claimState.withLock { $0 == .unclaimed } ? firstWriteClaim : nil
        }

        package var claim: Claim { claimState.withLock { $0 } }

        /// Told by the write that was given ``unclaimed``.
        package func claimWent(_ outcome: Claim) {
            claimState.withLock { $0 = outcome }
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
        package func keep(_ answer: IdempotentAnswer) {
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
