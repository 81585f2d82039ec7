public import Foundation
public import GRDB
public import Tokenizer

extension SQLiteVaultStore {
    public func insertCheckoutSession(_ session: CheckoutSessionRecord) async throws {
        try await database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO checkout_session (id, merchant_id, status, amount, currency, description, return_url, cancel_url,
                      allowed_brands, return_format, tax_rate, client_id, save_payment_method, metadata, transaction_id, attempts,
                      created_at, expires_at, ended_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    session.id, session.merchantID, session.status, session.amount, session.currency, session.description,
                    session.returnURL, session.cancelURL, CheckoutSessionRecord.encode(brands: session.allowedBrands), session.returnFormat,
                    session.taxRate, session.clientID, session.savePaymentMethod, try CheckoutSessionRecord.encode(session.metadata),
                    session.transactionID, session.attempts, session.createdAt, session.expiresAt, session.endedAt,
                ]
            )
        }
    }

    public func checkoutSession(id: String) async throws -> CheckoutSessionRecord? {
        try await database.read { db in try CheckoutSessionRecord.fetchOne(db, key: id) }
    }

    public func checkoutSessions(merchantID: String, after: CheckoutSessionRecord?, limit: Int) async throws -> [CheckoutSessionRecord] {
        try await database.read { db in
            let request = CheckoutSessionRecord.filter(Column("merchant_id") == merchantID)
            return try Self.newestFirst(request, after: after.map { ($0.createdAt, $0.id) }, limit: limit).fetchAll(db)
        }
    }

    public func endCheckoutSession(id: String, status: String, at now: Date, events: WebhookEvents?) async throws -> CheckoutSessionRecord? {
        try await database.write { db in
            let ended = try CheckoutSessionRecord.fetchOne(
                db,
                sql: """
                    UPDATE checkout_session SET status = ?, ended_at = ?
                    WHERE id = ? AND status = 'open' AND (paying_until IS NULL OR paying_until <= ?) AND \(Self.noChargePending)
                    RETURNING *
                    """,
                arguments: [status, now, id, now]
            )
            if let ended, let events { try Self.record(events.ended(ended, transaction: nil), at: now, db) }
            return ended
        }
    }

    public func claimCheckoutPayment(id: String, attemptLimit: Int, at now: Date, leaseUntil: Date) async throws -> CheckoutClaim {
        try await database.write { db in
            // One read gives the record and the lease it does not carry.
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM checkout_session WHERE id = ?", arguments: [id]) else { return .notFound }
            let session = try CheckoutSessionRecord(row: row)
            guard session.status == CheckoutSessionRecord.open, session.expiresAt > now else { return .notOpen(session) }
            let busy: Date? = row["paying_until"]
            if let busy, busy > now { return .busy }
            // A charge left pending by a payment that died still holds the session: until it is
            // settled, another could pay it twice.
            let charging = try Bool.fetchOne(db, sql: "SELECT NOT \(Self.noChargePending) FROM checkout_session WHERE id = ?", arguments: [id])
            if charging == true { return .busy }
            guard session.attempts < attemptLimit else { return .attemptsUsed(session) }
            try db.execute(
                sql: "UPDATE checkout_session SET attempts = attempts + 1, paying_until = ? WHERE id = ?",
                arguments: [leaseUntil, id]
            )
            var claimed = session
            claimed.attempts += 1
            return .claimed(claimed)
        }
    }

    /// No charge made on the session's page is still pending: none can complete it any more.
    static let noChargePending = """
        NOT EXISTS (SELECT 1 FROM "transaction" t WHERE t.checkout_session_id = checkout_session.id AND t.status = 'pending')
        """

    /// Completes a session paid with `transaction`, in the write that settles it, with its
    /// event. The session is completed even if its time or its lease ran out meanwhile: the
    /// payment began within them (a recovery after a crash settles it later).
    static func completeCheckoutSession(_ id: String, paidWith transaction: TransactionRecord, events: WebhookEvents?, _ db: Database) throws {
        let now = events?.now() ?? Date()
        guard
            let complete = try CheckoutSessionRecord.fetchOne(
                db,
                sql: """
                    UPDATE checkout_session SET status = 'complete', transaction_id = ?, ended_at = ?, paying_until = NULL
                    WHERE id = ? AND status = 'open' RETURNING *
                    """,
                arguments: [transaction.id, now, id]
            )
        else { return }
        if let events { try record(events.ended(complete, transaction: transaction), at: now, db) }
    }

    public func releaseCheckoutPayment(id: String) async throws -> CheckoutSessionRecord? {
        try await database.write { db in
            try CheckoutSessionRecord.fetchOne(
                db,
                sql: "UPDATE checkout_session SET paying_until = NULL WHERE id = ? RETURNING *",
                arguments: [id]
            )
        }
    }

    public func expireCheckoutSessions(before now: Date, limit: Int, events: WebhookEvents?) async throws -> [CheckoutSessionRecord] {
        try await database.write { db in
            let expired = try CheckoutSessionRecord.fetchAll(
                db,
                sql: """
                    UPDATE checkout_session SET status = 'expired', ended_at = ?
                    WHERE id IN (
                      SELECT id FROM checkout_session
                      WHERE status = 'open' AND expires_at <= ? AND (paying_until IS NULL OR paying_until <= ?) AND \(Self.noChargePending)
                      ORDER BY expires_at LIMIT ?)
                    RETURNING *
                    """,
                arguments: [now, now, now, limit]
            )
            if let events {
                for session in expired {
                    try Self.record(events.ended(session, transaction: nil), at: now, db)
                }
            }
            return expired
        }
    }
}

extension CheckoutSessionRecord: FetchableRecord, TableRecord {
    public static let databaseTableName = "checkout_session"

    public init(row: Row) throws {
        let brands: String? = row["allowed_brands"]
        let metadata: String = row["metadata"]
        self.init(
            id: row["id"],
            merchantID: row["merchant_id"],
            status: row["status"],
            amount: row["amount"],
            currency: row["currency"],
            description: row["description"],
            returnURL: row["return_url"],
            cancelURL: row["cancel_url"],
            allowedBrands: Self.decodeBrands(brands),
            returnFormat: row["return_format"],
            taxRate: row["tax_rate"],
            clientID: row["client_id"],
            savePaymentMethod: row["save_payment_method"],
            metadata: try Self.decodeMetadata(metadata),
            transactionID: row["transaction_id"],
            attempts: row["attempts"],
            createdAt: row["created_at"],
            expiresAt: row["expires_at"],
            endedAt: row["ended_at"]
        )
    }
}
