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
    func merchant(id: String) async throws -> MerchantRecord?
    /// The key with this SHA-256 hash (hex), if any.
    func apiKey(hash: String) async throws -> APIKeyRecord?
    /// Every merchant, by name.
    func merchants() async throws -> [MerchantRecord]
    /// One merchant's keys, or every merchant's, oldest first.
    func apiKeys(merchantID: String?) async throws -> [APIKeyRecord]
    /// In one write: adds `insert` and ends the keys whose hashes are in `expire` at `at`
    /// (a key that ends sooner already keeps its end).
    func updateAPIKeys(insert: [APIKeyRecord], expire: [String], at: Date) async throws

    func insertToken(_ token: TokenRecord) async throws
    /// A merchant's token; another merchant's token is nil.
    func token(id: String, merchantID: String) async throws -> TokenRecord?
    /// Marks the token used and erases its CVC, if it is the merchant's, unused, not expired
    /// at `now`, and bound to nothing or to this amount and currency; atomically, so that
    /// of any number of concurrent callers exactly one gets ``TokenSpend/spent(_:charge:)``.
    ///
    /// With a `charge`, the same write records it as a `pending` transaction with the token's
    /// card summary: a token is never spent without its transaction, even if the process dies
    /// before the processor answers.
    ///
    /// With a charge's ``PendingCharge/keyClaim``, the same write first makes the key's row, as
    /// ``claimIdempotency(merchantID:key:requestHash:now:window:leaseUntil:holder:)`` would for a key
    /// never seen: when the key has a row already (on any server, a concurrent request's too)
    /// the answer is ``TokenSpend/keyTaken`` and nothing is written; any other answer, a
    /// refusal included, means the row was made.
    func spendToken(
        id: String,
        merchantID: String,
        amount: Int,
        currency: String,
        at now: Date,
        charge: PendingCharge?
    ) async throws
        -> TokenSpend
    /// Erases the sealed card data of at most `limit` tokens and `limit` scans that expired
    /// before `now` (a spend or a scan's use erases its own in the same step). Returns how
    /// many records were purged.
    func purgeTokenCardData(before now: Date, limit: Int) async throws -> Int
    /// Deletes the tokens and scans that expired before `cutoff`, at most `limit` of each
    /// kind. Returns how many records were deleted.
    func deleteRecords(expiredBefore cutoff: Date, limit: Int) async throws -> Int
    /// Makes card data that was erased (spent or purged) unrecoverable from the store's files:
    /// no copy of the old records may remain in a log or in free space.
    func shredErasedData() async throws

    // MARK: - Scans

    func insertScan(_ scan: ScanRecord) async throws
    /// A merchant's scan; another merchant's scan is nil.
    func scan(id: String, merchantID: String) async throws -> ScanRecord?
    /// Marks the scan used, erases its card data and saves `token`, if the scan is the
    /// merchant's, holds a number, is unused and is not expired at `now`; atomically, so that
    /// of concurrent callers exactly one gets ``ScanUse/tokenized`` (and only its token is saved).
    func insertToken(_ token: TokenRecord, usingScan scanID: String, at now: Date) async throws -> ScanUse

    // MARK: - Payments

    func insertClient(_ client: ClientRecord) async throws
    func client(id: String, merchantID: String) async throws -> ClientRecord?
    /// Saves a client's card: a new payment method, or, when the client has this card
    /// (fingerprint) already, that one with its expiry and sealed card brought up to date.
    func savePaymentMethod(_ method: PaymentMethodRecord) async throws -> PaymentMethodRecord
    func paymentMethod(id: String, merchantID: String) async throws -> PaymentMethodRecord?
    /// A client's payment methods, oldest first: at most `limit`, those after `after` (the last
    /// of the previous page) when it is given.
    func paymentMethods(clientID: String, merchantID: String, after: PaymentMethodRecord?, limit: Int) async throws -> [PaymentMethodRecord]
    /// Deletes a payment method and its sealed card; false when there was none.
    func deletePaymentMethod(id: String, merchantID: String) async throws -> Bool

    /// Records a transaction, with its event when it is settled already (and `events` given).
    func insertTransaction(_ transaction: TransactionRecord, events: WebhookEvents?) async throws
    /// Gives `pending`, a transaction as it was recorded pending, its outcome, and writes its
    /// event in the same transaction; returns it settled, or nil (and nothing written) when it
    /// is no longer pending or not there. A charge that pays a checkout session and succeeded
    /// completes the session in that write. With `answer`, that write also keeps the answer
    /// to its request's Idempotency-Key, as ``finishIdempotency(merchantID:key:status:body:keyID:)``
    /// would (only when it settles the transaction).
    func settleTransaction(
        _ pending: TransactionRecord,
        as settlement: Settlement,
        events: WebhookEvents?,
        answer: IdempotentAnswer?
    ) async throws -> TransactionRecord?
    /// Transactions still `pending` that were created before `date`, oldest first.
    func pendingTransactions(createdBefore date: Date, limit: Int) async throws -> [TransactionRecord]
    /// How many transactions are `pending` now, over every merchant.
    func pendingTransactionCount() async throws -> Int
    /// The store's connections now and the requests it refused for want of one; nil for a
    /// store that has none to count (SQLite).
    var connectionState: StoreConnectionState? { get }
    func transaction(id: String, merchantID: String) async throws -> TransactionRecord?
    /// A merchant's transactions, newest first, optionally one client's only: at most `limit`,
    /// those after `after` (the last of the previous page) when it is given.
    func transactions(merchantID: String, clientID: String?, after: TransactionRecord?, limit: Int) async throws -> [TransactionRecord]
    /// Adds a refund and raises the transaction's refunded amount, atomically, only while
    /// the refunded total stays within the amount, with its event, and `answer` kept for its
    /// Idempotency-Key (claimed before) in the same write; nil (and nothing written) otherwise.
    func insertRefund(_ refund: RefundRecord, events: WebhookEvents?, answer: IdempotentAnswer?) async throws -> TransactionRecord?
    /// Takes back a refund the processor did not make: its record, its amount from the
    /// transaction's refunded amount, and the key `answered` (the answer its insert kept),
    /// atomically.
    func deleteRefund(_ refund: RefundRecord, answered: IdempotentAnswer?) async throws

    /// Claims an idempotency key for a request (by its hash) until `leaseUntil`, or says how
    /// it was used within the last `window` before `now`; atomically, so that of concurrent
    /// requests with one key only one is `claimed` (or `recovered`). A key whose request is
    /// unfinished after its lease lapsed (its process died) is taken over as `recovered`; so is
    /// one whose holding server's heartbeat has run out, or who retired (``retireServer(_:)``),
    /// lease or not. The claim names `holder` (this server, once heard from) as its holder.
    func claimIdempotency(
        merchantID: String,
        key: String,
        requestHash: String,
        now: Date,
        window: TimeInterval,
        leaseUntil: Date,
        holder: String?
    ) async throws -> IdempotencyClaim
    /// Stores the answer to a claimed key: its body sealed under the vault key `keyID`. The first
    /// answer stored stays: a request that outran its lease, finishing after another took the
    /// key over, changes nothing.
    func finishIdempotency(merchantID: String, key: String, status: Int, body: Data, keyID: String) async throws
    /// Frees a claimed key whose request failed, so a retry may run; when the request had
    /// recorded a charge, the key is kept with its lease ended at `now`, so that the retry is
    /// answered with that charge.
    func releaseIdempotency(merchantID: String, key: String, at now: Date) async throws
    /// Forgets keys older than `date`, and servers not heard from since.
    func purgeIdempotency(before date: Date) async throws -> Int
    /// Notes that `server` is alive, and vouches for it until `aliveUntil`: the keys its
    /// requests hold stand until then (within their lease), unless it is heard from again.
    func heartbeat(server: String, aliveUntil: Date) async throws
    /// Forgets `server`, stopping: a key its requests still hold is taken over at once.
    func retireServer(_ server: String) async throws

    // MARK: - Checkout sessions

    func insertCheckoutSession(_ session: CheckoutSessionRecord) async throws
    /// The session with this id, whoever's (the hosted page knows only the id).
    func checkoutSession(id: String) async throws -> CheckoutSessionRecord?
    /// A merchant's sessions, newest first: at most `limit`, those after `after` when given.
    func checkoutSessions(merchantID: String, after: CheckoutSessionRecord?, limit: Int) async throws -> [CheckoutSessionRecord]
    /// Ends an open session as `status` (canceled), atomically, with its event; nil (and
    /// nothing written) when it is not open or a payment on it is under way.
    func endCheckoutSession(id: String, status: String, at now: Date, events: WebhookEvents?) async throws -> CheckoutSessionRecord?
    /// Starts a payment on the session's page, atomically: counts the attempt and holds the
    /// session until `leaseUntil` (or until the payment's charge is settled, or
    /// ``releaseCheckoutPayment(id:)``),
    /// if it is open, within its time at `now`, not held, and has had fewer than `attemptLimit`.
    func claimCheckoutPayment(id: String, attemptLimit: Int, at now: Date, leaseUntil: Date) async throws -> CheckoutClaim
    /// Ends the hold of a payment that did not pay: the session is open for another try.
    func releaseCheckoutPayment(id: String) async throws -> CheckoutSessionRecord?
    /// Ends as `expired` the open sessions whose time ran out before `now` and that no payment
    /// holds, at most `limit`, with their events, and returns them.
    func expireCheckoutSessions(before now: Date, limit: Int, events: WebhookEvents?) async throws -> [CheckoutSessionRecord]

    // MARK: - Webhooks

    /// Adds the endpoint unless its merchant has `limit` endpoints (not deleted) already: false
    /// then. The count and the insert are one step, whichever servers add endpoints at once.
    func insertWebhookEndpoint(_ endpoint: WebhookEndpointRecord, limit: Int) async throws -> Bool
    /// A merchant's endpoint, unless deleted.
    func webhookEndpoint(id: String, merchantID: String) async throws -> WebhookEndpointRecord?
    /// A merchant's endpoints, oldest first, deleted ones left out.
    func webhookEndpoints(merchantID: String) async throws -> [WebhookEndpointRecord]
    /// Deletes an endpoint: it is sent nothing more, and its pending deliveries are canceled.
    /// False when the merchant has no such endpoint.
    func deleteWebhookEndpoint(id: String, merchantID: String, at now: Date) async throws -> Bool
    /// Writes an event, with a delivery for each of its merchant's endpoints that takes its
    /// type; its id.
    func recordWebhookEvent(_ draft: WebhookEventDraft, at now: Date) async throws -> String
    /// A merchant's event.
    func webhookEvent(id: String, merchantID: String) async throws -> WebhookEventRecord?
    /// A merchant's events that pass `filter`, newest first: at most `limit`, those after
    /// `after` when given.
    func webhookEvents(
        merchantID: String,
        filter: WebhookEventFilter,
        after: WebhookEventRecord?,
        limit: Int
    ) async throws
        -> [WebhookEventRecord]
    /// Sends an event again: a new pending delivery, due `now`, to each endpoint of
    /// `endpointIDs` (nil: each of the merchant's endpoints that takes the event's type) that
    /// is not deleted and has no delivery of this event pending already. The new deliveries.
    func redeliverWebhookEvent(
        id: String,
        merchantID: String,
        endpointIDs: [String]?,
        at now: Date
    ) async throws
        -> [WebhookDeliveryRecord]
    /// How many deliveries are pending, over every merchant, and the oldest one's time.
    func webhookQueueState() async throws -> WebhookQueueState
    /// Leases up to `limit` pending deliveries due by `now` until `leaseUntil`, atomically, so
    /// that two dispatchers never send one delivery at once; a lease that lapsed (its process
    /// died) is taken over. Oldest first, with at most `perEndpoint` for one endpoint together
    /// with the caller's deliveries still `sending` to it (counts by endpoint id), and at most
    /// `perMerchant` for one merchant together with those `sendingByMerchant`.
    func claimWebhookDeliveries(
        dueBy now: Date,
        leaseUntil: Date,
        limit: Int,
        perEndpoint: Int,
        perMerchant: Int,
        sending: [String: Int],
        sendingByMerchant: [String: Int]
    ) async throws -> [DueWebhookDelivery]
    /// Records an attempt and what follows it, and ends the delivery's lease.
    func finishWebhookAttempt(_ attempt: WebhookAttemptRecord, outcome: WebhookAttemptOutcome) async throws
    /// Gives back leased deliveries that were never sent (their sender stopped first): each
    /// due again at once, its attempt count and history as before the lease. A delivery
    /// leased again since (its lease lapsed) is left as it is.
    func releaseWebhookDeliveries(_ deliveries: [WebhookDeliveryRecord]) async throws
    func webhookDelivery(id: String, merchantID: String) async throws -> WebhookDeliveryRecord?
    /// An endpoint's deliveries, newest first: at most `limit`, those after `after` when given.
    func webhookDeliveries(endpointID: String, after: WebhookDeliveryRecord?, limit: Int) async throws -> [WebhookDeliveryRecord]
    /// The attempts of these deliveries, by delivery and number.
    func webhookAttempts(deliveryIDs: [String]) async throws -> [WebhookAttemptRecord]
    /// Deletes up to `limit` finished deliveries made before `cutoff` and their attempts, and
    /// up to `limit` events made before it that have no delivery left; returns how many
    /// deliveries and events went.
    func deleteWebhookRecords(before cutoff: Date, limit: Int) async throws -> (deliveries: Int, events: Int)

    // MARK: - Jobs

    /// Runs `body` unless another process that shares the store is running the job of this
    /// name now (then nil, and nothing is run): the sweeps run on one server at a time. A
    /// store that one process owns runs it always.
    func exclusively<T: Sendable>(_ job: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T?

    /// Whether the store answers now (`/healthz`): a database server that is down or
    /// unreachable makes it false.
    func ping() async -> Bool
}

extension VaultStore {
    /// A file the process opened answers while the process runs.
    public func ping() async -> Bool { true }

    /// SQLite: writers of every process take turns on the file, and each step of a sweep is
    /// one write that checks its rows' state, so the steps need no lock of their own.
    public func exclusively<T: Sendable>(_ job: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T? {
        try await body()
    }

    /// Spends a token without recording a charge (tests of the spend itself).
    public func spendToken(id: String, merchantID: String, amount: Int, currency: String, at now: Date) async throws -> TokenSpend {
        try await spendToken(id: id, merchantID: merchantID, amount: amount, currency: currency, at: now, charge: nil)
    }
}

/// The store cannot be reached now (its database server is down, restarting, or out of
/// connections): the request changed nothing it answered for, and may be tried again later.
/// The API answers 503 `storage_unavailable` with Retry-After.
public struct StoreUnavailable: Error, CustomStringConvertible {
    /// What failed, without any value the request carried.
    public let reason: String
    /// The connection failed after the statement was sent: a write may have been made (its
    /// commit reached the database, and the database went away before it answered).
    public var mayHaveCommitted: Bool

    public init(reason: String, mayHaveCommitted: Bool = false) {
        self.reason = reason
        self.mayHaveCommitted = mayHaveCommitted
    }

    public var description: String { "the vault's database is unavailable: \(reason)" }
}

extension VaultStore {
    public var connectionState: StoreConnectionState? { nil }
}

/// A database's connections as one server's store counts them.
public struct StoreConnectionState: Sendable, Equatable {
    /// Connections held by requests now.
    public var inUse: Int
    /// Requests waiting for a connection now.
    public var waiting: Int
    /// Requests refused since the start: no connection within the bound, or the database
    /// closed it.
    public var unavailable: Int

    public init(inUse: Int, waiting: Int, unavailable: Int) {
        self.inUse = inUse
        self.waiting = waiting
        self.unavailable = unavailable
    }
}

/// A store opened by a server whose schema is newer than the server knows: the server must
/// be upgraded before it may use the vault.
public struct StoreSchemaTooNew: Error, CustomStringConvertible {
    public let found: Int
    public let known: Int

    public init(found: Int, known: Int) {
        self.found = found
        self.known = known
    }

    public var description: String {
        "the vault's schema is at version \(found), newer than this capture-cli knows (\(known)): upgrade capture-cli before serving this vault"
    }
}
