public import Foundation
import Logging
import PostgresNIO
public import Tokenizer

extension PostgresVaultStore {
    // MARK: - Clients and payment methods

    public func insertClient(_ client: ClientRecord) async throws {
        try await execute(
            """
            INSERT INTO client (id, merchant_id, email, description, created_at)
            VALUES (\(client.id), \(client.merchantID), \(client.email), \(client.description), \(client.createdAt.stored))
            """
        )
    }

    public func client(id: String, merchantID: String) async throws -> ClientRecord? {
        let rows = try await rows(
            "SELECT id, merchant_id, email, description, created_at FROM client WHERE id = \(id) AND merchant_id = \(merchantID)"
        )
        return try rows.first.map { row in
            let (id, merchant, email, description, created) = try row.decode((String, String, String?, String?, Date).self)
            return ClientRecord(id: id, merchantID: merchant, email: email, description: description, createdAt: created.stored)
        }
    }

    static let paymentMethodColumns = """
        id, merchant_id, client_id, fingerprint, brand, bin, last4, exp_month, exp_year, key_id, sealed_card, created_at
        """

    static func paymentMethod(_ row: PostgresRow) throws -> PaymentMethodRecord {
        let (id, merchant, client, fingerprint, brand, bin, last4, month, year, keyID, card, created) =
            try row.decode((String, String, String, String, String, String, String, Int, Int, String, Data, Date).self)
        return PaymentMethodRecord(
            id: id,
            merchantID: merchant,
            clientID: client,
            fingerprint: fingerprint,
            brand: brand,
            bin: bin,
            last4: last4,
            expMonth: month,
            expYear: year,
            keyID: keyID,
            sealedCard: card,
            createdAt: created.stored
        )
    }

    public func savePaymentMethod(_ method: PaymentMethodRecord) async throws -> PaymentMethodRecord {
        // The client's card once: a second save of it (on any server, at the same moment too)
        // updates the first in the one statement, with the newest expiry and sealing (a card
        // is sealed for its client and fingerprint, which the two share).
        let rows = try await rows(
            """
            INSERT INTO payment_method (\(unescaped: Self.paymentMethodColumns))
            VALUES (\(method.id), \(method.merchantID), \(method.clientID), \(method.fingerprint), \(method.brand), \(method.bin),
              \(method.last4), \(method.expMonth), \(method.expYear), \(method.keyID), \(method.sealedCard),
              \(method.createdAt.stored))
            ON CONFLICT (client_id, fingerprint) DO UPDATE SET exp_month = EXCLUDED.exp_month, exp_year = EXCLUDED.exp_year,
              key_id = EXCLUDED.key_id, sealed_card = EXCLUDED.sealed_card
            RETURNING \(unescaped: Self.paymentMethodColumns)
            """
        )
        guard let row = rows.first else { throw PostgresStoreError(state: "", message: "the payment method's save returned no row") }
        return try Self.paymentMethod(row)
    }

    public func paymentMethod(id: String, merchantID: String) async throws -> PaymentMethodRecord? {
        try await rows(
            "SELECT \(unescaped: Self.paymentMethodColumns) FROM payment_method WHERE id = \(id) AND merchant_id = \(merchantID)"
        ).first.map(Self.paymentMethod)
    }

    public func paymentMethods(clientID: String, merchantID: String, after: PaymentMethodRecord?, limit: Int) async throws -> [PaymentMethodRecord] {
        // Oldest first by (created_at, id): a record made in the same millisecond as the last
        // one shown is neither skipped nor shown twice.
        let rows =
            if let after {
                try await rows(
                    """
                    SELECT \(unescaped: Self.paymentMethodColumns) FROM payment_method
                    WHERE client_id = \(clientID) AND merchant_id = \(merchantID)
                      AND (created_at, id) > (\(after.createdAt.stored), \(after.id))
                    ORDER BY created_at, id LIMIT \(limit)
                    """
                )
            } else {
                try await rows(
                    """
                    SELECT \(unescaped: Self.paymentMethodColumns) FROM payment_method
                    WHERE client_id = \(clientID) AND merchant_id = \(merchantID) ORDER BY created_at, id LIMIT \(limit)
                    """
                )
            }
        return try rows.map(Self.paymentMethod)
    }

    public func deletePaymentMethod(id: String, merchantID: String) async throws -> Bool {
        try await execute("DELETE FROM payment_method WHERE id = \(id) AND merchant_id = \(merchantID)") == 1
    }

    // MARK: - Transactions and refunds

    static let transactionColumns = """
        id, merchant_id, status, amount, currency, refunded_amount, description, client_id, payment_method_id, token_id, \
        decline_code, processor_reference, brand, bin, last4, exp_month, exp_year, created_at, idempotency_key, checkout_session_id, \
        pan_length
        """

    static func transaction(_ row: PostgresRow) throws -> TransactionRecord {
        let (
            id, merchant, status, amount, currency, refunded, description, client, method, token, decline, reference, brand, bin,
            last4, month, year, created, idempotencyKey, session, length
        ) = try row.decode(
            (
                String, String, String, Int, String, Int, String?, String?, String?, String?, String?, String?, String, String,
                String, Int, Int, Date, String?, String?, Int?
            ).self
        )
        return TransactionRecord(
            id: id,
            merchantID: merchant,
            status: status,
            amount: amount,
            currency: currency,
            refundedAmount: refunded,
            description: description,
            clientID: client,
            paymentMethodID: method,
            tokenID: token,
            declineCode: decline,
            processorReference: reference,
            brand: brand,
            bin: bin,
            last4: last4,
            expMonth: month,
            expYear: year,
            createdAt: created.stored,
            idempotencyKey: idempotencyKey,
            checkoutSessionID: session,
            panLength: length
        )
    }

    static func insert(_ transaction: TransactionRecord, _ connection: PostgresConnection, _ logger: Logger) async throws {
        let record = transaction
        try await execute(
            """
            INSERT INTO "transaction" (\(unescaped: transactionColumns))
            VALUES (\(record.id), \(record.merchantID), \(record.status), \(record.amount), \(record.currency), \(record.refundedAmount),
              \(record.description), \(record.clientID), \(record.paymentMethodID), \(record.tokenID), \(record.declineCode),
              \(record.processorReference), \(record.brand), \(record.bin), \(record.last4), \(record.expMonth), \(record.expYear),
              \(record.createdAt.stored), \(record.idempotencyKey), \(record.checkoutSessionID), \(record.panLength.map(Int32.init)))
            """,
            connection,
            logger
        )
    }

    public func insertTransaction(_ transaction: TransactionRecord, events: WebhookEvents?) async throws {
        try await self.transaction { [logger] connection in
            try await Self.insert(transaction, connection, logger)
            if let events {
                try await Self.record(
                    try events.settled(transaction),
                    at: events.now(),
                    connection,
                    logger
                )
            }
        }
    }

    public func settleTransaction(
        _ pending: TransactionRecord,
        as settlement: Settlement,
        events: WebhookEvents?,
        answer: IdempotentAnswer?
    ) async throws -> TransactionRecord? {
        let record = pending.settled(as: settlement)
        if record.status == "succeeded", record.checkoutSessionID != nil {
            return try await settleCompletingSession(pending, as: settlement, settled: record, events: events, answer: answer)
        }
        // One statement, so one round trip and one commit: the charge settled if it is still
        // pending (of two servers settling one, a request and a recovery, one changes it), and
        // its event with a delivery to each of the merchant's endpoints that takes its type,
        // and the answer to its Idempotency-Key, written only if it was (and the event only when
        // events are kept). The event is made before it is known to be needed (a few
        // microseconds of JSON), so that it goes in the same statement.
        let now = events?.now() ?? Date()
        let draft = try events.flatMap { try $0.settled(record) }
        // Made at the event's time: event ids sort by it, and the retention sweep finds old
        // events by id.
        let eventID = ObjectID.random(.event, at: now).rawValue
        // An id for each endpoint the merchant may have (at most webhookEndpointLimit).
        let deliveryIDs = (0..<Payments.webhookEndpointLimit).map { _ in ObjectID.random(.webhookDelivery).rawValue }
        let query = try Self.settle(
            pending.id,
            merchantID: pending.merchantID,
            as: settlement,
            event: draft.map { (id: eventID, type: $0.type, body: Data($0.body(id: eventID, at: now))) },
            deliveryIDs: deliveryIDs,
            answer: answer,
            at: now
        )
        let rows = try await rows(Prepared<SettleTransaction>(query))
        return try rows.first?.decode(Int.self) == 1 ? record : nil
    }

    /// The statement is prepared once per connection, and a parameter's type is fixed by its
    /// first use (a recovery's NULL length made it `integer`, and a later 8-byte Int was refused):
    /// the card's length is bound as a 4-byte integer, cast as the column is.
    ///
    /// The statement of ``settleTransaction(_:as:events:answer:)`` outside a checkout session:
    /// `event` is the settlement's event (nil when events are not kept). The answer's status is
    /// bound as a 4-byte integer, as its column is, for the same reason.
    static func settle(
        _ transactionID: String,
        merchantID: String,
        as settlement: Settlement,
        event: (id: String, type: String, body: Data)?,
        deliveryIDs: [String],
        answer: IdempotentAnswer?,
        at now: Date
    ) throws -> PostgresQuery {
        try """
        WITH settled AS (
          UPDATE "transaction" SET status = \(settlement.status), decline_code = \(settlement.declineCode),
            processor_reference = \(settlement.processorReference),
            payment_method_id = COALESCE(\(settlement.paymentMethodID), payment_method_id),
            pan_length = COALESCE(\(settlement.panLength.map(Int32.init))::integer, pan_length)
          WHERE id = \(transactionID) AND status = 'pending'
          RETURNING id),
        takers AS (
          SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS n FROM webhook_endpoint
          WHERE \(event != nil) AND merchant_id = \(merchantID) AND deleted_at IS NULL
            AND (events IS NULL OR \(event?.type ?? "") = ANY (string_to_array(events, ',')))
            AND EXISTS (SELECT 1 FROM settled)),
        event AS (
          INSERT INTO webhook_event (id, merchant_id, type, body, created_at)
          SELECT \(event?.id ?? ""), \(merchantID), \(event?.type ?? ""), \(event?.body ?? Data()),
            \(now.stored)
          WHERE \(event != nil) AND EXISTS (SELECT 1 FROM settled)
          RETURNING id),
        deliveries AS (
          INSERT INTO webhook_delivery (id, merchant_id, endpoint_id, event_id, event_type, status, attempts,
            next_attempt_at, created_at)
          SELECT (\(deliveryIDs)::text[])[takers.n::integer], \(merchantID), takers.id, event.id, \(event?.type ?? ""),
            'pending', 0, \(now.stored), \(now.stored)
          FROM takers, event
          RETURNING id),
        answered AS (
          UPDATE idempotency_key SET status = \(answer.map { Int32($0.status) }), body = \(answer?.body), key_id = \(answer?.keyID)
          WHERE merchant_id = \(answer?.merchantID) AND key = \(answer?.key) AND status IS NULL AND EXISTS (SELECT 1 FROM settled))
        SELECT (SELECT count(*) FROM settled), (SELECT count(*) FROM deliveries)
        """
    }

    enum SettleTransaction: PreparedText {
        static let sql = try! settle(
            "",
            merchantID: "",
            as: Settlement(status: ""),
            event: nil,
            deliveryIDs: [],
            answer: nil,
            at: .distantPast
        ).sql
    }

    /// A charge on a checkout session's page that succeeded: settled, its event written, and
    /// the session completed with its own event, in one transaction.
    private func settleCompletingSession(
        _ pending: TransactionRecord,
        as settlement: Settlement,
        settled: TransactionRecord,
        events: WebhookEvents?,
        answer: IdempotentAnswer?
    ) async throws -> TransactionRecord? {
        try await transaction { [logger] connection in
            let changed = try await Self.execute(
                """
                UPDATE "transaction" SET status = \(settlement.status), decline_code = \(settlement.declineCode),
                  processor_reference = \(settlement.processorReference),
                  payment_method_id = COALESCE(\(settlement.paymentMethodID), payment_method_id),
                  pan_length = COALESCE(\(settlement.panLength.map(Int32.init))::integer, pan_length)
                WHERE id = \(pending.id) AND status = 'pending'
                """,
                connection,
                logger
            )
            guard changed == 1, let sessionID = settled.checkoutSessionID else { return nil }
            if let events {
                try await Self.record(try events.settled(settled), at: events.now(), connection, logger)
            }
            try await Self.completeCheckoutSession(sessionID, paidWith: settled, events: events, connection, logger)
            if let answer {
                let finish = try Self.finish(
                    merchantID: answer.merchantID,
                    key: answer.key,
                    status: answer.status,
                    body: answer.body,
                    keyID: answer.keyID
                )
                try await Self.execute(finish, connection, logger)
            }
            return settled
        }
    }

    public func pendingTransactions(createdBefore date: Date, limit: Int) async throws -> [TransactionRecord] {
        try await rows(
            """
            SELECT \(unescaped: Self.transactionColumns) FROM "transaction"
            WHERE status = 'pending' AND created_at < \(date.stored) ORDER BY created_at LIMIT \(limit)
            """
        ).map(Self.transaction)
    }

    public func transaction(id: String, merchantID: String) async throws -> TransactionRecord? {
        try await rows(
            #"SELECT \#(unescaped: Self.transactionColumns) FROM "transaction" WHERE id = \#(id) AND merchant_id = \#(merchantID)"#
        ).first.map(Self.transaction)
    }

    public func transactions(merchantID: String, clientID: String?, after: TransactionRecord?, limit: Int) async throws -> [TransactionRecord] {
        // Newest first by (created_at, id), through transaction_by_merchant_time or
        // transaction_by_client.
        var query: PostgresQuery = #"SELECT \#(unescaped: Self.transactionColumns) FROM "transaction" WHERE merchant_id = \#(merchantID)"#
        if let clientID {
            query = query.appendingCondition("client_id = $N", clientID)
        }
        return try await rows(query.newestFirst(after: after.map { ($0.createdAt, $0.id) }, limit: limit)).map(Self.transaction)
    }

    public func insertRefund(_ refund: RefundRecord, events: WebhookEvents?) async throws -> TransactionRecord? {
        try await transaction { [logger] connection in
            let updated = try await Self.rows(
                """
                UPDATE "transaction" SET refunded_amount = refunded_amount + \(refund.amount)
                WHERE id = \(refund.transactionID) AND merchant_id = \(refund.merchantID) AND status = 'succeeded'
                  AND refunded_amount + \(refund.amount) <= amount
                RETURNING \(unescaped: Self.transactionColumns)
                """,
                connection,
                logger
            )
            guard let row = updated.first else { return nil }
            try await Self.execute(
                """
                INSERT INTO refund (id, merchant_id, transaction_id, amount, currency, created_at)
                VALUES (\(refund.id), \(refund.merchantID), \(refund.transactionID), \(refund.amount), \(refund.currency),
                  \(refund.createdAt.stored))
                """,
                connection,
                logger
            )
            if let events {
                try await Self.record(try events.refunded(refund), at: events.now(), connection, logger)
            }
            return try Self.transaction(row)
        }
    }

    public func deleteRefund(_ refund: RefundRecord) async throws {
        try await transaction { [logger] connection in
            guard try await Self.execute("DELETE FROM refund WHERE id = \(refund.id)", connection, logger) == 1 else { return }
            try await Self.execute(
                #"UPDATE "transaction" SET refunded_amount = refunded_amount - \#(refund.amount) WHERE id = \#(refund.transactionID)"#,
                connection,
                logger
            )
        }
    }

    // MARK: - Idempotency keys

    public func claimIdempotency(
        merchantID: String,
        key: String,
        requestHash: String,
        now: Date,
        window: TimeInterval,
        leaseUntil: Date
    ) async throws -> IdempotencyClaim {
        // A key never seen (the usual case) is claimed by its insert alone, one prepared
        // statement; a key with a row, expired or not, goes the whole way below.
        let fresh = Self.claim(merchantID: merchantID, key: key, requestHash: requestHash, now: now, leaseUntil: leaseUntil)
        if try await rows(Prepared<ClaimIdempotencyKey>(fresh)).count == 1 { return .claimed }
        let cutoff = now.addingTimeInterval(-window)
        return try await transaction { [logger] connection in
            try await Self.execute(
                "DELETE FROM idempotency_key WHERE merchant_id = \(merchantID) AND key = \(key) AND created_at <= \(cutoff.stored)",
                connection,
                logger
            )
            // The key's row, made by this request or by another (on any server): the insert of
            // a second request waits for the first's transaction and then makes nothing.
            let claimed = try await Self.rows(fresh, connection, logger)
            if claimed.count == 1 { return .claimed }
            let rows = try await Self.rows(
                """
                SELECT request_hash, status, body, key_id, lease_until FROM idempotency_key
                WHERE merchant_id = \(merchantID) AND key = \(key) FOR UPDATE
                """,
                connection,
                logger
            )
            // Gone between the two statements (a purge): the caller tries again.
            guard let row = rows.first else { return .inProgress }
            let (hash, status, body, keyID, lease) = try row.decode((String, Int?, Data?, String?, Date?).self)
            guard hash == requestHash else { return .mismatch }
            if let status { return .replay(status: status, body: body, keyID: keyID) }
            if let lease, lease > now { return .inProgress }
            try await Self.execute(
                "UPDATE idempotency_key SET lease_until = \(leaseUntil.stored) WHERE merchant_id = \(merchantID) AND key = \(key)",
                connection,
                logger
            )
            let charge = try await Self.rows(
                #"SELECT id FROM "transaction" WHERE merchant_id = \#(merchantID) AND idempotency_key = \#(key)"#,
                connection,
                logger
            )
            return .recovered(transactionID: try charge.first?.decode(String.self))
        }
    }

    /// A key's claim: its row, unless the key has one (made by this request or another, on
    /// any server). The insert of a second request waits for the first's transaction, then
    /// makes nothing; a row is returned when this one made it.
    static func claim(merchantID: String, key: String, requestHash: String, now: Date, leaseUntil: Date) -> PostgresQuery {
        """
        INSERT INTO idempotency_key (merchant_id, key, request_hash, created_at, lease_until)
        VALUES (\(merchantID), \(key), \(requestHash), \(now.stored), \(leaseUntil.stored))
        ON CONFLICT (merchant_id, key) DO NOTHING RETURNING 1
        """
    }

    enum ClaimIdempotencyKey: PreparedText {
        static let sql = claim(merchantID: "", key: "", requestHash: "", now: .distantPast, leaseUntil: .distantPast).sql
    }

    /// Keeps the key's answer; the first answer kept stays (a request that outran its lease
    /// and finished after another took the key over changes nothing).
    public func finishIdempotency(merchantID: String, key: String, status: Int, body: Data, keyID: String) async throws {
        _ = try await rows(Prepared<FinishIdempotency>(try Self.finish(merchantID: merchantID, key: key, status: status, body: body, keyID: keyID)))
    }

    static func finish(merchantID: String, key: String, status: Int, body: Data, keyID: String) throws -> PostgresQuery {
        try """
        UPDATE idempotency_key SET status = \(status), body = \(body), key_id = \(keyID)
        WHERE merchant_id = \(merchantID) AND key = \(key) AND status IS NULL
        """
    }

    enum FinishIdempotency: PreparedText {
        static let sql = try! finish(merchantID: "", key: "", status: 0, body: Data(), keyID: "").sql
    }

    public func releaseIdempotency(merchantID: String, key: String, at now: Date) async throws {
        try await transaction { [logger] connection in
            // A request that recorded a charge before it failed keeps its key, lapsed: the
            // retry is answered with that charge, never runs it again.
            let charged = try await Self.rows(
                #"SELECT 1 FROM "transaction" WHERE merchant_id = \#(merchantID) AND idempotency_key = \#(key) LIMIT 1"#,
                connection,
                logger
            )
            if charged.isEmpty {
                try await Self.execute(
                    "DELETE FROM idempotency_key WHERE merchant_id = \(merchantID) AND key = \(key) AND status IS NULL",
                    connection,
                    logger
                )
            } else {
                try await Self.execute(
                    """
                    UPDATE idempotency_key SET lease_until = \(now.stored)
                    WHERE merchant_id = \(merchantID) AND key = \(key) AND status IS NULL
                    """,
                    connection,
                    logger
                )
            }
        }
    }

    public func purgeIdempotency(before date: Date) async throws -> Int {
        try await execute("DELETE FROM idempotency_key WHERE created_at <= \(date.stored)")
    }
}

extension PostgresQuery {
    /// This query, a page of a list newest first by (created_at, id): those after `after`
    /// (the last record of the previous page), at most `limit`. Records made in the same
    /// millisecond are neither skipped nor repeated.
    func newestFirst(after: (createdAt: Date, id: String)?, limit: Int) -> PostgresQuery {
        var query = self
        if let after { query = query.appendingCondition("(created_at, id) < ($N, $N)", after.createdAt.stored, after.id) }
        return query.appendingClause("ORDER BY created_at DESC, id DESC LIMIT $N", limit)
    }

    /// This query with ` AND condition`, each `$N` in it numbered after the binds so far.
    func appendingCondition(_ condition: String, _ values: any PostgresEncodable & Sendable...) -> PostgresQuery {
        appending(" AND " + condition, values)
    }

    /// This query with ` clause`, each `$N` in it numbered after the binds so far.
    func appendingClause(_ clause: String, _ values: any PostgresEncodable & Sendable...) -> PostgresQuery {
        appending(" " + clause, values)
    }

    private func appending(_ text: String, _ values: [any PostgresEncodable & Sendable]) -> PostgresQuery {
        var binds = self.binds
        var sql = self.sql
        var next = binds.count
        var rest = Substring(text)
        while let placeholder = rest.range(of: "$N") {
            next += 1
            sql += rest[..<placeholder.lowerBound] + "$\(next)"
            rest = rest[placeholder.upperBound...]
        }
        sql += rest
        for value in values { try? binds.append(value, context: .default) }
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }
}
