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
        // The event is made before it is known to be needed (a few microseconds of JSON), so
        // that it goes in the same statement; its id made at its time: event ids sort by it,
        // and the retention sweep finds old events by id.
        let now = events?.now() ?? Date()
        let draft = try events.flatMap { try $0.settled(record) }
        let eventID = ObjectID.random(.event, at: now).rawValue
        let item = Settling(
            transactionID: pending.id,
            merchantID: pending.merchantID,
            settlement: settlement,
            event: draft.map { (id: eventID, type: $0.type, body: Data($0.body(id: eventID, at: now))) },
            answer: answer,
            at: now.stored
        )
        let settled = try await settlements.submit(item) { [self] items in try await settle(items) }.get()
        return settled ? record : nil
    }

    /// Settles a batch of charges (``Batches``) in one statement, so one round trip and one
    /// commit for all: each charge settled if it is still pending (of two servers settling
    /// one, a request and a recovery, one changes it), with its event and a delivery to each
    /// of its merchant's endpoints that takes the event's type, and the answer to its
    /// Idempotency-Key, written only if it was.
    func settle(_ items: [Settling]) async throws -> [Result<Bool, any Error>] {
        try await Self.inBatchOrAlone(items) { [self] in try await settleTogether($0) }
    }

    private func settleTogether(_ items: [Settling]) async throws -> [Bool] {
        let rows = try await rows(Prepared<SettleTransactions>(Self.settleStatement(items)))
        var settled = Set<Int>()
        for row in rows { settled.insert(Int(try row.decode(Int64.self))) }
        return items.indices.map { settled.contains($0 + 1) }
    }

    /// A charge's settlement as ``settle(_:)`` writes it: `event` is nil when events are not
    /// kept.
    struct Settling: Sendable {
        let transactionID: String
        let merchantID: String
        let settlement: Settlement
        let event: (id: String, type: String, body: Data)?
        let answer: IdempotentAnswer?
        let at: Date
    }

    /// The statement of ``settle(_:)``: the charges as arrays of their values, one row each
    /// (`n` its place, from 1), and the places of the charges it settled.
    ///
    /// postgres-nio binds no NULL inside an array: a value that may be missing is bound as ''
    /// or 0 and read back as NULL (no code, reference, id or length is ever empty or 0). The
    /// statement is prepared once per connection, and its text is the same for every batch.
    /// A delivery's id is taken from the bound array of delivery ids, WebhookEvents.endpointLimit of
    /// them for each charge (a merchant has at most that many endpoints), made before it is
    /// known how many are needed.
    static func settleStatement(_ items: [Settling]) -> PostgresQuery {
        let limit = WebhookEvents.endpointLimit
        let deliveryIDs = items.flatMap { _ in (0..<limit).map { _ in ObjectID.random(.webhookDelivery).rawValue } }
        return """
            WITH item AS (
              SELECT * FROM unnest(\(items.map(\.transactionID))::text[], \(items.map(\.merchantID))::text[],
                \(items.map(\.settlement.status))::text[], \(items.map { $0.settlement.declineCode ?? "" })::text[],
                \(items.map { $0.settlement.processorReference ?? "" })::text[],
                \(items.map { $0.settlement.paymentMethodID ?? "" })::text[],
                \(items.map { Int32($0.settlement.panLength ?? 0) })::integer[],
                \(items.map { $0.event != nil })::boolean[], \(items.map { $0.event?.id ?? "" })::text[],
                \(items.map { $0.event?.type ?? "" })::text[], \(items.map { ByteBuffer(bytes: $0.event?.body ?? Data()) })::bytea[],
                \(items.map(\.at))::timestamptz[],
                \(items.map { $0.answer != nil })::boolean[], \(items.map { $0.answer?.merchantID ?? "" })::text[],
                \(items.map { $0.answer?.key ?? "" })::text[], \(items.map { Int32($0.answer?.status ?? 0) })::integer[],
                \(items.map { ByteBuffer(bytes: $0.answer?.body ?? Data()) })::bytea[], \(items.map { $0.answer?.keyID ?? "" })::text[])
                WITH ORDINALITY AS i(id, merchant_id, status, decline_code, processor_reference, payment_method_id, pan_length,
                  has_event, event_id, event_type, event_body, at, has_answer, answer_merchant_id, answer_key, answer_status,
                  answer_body, answer_key_id, n)),
            settled AS (
              UPDATE "transaction" t SET status = item.status, decline_code = NULLIF(item.decline_code, ''),
                processor_reference = NULLIF(item.processor_reference, ''),
                payment_method_id = COALESCE(NULLIF(item.payment_method_id, ''), t.payment_method_id),
                pan_length = COALESCE(NULLIF(item.pan_length, 0), t.pan_length)
              FROM item
              WHERE t.id = item.id AND t.status = 'pending'
              RETURNING item.n),
            done AS (
              SELECT item.* FROM item JOIN settled ON settled.n = item.n),
            event AS (
              INSERT INTO webhook_event (id, merchant_id, type, body, created_at)
              SELECT event_id, merchant_id, event_type, event_body, at FROM done WHERE has_event
              RETURNING id),
            takers AS (
              SELECT done.n, w.id, ROW_NUMBER() OVER (PARTITION BY done.n ORDER BY w.id) AS k
              FROM done JOIN webhook_endpoint w ON w.merchant_id = done.merchant_id
              WHERE done.has_event AND w.deleted_at IS NULL
                AND (w.events IS NULL OR done.event_type = ANY (string_to_array(w.events, ',')))),
            deliveries AS (
              INSERT INTO webhook_delivery (id, merchant_id, endpoint_id, event_id, event_type, status, attempts,
                next_attempt_at, created_at)
              SELECT (\(deliveryIDs)::text[])[(takers.n::integer - 1) * \(Int32(limit)) + takers.k::integer], done.merchant_id,
                takers.id, event.id, done.event_type, 'pending', 0, done.at, done.at
              FROM takers JOIN done ON done.n = takers.n JOIN event ON event.id = done.event_id),
            answered AS (
              UPDATE idempotency_key k SET status = done.answer_status, body = done.answer_body, key_id = done.answer_key_id
              FROM done
              WHERE done.has_answer AND k.merchant_id = done.answer_merchant_id AND k.key = done.answer_key AND k.status IS NULL)
            SELECT n FROM settled
            """
    }

    enum SettleTransactions: PreparedText {
        static let sql = settleStatement([]).sql
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
            if let answer { try await Self.keep(answer, connection, logger) }
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

    public func pendingTransactionCount() async throws -> Int {
        let rows = try await rows(#"SELECT count(*) FROM "transaction" WHERE status = 'pending'"#)
        return Int(try rows.first?.decode(Int64.self) ?? 0)
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

    public func insertRefund(_ refund: RefundRecord, events: WebhookEvents?, answer: IdempotentAnswer?) async throws -> TransactionRecord? {
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
            if let answer { try await Self.keep(answer, connection, logger) }
            return try Self.transaction(row)
        }
    }

    public func deleteRefund(_ refund: RefundRecord, answered: IdempotentAnswer?) async throws {
        try await transaction { [logger] connection in
            guard try await Self.execute("DELETE FROM refund WHERE id = \(refund.id)", connection, logger) == 1 else { return }
            if let answered {
                // The key goes with the refund it answered: its retry runs again.
                try await Self.execute(
                    "DELETE FROM idempotency_key WHERE merchant_id = \(answered.merchantID) AND key = \(answered.key)",
                    connection,
                    logger
                )
            }
            try await Self.execute(
                #"UPDATE "transaction" SET refunded_amount = refunded_amount - \#(refund.amount) WHERE id = \#(refund.transactionID)"#,
                connection,
                logger
            )
        }
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
