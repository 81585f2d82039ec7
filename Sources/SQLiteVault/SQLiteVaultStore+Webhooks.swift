public import Foundation
public import GRDB
public import Tokenizer

extension SQLiteVaultStore {
    // MARK: - Endpoints

    public func insertWebhookEndpoint(_ endpoint: WebhookEndpointRecord, limit: Int) async throws -> Bool {
        try await database.write { db in
            let count = try Int.fetchOne(
                db,
                sql: "SELECT count(*) FROM webhook_endpoint WHERE merchant_id = ? AND deleted_at IS NULL",
                arguments: [endpoint.merchantID]
            )
            guard (count ?? 0) < limit else { return false }
            try db.execute(
                sql: """
                    INSERT INTO webhook_endpoint (id, merchant_id, url, events, key_id, sealed_secret, created_at, deleted_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    endpoint.id, endpoint.merchantID, endpoint.url, WebhookEndpointRecord.stored(eventTypes: endpoint.events), endpoint.keyID,
                    Data(endpoint.sealedSecret), endpoint.createdAt, endpoint.deletedAt,
                ]
            )
            return true
        }
    }

    public func webhookEndpoint(id: String, merchantID: String) async throws -> WebhookEndpointRecord? {
        try await database.read { db in
            try WebhookEndpointRecord.fetchOne(
                db,
                sql: "SELECT * FROM webhook_endpoint WHERE id = ? AND merchant_id = ? AND deleted_at IS NULL",
                arguments: [id, merchantID]
            )
        }
    }

    public func webhookEndpoints(merchantID: String) async throws -> [WebhookEndpointRecord] {
        try await database.read { db in
            try WebhookEndpointRecord.fetchAll(
                db,
                sql: "SELECT * FROM webhook_endpoint WHERE merchant_id = ? AND deleted_at IS NULL ORDER BY created_at, id",
                arguments: [merchantID]
            )
        }
    }

    public func deleteWebhookEndpoint(id: String, merchantID: String, at now: Date) async throws -> Bool {
        try await database.write { db in
            try db.execute(
                sql: "UPDATE webhook_endpoint SET deleted_at = ? WHERE id = ? AND merchant_id = ? AND deleted_at IS NULL",
                arguments: [now, id, merchantID]
            )
            guard db.changesCount == 1 else { return false }
            try db.execute(
                sql: "UPDATE webhook_delivery SET status = 'canceled', next_attempt_at = NULL WHERE endpoint_id = ? AND status = 'pending'",
                arguments: [id]
            )
            return true
        }
    }

    // MARK: - Events

    public func recordWebhookEvent(_ draft: WebhookEventDraft, at now: Date) async throws -> String {
        try await database.write { db in try Self.record(draft, at: now, db) }
    }

    /// ``record(_:at:_:)`` for a change that may tell of nothing (nil: nothing written).
    @discardableResult
    static func record(_ draft: WebhookEventDraft?, at now: Date, _ db: Database) throws -> String? {
        try draft.map { try record($0, at: now, db) }
    }

    /// Writes an event, in the caller's transaction, with a delivery for each of the
    /// merchant's endpoints that takes its type; returns its id.
    @discardableResult
    static func record(_ draft: WebhookEventDraft, at now: Date, _ db: Database) throws -> String {
        // Made at the event's time: event ids sort by it, and the retention sweep finds old
        // events by id.
        let id = ObjectID.random(.event, at: now).rawValue
        let insert = try DirectStatement(db, sql: "INSERT INTO webhook_event (id, merchant_id, type, body, created_at) VALUES (?, ?, ?, ?, ?)")
        try insert.execute(binding: id, draft.merchantID, draft.type, Data(draft.body(id: id, at: now)), StoreDate.text(now))
        // Run for every charge, on the writer, and most merchants have no endpoint.
        let select = try DirectStatement(db, sql: "SELECT id, events FROM webhook_endpoint WHERE merchant_id = ? AND deleted_at IS NULL")
        let endpoints = try select.all(binding: draft.merchantID) { row -> (id: String, events: String?) in (try row.value(0), row.optional(1)) }
        for endpoint in draft.takers(among: endpoints) {
            try insertDelivery(event: id, type: draft.type, merchantID: draft.merchantID, endpoint: endpoint, at: now, db)
        }
        return id
    }

    /// A pending delivery of an event to an endpoint, due at once; its id.
    @discardableResult
    static func insertDelivery(
        event: String,
        type: String,
        merchantID: String,
        endpoint: String,
        at now: Date,
        _ db: Database
    ) throws
        -> String
    {
        let id = ObjectID.random(.webhookDelivery).rawValue
        try db.execute(
            sql: """
                INSERT INTO webhook_delivery (id, merchant_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, created_at)
                VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?)
                """,
            arguments: [id, merchantID, endpoint, event, type, now, now]
        )
        return id
    }

    public func webhookEvent(id: String, merchantID: String) async throws -> WebhookEventRecord? {
        try await database.read { db in
            try WebhookEventRecord.fetchOne(db, sql: "SELECT * FROM webhook_event WHERE id = ? AND merchant_id = ?", arguments: [id, merchantID])
        }
    }

    public func webhookEvents(
        merchantID: String,
        filter: WebhookEventFilter,
        after: WebhookEventRecord?,
        limit: Int
    ) async throws
        -> [WebhookEventRecord]
    {
        try await database.read { db in
            var request = WebhookEventRecord.filter(Column("merchant_id") == merchantID)
            if let type = filter.type { request = request.filter(Column("type") == type) }
            if let from = filter.createdFrom { request = request.filter(Column("created_at") >= from) }
            if let before = filter.createdBefore { request = request.filter(Column("created_at") < before) }
            return try Self.newestFirst(request, after: after.map { ($0.createdAt, $0.id) }, limit: limit).fetchAll(db)
        }
    }

    public func redeliverWebhookEvent(
        id: String,
        merchantID: String,
        endpointIDs: [String]?,
        at now: Date
    ) async throws
        -> [WebhookDeliveryRecord]
    {
        try await database.write { db in
            // Its type alone: the body is not needed to make deliveries of it.
            guard
                let type = try String.fetchOne(
                    db,
                    sql: "SELECT type FROM webhook_event WHERE id = ? AND merchant_id = ?",
                    arguments: [id, merchantID]
                )
            else { return [] }
            let endpoints = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, events FROM webhook_endpoint w WHERE merchant_id = ? AND deleted_at IS NULL
                      AND NOT EXISTS (SELECT 1 FROM webhook_delivery d WHERE d.event_id = ? AND d.endpoint_id = w.id AND d.status = 'pending')
                    ORDER BY created_at, id
                    """,
                arguments: [merchantID, id]
            ).map { row -> (id: String, events: String?) in (row["id"], row["events"]) }
            let chosen =
                endpointIDs.map { wanted in endpoints.map(\.id).filter(wanted.contains) }
                ?? WebhookEndpointRecord.takers(of: type, among: endpoints)
            let made = try chosen.map { endpoint in
                try Self.insertDelivery(event: id, type: type, merchantID: merchantID, endpoint: endpoint, at: now, db)
            }
            return try WebhookDeliveryRecord.filter(made.contains(Column("id"))).order(Column("endpoint_id")).fetchAll(db)
        }
    }

    public func webhookQueueState() async throws -> WebhookQueueState {
        try await database.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT count(*), min(created_at) FROM webhook_delivery WHERE status = 'pending'")
            return WebhookQueueState(pending: row?[0] ?? 0, oldestPendingCreatedAt: row?[1])
        }
    }

    // MARK: - Deliveries

    public func claimWebhookDeliveries(
        dueBy now: Date,
        leaseUntil: Date,
        limit: Int,
        perEndpoint: Int,
        perMerchant: Int,
        sending: [String: Int],
        sendingByMerchant: [String: Int]
    ) async throws -> [DueWebhookDelivery] {
        // The deliveries being sent, by endpoint and by merchant, as JSON objects for json_each.
        let busyJSON = String(decoding: try JSONEncoder().encode(sending), as: UTF8.self)
        let merchantsJSON = String(decoding: try JSONEncoder().encode(sendingByMerchant), as: UTF8.self)
        return try await database.write { db in
            // Each endpoint's oldest due deliveries, at most `perEndpoint`, found through the
            // index by endpoint (a few rows each, however long the queue); of those the oldest,
            // no endpoint past `perEndpoint` and no merchant past `perMerchant` at once,
            // counting those already being sent: endpoints that do not answer hold only their
            // merchant's share of the senders.
            let rows = try Row.fetchAll(
                db,
                sql: """
                    WITH first AS (
                      SELECT d.id, d.endpoint_id, w.merchant_id, d.next_attempt_at
                      FROM webhook_endpoint w JOIN webhook_delivery d ON d.id IN (
                        SELECT id FROM webhook_delivery
                        WHERE endpoint_id = w.id AND status = 'pending' AND next_attempt_at <= ?
                          AND (lease_until IS NULL OR lease_until <= ?)
                        ORDER BY next_attempt_at, id LIMIT ?)),
                    due AS (
                      SELECT id, endpoint_id, merchant_id, next_attempt_at,
                        ROW_NUMBER() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at, id) AS place,
                        ROW_NUMBER() OVER (PARTITION BY merchant_id ORDER BY next_attempt_at, id) AS merchant_place
                      FROM first)
                    UPDATE webhook_delivery SET lease_until = ?, attempts = attempts + 1
                    WHERE id IN (
                      SELECT due.id FROM due
                        LEFT JOIN json_each(?) AS busy ON busy.key = due.endpoint_id
                        LEFT JOIN json_each(?) AS merchant_busy ON merchant_busy.key = due.merchant_id
                      WHERE due.place + COALESCE(busy.value, 0) <= ? AND due.merchant_place + COALESCE(merchant_busy.value, 0) <= ?
                      ORDER BY due.next_attempt_at, due.id LIMIT ?)
                    RETURNING *
                    """,
                arguments: [now, now, perEndpoint, leaseUntil, busyJSON, merchantsJSON, perEndpoint, perMerchant, limit]
            )
            return try rows.map { row in
                let delivery = try WebhookDeliveryRecord(row: row)
                // The attempt is on record from its start: one whose sender stops before it
                // records the outcome still shows in the delivery's history.
                try db.execute(
                    sql: """
                        INSERT OR IGNORE INTO webhook_attempt (delivery_id, number, attempted_at, status_code, error, duration_ms)
                        VALUES (?, ?, ?, NULL, ?, 0)
                        """,
                    arguments: [delivery.id, delivery.attempts, now, WebhookAttemptRecord.unrecorded]
                )
                guard
                    let joined = try Row.fetchOne(
                        db,
                        sql: """
                            SELECT e.body, e.created_at, w.url, w.key_id, w.sealed_secret, w.merchant_id
                            FROM webhook_event e, webhook_endpoint w WHERE e.id = ? AND w.id = ?
                            """,
                        arguments: [delivery.eventID, delivery.endpointID]
                    )
                else { throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "delivery \(delivery.id) has no event or endpoint") }
                let body: Data = joined["body"]
                let secret: Data = joined["sealed_secret"]
                return DueWebhookDelivery(
                    delivery: delivery,
                    merchantID: joined["merchant_id"],
                    body: Array(body),
                    endpointURL: joined["url"],
                    keyID: joined["key_id"],
                    sealedSecret: Array(secret),
                    eventCreatedAt: joined["created_at"]
                )
            }
        }
    }

    public func finishWebhookAttempt(_ attempt: WebhookAttemptRecord, outcome: WebhookAttemptOutcome) async throws {
        try await database.write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO webhook_attempt (delivery_id, number, attempted_at, status_code, error, duration_ms)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    attempt.deliveryID, attempt.number, attempt.attemptedAt, attempt.statusCode, attempt.error, attempt.durationMilliseconds,
                ]
            )
            let (status, next) = outcome.delivery
            // A delivery canceled meanwhile (its endpoint deleted) stays canceled.
            try db.execute(
                sql: """
                    UPDATE webhook_delivery SET attempts = MAX(attempts, ?), status = ?, next_attempt_at = ?, lease_until = NULL
                    WHERE id = ? AND status = 'pending'
                    """,
                arguments: [attempt.number, status, next, attempt.deliveryID]
            )
        }
    }

    public func releaseWebhookDeliveries(_ deliveries: [WebhookDeliveryRecord]) async throws {
        guard !deliveries.isEmpty else { return }
        try await database.write { db in
            for delivery in deliveries {
                // Only a lease still this caller's: its attempt count is the one it leased at.
                try db.execute(
                    sql: """
                        UPDATE webhook_delivery SET lease_until = NULL, attempts = attempts - 1
                        WHERE id = ? AND attempts = ? AND status = 'pending'
                        """,
                    arguments: [delivery.id, delivery.attempts]
                )
                guard db.changesCount > 0 else { continue }
                try db.execute(
                    sql: "DELETE FROM webhook_attempt WHERE delivery_id = ? AND number = ? AND error = ?",
                    arguments: [delivery.id, delivery.attempts, WebhookAttemptRecord.unrecorded]
                )
            }
        }
    }

    public func webhookDelivery(id: String, merchantID: String) async throws -> WebhookDeliveryRecord? {
        try await database.read { db in
            try WebhookDeliveryRecord.fetchOne(
                db,
                sql: "SELECT * FROM webhook_delivery WHERE id = ? AND merchant_id = ?",
                arguments: [id, merchantID]
            )
        }
    }

    public func webhookDeliveries(endpointID: String, after: WebhookDeliveryRecord?, limit: Int) async throws -> [WebhookDeliveryRecord] {
        try await database.read { db in
            let request = WebhookDeliveryRecord.filter(Column("endpoint_id") == endpointID)
            return try Self.newestFirst(request, after: after.map { ($0.createdAt, $0.id) }, limit: limit).fetchAll(db)
        }
    }

    public func webhookAttempts(deliveryIDs: [String]) async throws -> [WebhookAttemptRecord] {
        guard !deliveryIDs.isEmpty else { return [] }
        return try await database.read { db in
            try WebhookAttemptRecord.filter(deliveryIDs.contains(Column("delivery_id")))
                .order(Column("delivery_id"), Column("number"))
                .fetchAll(db)
        }
    }

    public func deleteWebhookRecords(before cutoff: Date, limit: Int) async throws -> (deliveries: Int, events: Int) {
        try await database.write { db in
            // Over deliveries only: a pending one is a day old at most (or a resend's, minutes).
            try db.execute(sql: Self.deleteOldDeliveries, arguments: [cutoff, limit])
            let deliveries = db.changesCount
            // Then events past the cutoff with no delivery left, oldest first, by id (event ids
            // start with their time): an index on their time would cost every charge a write.
            try db.execute(sql: Self.deleteOldEvents, arguments: [ObjectID.bound(.event, after: cutoff), limit])
            return (deliveries, db.changesCount)
        }
    }
}

extension SQLiteVaultStore {
    /// Deletes a batch of finished deliveries, oldest first.
    static let deleteOldDeliveries = """
        DELETE FROM webhook_delivery WHERE id IN (
          SELECT id FROM webhook_delivery WHERE created_at < ? AND status != 'pending' ORDER BY created_at LIMIT ?)
        """
    /// Deletes a batch of old events none of whose deliveries is left.
    static let deleteOldEvents = """
        DELETE FROM webhook_event WHERE id IN (
          SELECT id FROM webhook_event e WHERE id < ?
            AND NOT EXISTS (SELECT 1 FROM webhook_delivery WHERE event_id = e.id)
          ORDER BY id LIMIT ?)
        """
}

extension WebhookEventRecord: FetchableRecord, TableRecord {
    public static let databaseTableName = "webhook_event"

    public init(row: Row) throws {
        let body: Data = row["body"]
        self.init(id: row["id"], merchantID: row["merchant_id"], type: row["type"], body: Array(body), createdAt: row["created_at"])
    }
}

extension WebhookEndpointRecord: FetchableRecord {
    public init(row: Row) throws {
        let events: String? = row["events"]
        let secret: Data = row["sealed_secret"]
        self.init(
            id: row["id"],
            merchantID: row["merchant_id"],
            url: row["url"],
            events: events.map(Self.eventTypes(stored:)),
            keyID: row["key_id"],
            sealedSecret: Array(secret),
            createdAt: row["created_at"],
            deletedAt: row["deleted_at"]
        )
    }
}

extension WebhookDeliveryRecord: FetchableRecord, TableRecord {
    public static let databaseTableName = "webhook_delivery"

    public init(row: Row) throws {
        self.init(
            id: row["id"],
            merchantID: row["merchant_id"],
            endpointID: row["endpoint_id"],
            eventID: row["event_id"],
            eventType: row["event_type"],
            status: row["status"],
            attempts: row["attempts"],
            nextAttemptAt: row["next_attempt_at"],
            createdAt: row["created_at"]
        )
    }
}

extension WebhookAttemptRecord: FetchableRecord, TableRecord {
    public static let databaseTableName = "webhook_attempt"

    public init(row: Row) throws {
        self.init(
            deliveryID: row["delivery_id"],
            number: row["number"],
            attemptedAt: row["attempted_at"],
            statusCode: row["status_code"],
            error: row["error"],
            durationMilliseconds: row["duration_ms"]
        )
    }
}
