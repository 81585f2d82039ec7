public import Foundation
import Logging
import PostgresNIO
public import Tokenizer

extension PostgresVaultStore {
    static let checkoutColumns = """
        id, merchant_id, status, amount, currency, description, return_url, cancel_url, allowed_brands, return_format, tax_rate, \
        client_id, save_payment_method, metadata, transaction_id, attempts, created_at, expires_at, ended_at
        """

    /// The session's columns, then its lease (`paying_until`).
    static let checkoutColumnsWithLease = checkoutColumns + ", paying_until"

    static func checkoutSession(_ row: PostgresRow) throws -> CheckoutSessionRecord {
        let (
            id, merchant, status, amount, currency, description, returnURL, cancelURL, brands, returnFormat, taxRate, client,
            save, metadata, transaction, attempts, created, expires, ended
        ) = try row.decode(
            (
                String, String, String, Int, String, String?, String, String?, String?, String, String?, String?, Bool, String,
                String?, Int, Date, Date, Date?
            ).self
        )
        return CheckoutSessionRecord(
            id: id,
            merchantID: merchant,
            status: status,
            amount: amount,
            currency: currency,
            description: description,
            returnURL: returnURL,
            cancelURL: cancelURL,
            allowedBrands: CheckoutSessionRecord.decodeBrands(brands),
            returnFormat: returnFormat,
            taxRate: taxRate,
            clientID: client,
            savePaymentMethod: save,
            metadata: try CheckoutSessionRecord.decodeMetadata(metadata),
            transactionID: transaction,
            attempts: attempts,
            createdAt: created.stored,
            expiresAt: expires.stored,
            endedAt: ended?.stored
        )
    }

    public func insertCheckoutSession(_ session: CheckoutSessionRecord) async throws {
        let metadata = try CheckoutSessionRecord.encode(session.metadata)
        let brands = CheckoutSessionRecord.encode(brands: session.allowedBrands)
        try await execute(
            """
            INSERT INTO checkout_session (\(unescaped: Self.checkoutColumns))
            VALUES (\(session.id), \(session.merchantID), \(session.status), \(session.amount), \(session.currency),
              \(session.description), \(session.returnURL), \(session.cancelURL), \(brands), \(session.returnFormat),
              \(session.taxRate), \(session.clientID), \(session.savePaymentMethod), \(metadata), \(session.transactionID),
              \(session.attempts), \(session.createdAt.stored), \(session.expiresAt.stored), \(session.endedAt?.stored))
            """
        )
    }

    public func checkoutSession(id: String) async throws -> CheckoutSessionRecord? {
        try await rows("SELECT \(unescaped: Self.checkoutColumns) FROM checkout_session WHERE id = \(id)").first.map(Self.checkoutSession)
    }

    public func checkoutSessions(merchantID: String, after: CheckoutSessionRecord?, limit: Int) async throws -> [CheckoutSessionRecord] {
        let query: PostgresQuery = "SELECT \(unescaped: Self.checkoutColumns) FROM checkout_session WHERE merchant_id = \(merchantID)"
        return try await rows(query.newestFirst(after: after.map { ($0.createdAt, $0.id) }, limit: limit)).map(Self.checkoutSession)
    }

    /// No charge made on the session's page is still pending: none can complete it any more.
    static let noChargePending = """
        NOT EXISTS (SELECT 1 FROM "transaction" t WHERE t.checkout_session_id = checkout_session.id AND t.status = 'pending')
        """

    public func endCheckoutSession(id: String, status: String, at now: Date, events: WebhookEvents?) async throws -> CheckoutSessionRecord? {
        try await transaction { [logger] connection in
            let rows = try await Self.rows(
                """
                UPDATE checkout_session SET status = \(status), ended_at = \(now.stored)
                WHERE id = \(id) AND status = 'open' AND (paying_until IS NULL OR paying_until <= \(now.stored))
                  AND \(unescaped: Self.noChargePending)
                RETURNING \(unescaped: Self.checkoutColumns)
                """,
                connection,
                logger
            )
            guard let row = rows.first else { return nil }
            let ended = try Self.checkoutSession(row)
            if let events {
                try await Self.record(try events.ended(ended, transaction: nil), at: now, connection, logger)
            }
            return ended
        }
    }

    public func claimCheckoutPayment(id: String, attemptLimit: Int, at now: Date, leaseUntil: Date) async throws -> CheckoutClaim {
        try await transaction { [logger] connection in
            // The session's row locked for the claim: a second payment, on any server, waits
            // for this one's decision and then finds the session held.
            let rows = try await Self.rows(
                "SELECT \(unescaped: Self.checkoutColumnsWithLease) FROM checkout_session WHERE id = \(id) FOR UPDATE",
                connection,
                logger
            )
            guard let row = rows.first else { return .notFound }
            let session = try Self.checkoutSession(row)
            guard session.status == CheckoutSessionRecord.open, session.expiresAt > now else { return .notOpen(session) }
            let busy = try row.makeRandomAccess()[19].decode(Date?.self)
            if let busy, busy > now { return .busy }
            // A charge left pending by a payment that died still holds the session.
            let charging = try await Self.rows(
                #"SELECT 1 FROM "transaction" WHERE checkout_session_id = \#(id) AND status = 'pending' LIMIT 1"#,
                connection,
                logger
            )
            if !charging.isEmpty { return .busy }
            guard session.attempts < attemptLimit else { return .attemptsUsed(session) }
            try await Self.execute(
                "UPDATE checkout_session SET attempts = attempts + 1, paying_until = \(leaseUntil.stored) WHERE id = \(id)",
                connection,
                logger
            )
            var claimed = session
            claimed.attempts += 1
            return .claimed(claimed)
        }
    }

    /// Completes a session paid with `transaction`, in the transaction that settles it, with
    /// its event.
    static func completeCheckoutSession(
        _ id: String,
        paidWith transaction: TransactionRecord,
        events: WebhookEvents?,
        _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws {
        let now = events?.now() ?? Date()
        let rows = try await Self.rows(
            """
            UPDATE checkout_session SET status = 'complete', transaction_id = \(transaction.id), ended_at = \(now.stored),
              paying_until = NULL
            WHERE id = \(id) AND status = 'open'
            RETURNING \(unescaped: checkoutColumns)
            """,
            connection,
            logger
        )
        guard let row = rows.first else { return }
        let complete = try checkoutSession(row)
        if let events {
            try await record(try events.ended(complete, transaction: transaction), at: now, connection, logger)
        }
    }

    public func releaseCheckoutPayment(id: String) async throws -> CheckoutSessionRecord? {
        try await rows(
            "UPDATE checkout_session SET paying_until = NULL WHERE id = \(id) RETURNING \(unescaped: Self.checkoutColumns)"
        ).first.map(Self.checkoutSession)
    }

    public func expireCheckoutSessions(before now: Date, limit: Int, events: WebhookEvents?) async throws -> [CheckoutSessionRecord] {
        try await transaction { [logger] connection in
            // Sessions another server's sweep or payment holds are skipped, not waited for.
            let rows = try await Self.rows(
                """
                UPDATE checkout_session SET status = 'expired', ended_at = \(now.stored)
                WHERE id IN (
                  SELECT id FROM checkout_session
                  WHERE status = 'open' AND expires_at <= \(now.stored)
                    AND (paying_until IS NULL OR paying_until <= \(now.stored)) AND \(unescaped: Self.noChargePending)
                  ORDER BY expires_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                  AND status = 'open'
                RETURNING \(unescaped: Self.checkoutColumns)
                """,
                connection,
                logger
            )
            let expired = try rows.map(Self.checkoutSession)
            if let events {
                for session in expired {
                    try await Self.record(
                        try events.ended(session, transaction: nil),
                        at: now,
                        connection,
                        logger
                    )
                }
            }
            return expired
        }
    }
}
