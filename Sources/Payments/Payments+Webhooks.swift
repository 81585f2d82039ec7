import CardCapture
import Crypto
public import Foundation
public import Tokenizer

extension Payments {
    /// A new webhook endpoint and its signing secret: the only time the secret is shown.
    public struct NewWebhookEndpoint: Sendable {
        public let endpoint: WebhookEndpointRecord
        /// `whsec_…`: the HMAC-SHA256 key of the endpoint's signatures, all of it as UTF-8.
        public let secret: String
    }

    /// A delivery with its attempts, oldest first.
    public struct WebhookDelivery: Sendable {
        public let delivery: WebhookDeliveryRecord
        public let attempts: [WebhookAttemptRecord]

        package init(delivery: WebhookDeliveryRecord, attempts: [WebhookAttemptRecord]) {
            self.delivery = delivery
            self.attempts = attempts
        }
    }

    /// Endpoints a merchant may have at once.
    public static let webhookEndpointLimit = WebhookEvents.endpointLimit

    /// Adds an endpoint that is sent `events` (nil, or a list holding `"*"`, for every type) from now on.
    ///
    /// - Throws: ``VaultError`` `invalid_address` for a URL that is not absolute http(s) or
    ///   whose host is not a public address (``webhookAddresses``), `invalid_request` for an
    ///   unknown or empty event list, `webhook_endpoint_limit` for a merchant with 16 endpoints
    ///   already.
    public func createWebhookEndpoint(url: String, events: [String]?, merchantID: String) async throws(VaultError) -> NewWebhookEndpoint {
        let address = try WebAddress(url, param: "url")
        let url = address.text
        // Each item must be a type or "*" (openapi.json's enum of items); "*" anywhere is every
        // type, as leaving the list out is (Stripe's spelling).
        if let events {
            guard !events.isEmpty else {
                throw VaultError(.invalidRequest, "events must name at least one event type, or be left out for all", param: "events")
            }
            if let unknown = events.first(where: { $0 != "*" && !WebhookEvents.types.contains($0) }) {
                throw VaultError(
                    .invalidRequest,
                    "events: '\(unknown.prefix(60))' is not an event type; use \(WebhookEvents.types.joined(separator: ", ")), or \"*\" for all",
                    param: "events"
                )
            }
        }
        let events = events?.contains("*") == true ? nil : events
        let existing = try await storing("read the webhook endpoints") { try await store.webhookEndpoints(merchantID: merchantID) }
        let full = VaultError(
            .webhookEndpointLimit,
            "a merchant may have at most \(Self.webhookEndpointLimit) webhook endpoints; delete one first",
            param: "url"
        )
        // Asked first, before the address is looked up; held by the store, which counts and
        // adds in one step (another request may add one meanwhile).
        guard existing.count < Self.webhookEndpointLimit else { throw full }
        try await webhookAddresses.checkNew(address, param: "url")
        let id = ObjectID.random(.webhookEndpoint).rawValue
        let secret = ObjectID.random(.webhookSecret).rawValue
        let keys = vault.keys
        let endpoint = WebhookEndpointRecord(
            id: id,
            merchantID: merchantID,
            url: url,
            events: events.map { types in WebhookEvents.types.filter(types.contains) },
            keyID: keys.keyID,
            sealedSecret: Array(try keys.seal(Array(secret.utf8), for: .webhookSecret, context: id)),
            createdAt: vault.configuration.now(),
            deletedAt: nil
        )
        let added = try await storing("record the webhook endpoint") {
            try await store.insertWebhookEndpoint(endpoint, limit: Self.webhookEndpointLimit)
        }
        guard added else { throw full }
        return NewWebhookEndpoint(endpoint: endpoint, secret: secret)
    }

    public func webhookEndpoint(_ id: String, merchantID: String) async throws(VaultError) -> WebhookEndpointRecord {
        guard let endpoint = try await storing("read the webhook endpoint", { try await store.webhookEndpoint(id: id, merchantID: merchantID) })
        else {
            throw Self.noWebhookEndpoint(id)
        }
        return endpoint
    }

    private static func noWebhookEndpoint(_ id: String) -> VaultError {
        VaultError(.webhookEndpointNotFound, "no webhook endpoint \(id.prefix(40)) for this merchant", param: "id")
    }

    /// The merchant's endpoints, oldest first (16 at most, so one page).
    public func webhookEndpoints(merchantID: String) async throws(VaultError) -> [WebhookEndpointRecord] {
        try await storing("read the webhook endpoints") { try await store.webhookEndpoints(merchantID: merchantID) }
    }

    /// Deletes an endpoint: nothing more is sent to it, and deliveries still pending are canceled.
    public func deleteWebhookEndpoint(_ id: String, merchantID: String) async throws(VaultError) {
        let now = vault.configuration.now()
        guard try await storing("delete the webhook endpoint", { try await store.deleteWebhookEndpoint(id: id, merchantID: merchantID, at: now) })
        else {
            throw Self.noWebhookEndpoint(id)
        }
    }

    /// An endpoint's deliveries, newest first, each with its attempts, a page at a time.
    public func webhookDeliveries(
        endpoint id: String,
        merchantID: String,
        startingAfter: String? = nil,
        limit: Int = 100
    ) async throws(VaultError) -> Page<WebhookDelivery> {
        _ = try await webhookEndpoint(id, merchantID: merchantID)
        let page = try await page(
            after: startingAfter,
            limit: limit,
            find: { try await store.webhookDelivery(id: $0, merchantID: merchantID).flatMap { $0.endpointID == id ? $0 : nil } },
            notFound: VaultError(
                .webhookDeliveryNotFound,
                "no delivery \(startingAfter?.prefix(40) ?? "") of this endpoint to start after",
                param: "starting_after"
            ),
            fetch: { try await store.webhookDeliveries(endpointID: id, after: $0, limit: $1) }
        )
        let attempts = try await storing("read the delivery attempts") {
            try await store.webhookAttempts(deliveryIDs: page.items.map(\.id))
        }
        let byDelivery = Dictionary(grouping: attempts, by: \.deliveryID)
        return Page(
            items: page.items.map { WebhookDelivery(delivery: $0, attempts: byDelivery[$0.id] ?? []) },
            hasMore: page.hasMore
        )
    }

    // MARK: - Events

    /// One of the merchant's events, as it was sent (or would have been).
    public func event(_ id: String, merchantID: String) async throws(VaultError) -> WebhookEventRecord {
        guard ObjectID(id, kind: .event) != nil,
            let event = try await storing("read the event", { try await store.webhookEvent(id: id, merchantID: merchantID) })
        else {
            throw VaultError(.eventNotFound, "no event \(id.prefix(40)) for this merchant (events are kept for the retention period)", param: "id")
        }
        return event
    }

    /// The merchant's events, newest first, a page at a time: of one type and within a time
    /// range when `filter` says so.
    ///
    /// - Throws: ``VaultError`` `invalid_request` for a type that is not an event type.
    public func events(
        merchantID: String,
        filter: WebhookEventFilter = WebhookEventFilter(),
        startingAfter: String? = nil,
        limit: Int = 100
    ) async throws(VaultError) -> Page<WebhookEventRecord> {
        if let type = filter.type, !WebhookEvents.types.contains(type) {
            throw VaultError(
                .invalidRequest,
                "type: '\(type.prefix(40))' is not an event type; use one of \(WebhookEvents.types.joined(separator: ", "))",
                param: "type"
            )
        }
        return try await page(
            after: startingAfter,
            limit: limit,
            find: { try await store.webhookEvent(id: $0, merchantID: merchantID) },
            notFound: VaultError(
                .eventNotFound,
                "no event \(startingAfter?.prefix(40) ?? "") for this merchant to start after",
                param: "starting_after"
            ),
            fetch: { try await store.webhookEvents(merchantID: merchantID, filter: filter, after: $0, limit: $1) }
        )
    }

    /// Sends an event again, signed anew, with the same body: to each of the merchant's
    /// endpoints that takes its type (those with a delivery of it still pending are left to
    /// it). Each new delivery is tried at once, and again on failure while the event is less
    /// than a day old. The new deliveries; none when every endpoint has one pending already.
    ///
    /// - Throws: ``VaultError`` `event_not_found`.
    public func resendEvent(_ id: String, merchantID: String) async throws(VaultError) -> [WebhookDeliveryRecord] {
        _ = try await event(id, merchantID: merchantID)
        let now = vault.configuration.now()
        return try await storing("record the deliveries") {
            try await store.redeliverWebhookEvent(id: id, merchantID: merchantID, endpointIDs: nil, at: now)
        }
    }

    /// Tries a delivery's event again at its endpoint, as a new delivery (the old one and its
    /// attempts stay as they were).
    ///
    /// - Throws: ``VaultError`` `webhook_endpoint_not_found`, `webhook_delivery_not_found`
    ///   (not a delivery to this endpoint), `webhook_delivery_pending` (it is still being
    ///   tried: it will be sent without being asked).
    public func retryWebhookDelivery(
        _ id: String,
        endpoint endpointID: String,
        merchantID: String
    ) async throws(VaultError)
        -> WebhookDeliveryRecord
    {
        _ = try await webhookEndpoint(endpointID, merchantID: merchantID)
        guard let delivery = try await storing("read the delivery", { try await store.webhookDelivery(id: id, merchantID: merchantID) }),
            delivery.endpointID == endpointID
        else {
            throw VaultError(.webhookDeliveryNotFound, "no delivery \(id.prefix(40)) to webhook endpoint \(endpointID.prefix(40))", param: "id")
        }
        let pending = VaultError(
            .webhookDeliveryPending,
            "event \(delivery.eventID) is still being delivered to this endpoint (attempt \(delivery.attempts + 1) is due); it is not sent twice",
            param: "id"
        )
        guard delivery.status != WebhookDeliveryRecord.pending else { throw pending }
        let now = vault.configuration.now()
        let made = try await storing("record the delivery") {
            try await store.redeliverWebhookEvent(id: delivery.eventID, merchantID: merchantID, endpointIDs: [endpointID], at: now)
        }
        guard let new = made.first else {
            // The event is gone (past retention), or another retry of it is pending now.
            if try await storing("read the event", { try await store.webhookEvent(id: delivery.eventID, merchantID: merchantID) }) == nil {
                throw VaultError(.eventNotFound, "event \(delivery.eventID) is past the retention period; it can no longer be sent", param: "id")
            }
            throw pending
        }
        return new
    }

    /// The queue of deliveries over every merchant, for `/metrics`.
    public func webhookQueueState() async throws(VaultError) -> WebhookQueueState {
        try await storing("read the webhook queue") { try await store.webhookQueueState() }
    }

    /// The secret a due delivery is signed with.
    public func webhookSecret(of due: DueWebhookDelivery) throws(VaultError) -> String {
        guard due.keyID == vault.keys.keyID else {
            throw VaultError(.keyMismatch, "webhook endpoint \(due.delivery.endpointID) is sealed under \(due.keyID), not \(vault.keys.keyID)")
        }
        let bytes = try vault.keys.open(due.sealedSecret, for: .webhookSecret, context: due.delivery.endpointID)
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// How webhooks are signed: `Capture-Signature: t=<unix seconds>,v1=<hex>`, where the hex is
/// HMAC-SHA256 under the endpoint's secret (its UTF-8 bytes, `whsec_` included) of the
/// timestamp, a dot, and the body exactly as sent.
///
/// A merchant's endpoint checks it with CaptureClient's `WebhookVerifier`.
///
/// ```swift
/// let header = WebhookSignature.header(body: body, secret: "whsec_…", at: Date())
/// ```
public enum WebhookSignature {
    public static let headerName = "Capture-Signature"

    /// The header's value for `body` signed at `date`.
    public static func header(body: some Collection<UInt8>, secret: String, at date: Date) -> String {
        let timestamp = Int(date.timeIntervalSince1970)
        return "t=\(timestamp),v1=" + KeyRing.hex(code(body: body, secret: secret, timestamp: timestamp))
    }

    static func code(body: some Collection<UInt8>, secret: String, timestamp: Int) -> HMAC<SHA256>.MAC {
        HMAC<SHA256>.authenticationCode(for: signedBytes(body: body, timestamp: timestamp), using: SymmetricKey(data: Array(secret.utf8)))
    }

    /// What is signed: the timestamp, a dot, and the body as sent.
    private static func signedBytes(body: some Collection<UInt8>, timestamp: Int) -> [UInt8] {
        Array("\(timestamp).".utf8) + Array(body)
    }
}

// MARK: - Delivery

extension Payments {
    /// When a failed delivery is tried again: after `firstRetry`, then twice as long each
    /// time up to `longestWait`, until `window` after the event (Stripe and Mollie retry for
    /// days; a day is enough for an endpoint that is down, and keeps the queue small).
    public struct WebhookSchedule: Sendable {
        public var firstRetry: Duration
        public var longestWait: Duration
        public var window: Duration

        public init(firstRetry: Duration = .seconds(30), longestWait: Duration = .seconds(3600), window: Duration = .seconds(86_400)) {
            self.firstRetry = firstRetry
            self.longestWait = longestWait
            self.window = window
        }

        /// What follows attempt `number` that failed at `date`: another try, or none when
        /// the next would come after the window.
        public func afterFailure(_ number: Int, at date: Date, eventCreatedAt: Date) -> WebhookAttemptOutcome {
            let doublings = min(max(number - 1, 0), 30)
            let wait = min(firstRetry.seconds * pow(2, Double(doublings)), longestWait.seconds)
            let next = date.addingTimeInterval(wait)
            guard next <= eventCreatedAt.addingTimeInterval(window.seconds) else { return .failed }
            return .retry(at: next)
        }
    }

    /// Leases up to `limit` deliveries that are due, for `lease`: long enough to send one. No
    /// endpoint gets more than `perEndpoint`, counting the caller's deliveries still `sending`
    /// to it (by endpoint id), and no merchant more than `perMerchant` across its endpoints,
    /// counting those `sendingByMerchant`.
    public func dueWebhookDeliveries(
        limit: Int,
        lease: Duration,
        perEndpoint: Int? = nil,
        perMerchant: Int? = nil,
        sending: [String: Int] = [:],
        sendingByMerchant: [String: Int] = [:]
    ) async throws(VaultError) -> [DueWebhookDelivery] {
        let now = vault.configuration.now()
        return try await storing("find due webhook deliveries") {
            try await store.claimWebhookDeliveries(
                dueBy: now,
                leaseUntil: now.addingTimeInterval(lease.seconds),
                limit: limit,
                perEndpoint: perEndpoint ?? limit,
                perMerchant: perMerchant ?? limit,
                sending: sending,
                sendingByMerchant: sendingByMerchant
            )
        }
    }

    /// Gives back deliveries leased and never sent (the dispatcher stopping with some in
    /// hand): due again at once, with no attempt counted.
    public func releaseWebhookDeliveries(_ deliveries: [DueWebhookDelivery]) async throws(VaultError) {
        try await storing("give back leased webhook deliveries") { try await store.releaseWebhookDeliveries(deliveries.map(\.delivery)) }
    }

    /// Records an attempt at a due delivery: succeeded on a 2xx answer, otherwise tried again
    /// by `schedule`. Returns what follows.
    @discardableResult
    public func recordWebhookAttempt(
        _ due: DueWebhookDelivery,
        statusCode: Int?,
        error: String?,
        startedAt: Date,
        duration: Duration,
        schedule: WebhookSchedule
    ) async throws(VaultError) -> WebhookAttemptOutcome {
        // Counted when the delivery was leased (the attempt recorded as started then).
        let number = due.delivery.attempts
        let succeeded = error == nil && statusCode.map { (200..<300).contains($0) } == true
        let outcome: WebhookAttemptOutcome =
            succeeded ? .succeeded : schedule.afterFailure(number, at: vault.configuration.now(), eventCreatedAt: due.eventCreatedAt)
        let attempt = WebhookAttemptRecord(
            deliveryID: due.delivery.id,
            number: number,
            attemptedAt: startedAt,
            statusCode: statusCode,
            error: succeeded ? nil : (error ?? "answered \(statusCode ?? 0); only a 2xx answer counts as delivered"),
            durationMilliseconds: Int(duration.seconds * 1000)
        )
        try await storing("record the webhook attempt") { try await store.finishWebhookAttempt(attempt, outcome: outcome) }
        return outcome
    }

    /// Deletes finished deliveries and events older than `days` (an event goes once none of
    /// its deliveries is left); returns how many of each went.
    @discardableResult
    public func deleteWebhookRecords(olderThanDays days: Int) async throws(VaultError) -> (deliveries: Int, events: Int) {
        let cutoff = vault.configuration.now().addingTimeInterval(-Double(days) * 86_400)
        var deleted = (deliveries: 0, events: 0)
        while true {
            let batch = try await storing("delete old webhook records") { try await store.deleteWebhookRecords(before: cutoff, limit: 1000) }
            deleted.deliveries += batch.deliveries
            deleted.events += batch.events
            if batch.deliveries < 1000 && batch.events < 1000 { return deleted }
        }
    }
}
