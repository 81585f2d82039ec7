public import Foundation
import Logging
import PostgresNIO
public import Tokenizer

extension PostgresVaultStore {
    // MARK: - Endpoints

    static let endpointColumns = "id, merchant_id, url, events, key_id, sealed_secret, created_at, deleted_at"

    static func endpoint(_ row: PostgresRow) throws -> WebhookEndpointRecord {
        let (id, merchant, url, events, keyID, secret, created, deleted) =
            try row.decode((String, String, String, String?, String, Data, Date, Date?).self)
        return WebhookEndpointRecord(
            id: id,
            merchantID: merchant,
            url: url,
            events: events.map(WebhookEndpointRecord.eventTypes(stored:)),
            keyID: keyID,
            sealedSecret: Array(secret),
            createdAt: created.stored,
            deletedAt: deleted?.stored
        )
    }

    public func insertWebhookEndpoint(_ endpoint: WebhookEndpointRecord, limit: Int) async throws -> Bool {
        try await transaction { [logger] connection in
            // The merchant's row locked against other additions (FOR NO KEY UPDATE: the other
            // tables' keys to it, which take a key share, are not held up), then counted.
            try await Self.execute(
                "SELECT 1 FROM merchant WHERE id = \(endpoint.merchantID) FOR NO KEY UPDATE",
                connection,
                logger
            )
            let added = try await Self.execute(
                """
                INSERT INTO webhook_endpoint (\(unescaped: Self.endpointColumns))
                SELECT \(endpoint.id), \(endpoint.merchantID), \(endpoint.url), \(WebhookEndpointRecord.stored(eventTypes: endpoint.events)),
                  \(endpoint.keyID), \(Data(endpoint.sealedSecret)), \(endpoint.createdAt.stored), \(endpoint.deletedAt?.stored)
                WHERE (SELECT count(*) FROM webhook_endpoint WHERE merchant_id = \(endpoint.merchantID) AND deleted_at IS NULL) < \(limit)
                """,
                connection,
                logger
            )
            return added == 1
        }
    }

    public func webhookEndpoint(id: String, merchantID: String) async throws -> WebhookEndpointRecord? {
        try await rows(
            """
            SELECT \(unescaped: Self.endpointColumns) FROM webhook_endpoint
            WHERE id = \(id) AND merchant_id = \(merchantID) AND deleted_at IS NULL
            """
        ).first.map(Self.endpoint)
    }

    public func webhookEndpoints(merchantID: String) async throws -> [WebhookEndpointRecord] {
        try await rows(
            """
            SELECT \(unescaped: Self.endpointColumns) FROM webhook_endpoint
            WHERE merchant_id = \(merchantID) AND deleted_at IS NULL ORDER BY created_at, id
            """
        ).map(Self.endpoint)
    }

    public func deleteWebhookEndpoint(id: String, merchantID: String, at now: Date) async throws -> Bool {
        try await transaction { [logger] connection in
            let deleted = try await Self.execute(
                """
                UPDATE webhook_endpoint SET deleted_at = \(now.stored)
                WHERE id = \(id) AND merchant_id = \(merchantID) AND deleted_at IS NULL
                """,
                connection,
                logger
            )
            guard deleted == 1 else { return false }
            try await Self.execute(
                "UPDATE webhook_delivery SET status = 'canceled', next_attempt_at = NULL WHERE endpoint_id = \(id) AND status = 'pending'",
                connection,
                logger
            )
            return true
        }
    }

    // MARK: - Events

    public func recordWebhookEvent(_ draft: WebhookEventDraft, at now: Date) async throws -> String {
        try await transaction { [logger] connection in
            try await Self.record(draft, at: now, connection, logger)
        }
    }

    /// ``record(_:at:_:_:)`` for a change that may tell of nothing (nil: nothing written).
    @discardableResult
    static func record(
        _ draft: WebhookEventDraft?,
        at now: Date,
        _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws -> String? {
        guard let draft else { return nil }
        let id: String = try await record(draft, at: now, connection, logger)
        return id
    }

    /// Writes an event, in the caller's transaction, with a delivery for each of the
    /// merchant's endpoints that takes its type; returns its id.
    @discardableResult
    static func record(_ draft: WebhookEventDraft, at now: Date, _ connection: PostgresConnection, _ logger: Logger) async throws -> String {
        let id = ObjectID.random(.event, at: now).rawValue
        try await execute(
            """
            INSERT INTO webhook_event (id, merchant_id, type, body, created_at)
            VALUES (\(id), \(draft.merchantID), \(draft.type), \(Data(draft.body(id: id, at: now))), \(now.stored))
            """,
            connection,
            logger
        )
        let endpoints = try await rows(
            "SELECT id, events FROM webhook_endpoint WHERE merchant_id = \(draft.merchantID) AND deleted_at IS NULL",
            connection,
            logger
        ).map { row in try row.decode((String, String?).self) }
        for endpoint in draft.takers(among: endpoints.map { (id: $0.0, events: $0.1) }) {
            try await insertDelivery(event: id, type: draft.type, merchantID: draft.merchantID, endpoint: endpoint, at: now, connection, logger)
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
        _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws -> String {
        let delivery = ObjectID.random(.webhookDelivery).rawValue
        try await execute(
            """
            INSERT INTO webhook_delivery (id, merchant_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, created_at)
            VALUES (\(delivery), \(merchantID), \(endpoint), \(event), \(type), 'pending', 0, \(now.stored), \(now.stored))
            """,
            connection,
            logger
        )
        return delivery
    }

    static let eventColumns = "id, merchant_id, type, body, created_at"

    static func event(_ row: PostgresRow) throws -> WebhookEventRecord {
        let (id, merchant, type, body, created) = try row.decode((String, String, String, Data, Date).self)
        return WebhookEventRecord(id: id, merchantID: merchant, type: type, body: Array(body), createdAt: created.stored)
    }

    public func webhookEvent(id: String, merchantID: String) async throws -> WebhookEventRecord? {
        try await rows(
            "SELECT \(unescaped: Self.eventColumns) FROM webhook_event WHERE id = \(id) AND merchant_id = \(merchantID)"
        ).first.map(Self.event)
    }

    public func webhookEvents(
        merchantID: String,
        filter: WebhookEventFilter,
        after: WebhookEventRecord?,
        limit: Int
    ) async throws
        -> [WebhookEventRecord]
    {
        // Each condition is bound whether or not it is given (NULL passes it): one text.
        try await rows(
            """
            SELECT \(unescaped: Self.eventColumns) FROM webhook_event
            WHERE merchant_id = \(merchantID)
              AND (\(filter.type)::text IS NULL OR type = \(filter.type))
              AND (\(filter.createdFrom?.stored)::timestamptz IS NULL OR created_at >= \(filter.createdFrom?.stored))
              AND (\(filter.createdBefore?.stored)::timestamptz IS NULL OR created_at < \(filter.createdBefore?.stored))
              AND (\(after?.createdAt.stored)::timestamptz IS NULL
                OR (created_at, id) < (\(after?.createdAt.stored), \(after?.id ?? "")))
            ORDER BY created_at DESC, id DESC LIMIT \(limit)
            """
        ).map(Self.event)
    }

    public func redeliverWebhookEvent(
        id: String,
        merchantID: String,
        endpointIDs: [String]?,
        at now: Date
    ) async throws
        -> [WebhookDeliveryRecord]
    {
        try await transaction { [logger] connection in
            // Its type alone: the body is not needed to make deliveries of it.
            guard
                let type = try await Self.rows(
                    "SELECT type FROM webhook_event WHERE id = \(id) AND merchant_id = \(merchantID)",
                    connection,
                    logger
                ).first?.decode(String.self)
            else { return [] }
            // The endpoints locked, so that two resends at once make one delivery each; the
            // deliveries pending read after, in a statement of its own, whose snapshot sees
            // those of a resend that held the locks first (one statement's would not).
            let live = try await Self.rows(
                """
                SELECT id, events FROM webhook_endpoint WHERE merchant_id = \(merchantID) AND deleted_at IS NULL
                ORDER BY created_at, id FOR UPDATE
                """,
                connection,
                logger
            ).map { row in try row.decode((String, String?).self) }.map { (id: $0.0, events: $0.1) }
            let pending = Set(
                try await Self.rows(
                    "SELECT endpoint_id FROM webhook_delivery WHERE event_id = \(id) AND status = 'pending'",
                    connection,
                    logger
                ).map { try $0.decode(String.self) }
            )
            let endpoints = live.filter { !pending.contains($0.id) }
            let chosen =
                endpointIDs.map { wanted in endpoints.map(\.id).filter(wanted.contains) }
                ?? WebhookEndpointRecord.takers(of: type, among: endpoints)
            var made: [String] = []
            for endpoint in chosen {
                made.append(
                    try await Self.insertDelivery(
                        event: id,
                        type: type,
                        merchantID: merchantID,
                        endpoint: endpoint,
                        at: now,
                        connection,
                        logger
                    )
                )
            }
            guard !made.isEmpty else { return [] }
            return try await Self.rows(
                "SELECT \(unescaped: Self.deliveryColumns) FROM webhook_delivery WHERE id = ANY(\(made)) ORDER BY endpoint_id",
                connection,
                logger
            ).map(Self.delivery)
        }
    }

    public func webhookQueueState() async throws -> WebhookQueueState {
        let row = try await rows("SELECT count(*), min(created_at) FROM webhook_delivery WHERE status = 'pending'").first
        let (count, oldest) = try row?.decode((Int, Date?).self) ?? (0, nil)
        return WebhookQueueState(pending: count, oldestPendingCreatedAt: oldest?.stored)
    }

    // MARK: - Deliveries

    static let deliveryColumns = "id, merchant_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, created_at"

    static func delivery(_ row: PostgresRow) throws -> WebhookDeliveryRecord {
        let (id, merchant, endpoint, event, type, status, attempts, next, created) =
            try row.decode((String, String, String, String, String, String, Int, Date?, Date).self)
        return WebhookDeliveryRecord(
            id: id,
            merchantID: merchant,
            endpointID: endpoint,
            eventID: event,
            eventType: type,
            status: status,
            attempts: attempts,
            nextAttemptAt: next?.stored,
            createdAt: created.stored
        )
    }

    public func claimWebhookDeliveries(
        dueBy now: Date,
        leaseUntil: Date,
        limit: Int,
        perEndpoint: Int,
        perMerchant: Int,
        sending: [String: Int],
        sendingByMerchant: [String: Int]
    ) async throws -> [DueWebhookDelivery] {
        let busy = String(decoding: try JSONEncoder().encode(sending), as: UTF8.self)
        let merchantsBusy = String(decoding: try JSONEncoder().encode(sendingByMerchant), as: UTF8.self)
        return try await transaction { [logger] connection in
            // Each endpoint's oldest due deliveries, at most `perEndpoint`, found through the
            // index by endpoint (a few rows each, however long the queue) and locked as they
            // are found, passing over those another server is leasing now (SKIP LOCKED: two
            // servers never lease one delivery, and neither waits for the other); of those the
            // oldest, no endpoint past `perEndpoint` and no merchant past `perMerchant` with
            // those this server sends already. A lease that lapsed (its server died) is taken
            // over. A delivery to an endpoint deleted meanwhile is cancelled instead
            // (`orphaned`): a settlement that found the endpoint live made it as the deletion
            // cancelled the others, whose statement could not see it.
            let rows = try await Self.rows(
                """
                WITH first AS (
                  SELECT d.id, d.endpoint_id, d.merchant_id, d.next_attempt_at
                  FROM webhook_endpoint w CROSS JOIN LATERAL (
                    SELECT id, endpoint_id, merchant_id, next_attempt_at FROM webhook_delivery
                    WHERE endpoint_id = w.id AND status = 'pending' AND next_attempt_at <= \(now.stored)
                      AND (lease_until IS NULL OR lease_until <= \(now.stored))
                    ORDER BY next_attempt_at, id LIMIT \(perEndpoint)
                    FOR UPDATE SKIP LOCKED) AS d),
                due AS (
                  SELECT id, endpoint_id, merchant_id, next_attempt_at,
                    ROW_NUMBER() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at, id) AS place,
                    ROW_NUMBER() OVER (PARTITION BY merchant_id ORDER BY next_attempt_at, id) AS merchant_place
                  FROM first),
                locked AS (
                  SELECT due.id FROM due
                    LEFT JOIN jsonb_each_text(\(busy)::jsonb) AS busy ON busy.key = due.endpoint_id
                    LEFT JOIN jsonb_each_text(\(merchantsBusy)::jsonb) AS merchant_busy ON merchant_busy.key = due.merchant_id
                  WHERE due.place + COALESCE(busy.value::integer, 0) <= \(perEndpoint)
                    AND due.merchant_place + COALESCE(merchant_busy.value::integer, 0) <= \(perMerchant)
                  ORDER BY due.next_attempt_at, due.id LIMIT \(limit)),
                orphaned AS (
                  UPDATE webhook_delivery d SET status = 'canceled', next_attempt_at = NULL
                  FROM locked, webhook_endpoint w
                  WHERE d.id = locked.id AND w.id = d.endpoint_id AND w.deleted_at IS NOT NULL),
                leased AS (
                  UPDATE webhook_delivery d SET lease_until = \(leaseUntil.stored), attempts = d.attempts + 1
                  FROM locked, webhook_event e, webhook_endpoint w
                  WHERE d.id = locked.id AND e.id = d.event_id AND w.id = d.endpoint_id AND w.deleted_at IS NULL
                  RETURNING d.id, d.merchant_id, d.endpoint_id, d.event_id, d.event_type, d.status, d.attempts, d.next_attempt_at,
                    d.created_at, e.body, e.created_at AS event_created_at, w.url, w.key_id, w.sealed_secret),
                started AS (
                  INSERT INTO webhook_attempt (delivery_id, number, attempted_at, status_code, error, duration_ms)
                  SELECT id, attempts, \(now.stored), NULL, \(WebhookAttemptRecord.unrecorded), 0 FROM leased
                  ON CONFLICT (delivery_id, number) DO NOTHING)
                SELECT * FROM leased
                """,
                connection,
                logger
            )
            return try rows.map { row in
                let delivery = try Self.delivery(row)
                let access = row.makeRandomAccess()
                return DueWebhookDelivery(
                    delivery: delivery,
                    merchantID: delivery.merchantID,
                    body: Array(try access[9].decode(Data.self)),
                    endpointURL: try access[11].decode(String.self),
                    keyID: try access[12].decode(String.self),
                    sealedSecret: Array(try access[13].decode(Data.self)),
                    eventCreatedAt: try access[10].decode(Date.self).stored
                )
            }
            .sorted { ($0.delivery.nextAttemptAt ?? .distantPast, $0.delivery.id) < ($1.delivery.nextAttemptAt ?? .distantPast, $1.delivery.id) }
        }
    }

    public func finishWebhookAttempt(_ attempt: WebhookAttemptRecord, outcome: WebhookAttemptOutcome) async throws {
        try await attemptFinishes.submit(Finishing(attempt: attempt, outcome: outcome)) { [self] items in
            try await Self.inBatchOrAlone(items) { [self] in try await finishTogether($0) }
        }.get()
    }

    /// An attempt's outcome as ``finishWebhookAttempt(_:outcome:)`` writes it.
    struct Finishing: Sendable {
        let attempt: WebhookAttemptRecord
        let outcome: WebhookAttemptOutcome
    }

    /// Records a batch of attempts (``Batches``) in one statement, one round trip and one commit
    /// for all: each attempt written over its record from the lease, and its delivery's lease
    /// ended with what follows. A delivery canceled meanwhile (its endpoint deleted) stays
    /// canceled. postgres-nio binds no NULL inside an array: no status code is 0, no error
    /// empty, and a next attempt's time is read only where there is one.
    private func finishTogether(_ items: [Finishing]) async throws -> [Void] {
        let next = items.map { (status: $0.outcome.delivery.status, at: $0.outcome.delivery.nextAttemptAt?.stored) }
        let attempts = items.map(\.attempt)
        try await execute(
            """
            WITH item AS (
              SELECT * FROM unnest(\(attempts.map(\.deliveryID))::text[], \(attempts.map { Int32($0.number) })::integer[],
                \(attempts.map(\.attemptedAt.stored))::timestamptz[], \(attempts.map { Int32($0.statusCode ?? 0) })::integer[],
                \(attempts.map { $0.error ?? "" })::text[], \(attempts.map { Int32($0.durationMilliseconds) })::integer[],
                \(next.map(\.status))::text[], \(next.map { $0.at != nil })::boolean[],
                \(next.map { $0.at ?? Date(timeIntervalSince1970: 0) })::timestamptz[])
                AS i(delivery_id, number, attempted_at, status_code, error, duration_ms, status, has_next, next_at)),
            recorded AS (
              INSERT INTO webhook_attempt (delivery_id, number, attempted_at, status_code, error, duration_ms)
              SELECT delivery_id, number, attempted_at, NULLIF(status_code, 0), NULLIF(error, ''), duration_ms FROM item
              ON CONFLICT (delivery_id, number) DO UPDATE SET attempted_at = EXCLUDED.attempted_at,
                status_code = EXCLUDED.status_code, error = EXCLUDED.error, duration_ms = EXCLUDED.duration_ms)
            UPDATE webhook_delivery d SET attempts = GREATEST(d.attempts, item.number), status = item.status,
              next_attempt_at = CASE WHEN item.has_next THEN item.next_at END, lease_until = NULL
            FROM item WHERE d.id = item.delivery_id AND d.status = 'pending'
            """
        )
        return items.map { _ in () }
    }

    public func releaseWebhookDeliveries(_ deliveries: [WebhookDeliveryRecord]) async throws {
        guard !deliveries.isEmpty else { return }
        // Only a lease still this caller's: its attempt count is the one it leased at (a lease
        // taken over since counted another).
        try await execute(
            """
            WITH item AS (
              SELECT * FROM unnest(\(deliveries.map(\.id))::text[], \(deliveries.map { Int32($0.attempts) })::integer[]) AS i(id, number)),
            released AS (
              UPDATE webhook_delivery d SET lease_until = NULL, attempts = item.number - 1
              FROM item WHERE d.id = item.id AND d.attempts = item.number AND d.status = 'pending'
              RETURNING d.id, item.number)
            DELETE FROM webhook_attempt a USING released
            WHERE a.delivery_id = released.id AND a.number = released.number AND a.error = \(WebhookAttemptRecord.unrecorded)
            """
        )
    }

    public func webhookDelivery(id: String, merchantID: String) async throws -> WebhookDeliveryRecord? {
        try await rows(
            "SELECT \(unescaped: Self.deliveryColumns) FROM webhook_delivery WHERE id = \(id) AND merchant_id = \(merchantID)"
        ).first.map(Self.delivery)
    }

    public func webhookDeliveries(endpointID: String, after: WebhookDeliveryRecord?, limit: Int) async throws -> [WebhookDeliveryRecord] {
        let query: PostgresQuery = "SELECT \(unescaped: Self.deliveryColumns) FROM webhook_delivery WHERE endpoint_id = \(endpointID)"
        return try await rows(query.newestFirst(after: after.map { ($0.createdAt, $0.id) }, limit: limit)).map(Self.delivery)
    }

    public func webhookAttempts(deliveryIDs: [String]) async throws -> [WebhookAttemptRecord] {
        guard !deliveryIDs.isEmpty else { return [] }
        return try await rows(
            """
            SELECT delivery_id, number, attempted_at, status_code, error, duration_ms FROM webhook_attempt
            WHERE delivery_id = ANY(\(deliveryIDs)) ORDER BY delivery_id, number
            """
        ).map { row in
            let (delivery, number, attempted, status, error, duration) = try row.decode((String, Int, Date, Int?, String?, Int).self)
            return WebhookAttemptRecord(
                deliveryID: delivery,
                number: number,
                attemptedAt: attempted.stored,
                statusCode: status,
                error: error,
                durationMilliseconds: duration
            )
        }
    }

    public func deleteWebhookRecords(before cutoff: Date, limit: Int) async throws -> (deliveries: Int, events: Int) {
        try await transaction { [logger] connection in
            // A batch of finished deliveries, oldest first; then a batch of old events that
            // have no delivery left, found by id (event ids start with their time): an index on
            // their time would cost every charge a write.
            let deliveries = try await Self.execute(
                """
                DELETE FROM webhook_delivery WHERE id IN (
                  SELECT id FROM webhook_delivery WHERE created_at < \(cutoff.stored) AND status != 'pending'
                  ORDER BY created_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                """,
                connection,
                logger
            )
            let events = try await Self.execute(
                """
                DELETE FROM webhook_event WHERE id IN (
                  SELECT id FROM webhook_event e WHERE id < \(ObjectID.bound(.event, after: cutoff))
                    AND NOT EXISTS (SELECT 1 FROM webhook_delivery WHERE event_id = e.id)
                  ORDER BY id LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                """,
                connection,
                logger
            )
            return (deliveries, events)
        }
    }
}
