public import Foundation
public import GRDB
public import Tokenizer

extension SQLiteVaultStore {
    // MARK: - Clients and payment methods

    public func insertClient(_ client: ClientRecord) async throws {
        try await database.write { db in try client.insert(db) }
    }

    public func client(id: String, merchantID: String) async throws -> ClientRecord? {
        try await database.read { db in
            try ClientRecord.filter(key: id).filter(Column("merchant_id") == merchantID).fetchOne(db)
        }
    }

    public func savePaymentMethod(_ method: PaymentMethodRecord) async throws -> PaymentMethodRecord {
        try await database.write { db in
            if var existing =
                try PaymentMethodRecord
                .filter(Column("client_id") == method.clientID && Column("fingerprint") == method.fingerprint)
                .fetchOne(db)
            {
                existing.expMonth = method.expMonth
                existing.expYear = method.expYear
                existing.keyID = method.keyID
                // Sealed for the existing record's id (the id is authenticated with it).
                existing.sealedCard = method.sealedCard
                try existing.update(db)
                return existing
            }
            try method.insert(db)
            return method
        }
    }

    public func paymentMethod(id: String, merchantID: String) async throws -> PaymentMethodRecord? {
        try await database.read { db in
            try PaymentMethodRecord.filter(key: id).filter(Column("merchant_id") == merchantID).fetchOne(db)
        }
    }

    public func paymentMethods(clientID: String, merchantID: String, after: PaymentMethodRecord?, limit: Int) async throws -> [PaymentMethodRecord] {
        try await database.read { db in
            var request = PaymentMethodRecord.filter(Column("client_id") == clientID && Column("merchant_id") == merchantID)
            if let after {
                // Pages by (created_at, id): a record made in the same millisecond as the last
                // one shown is neither skipped nor shown twice.
                let created = Column("created_at")
                request = request.filter(created > after.createdAt || (created == after.createdAt && Column("id") > after.id))
            }
            return try request.order(Column("created_at"), Column("id")).limit(limit).fetchAll(db)
        }
    }

    public func deletePaymentMethod(id: String, merchantID: String) async throws -> Bool {
        try await database.write { db in
            try PaymentMethodRecord.filter(key: id).filter(Column("merchant_id") == merchantID).deleteAll(db) == 1
        }
    }

    // MARK: - Transactions and refunds

    public func insertTransaction(_ transaction: TransactionRecord, events: WebhookEvents?) async throws {
        try await groupCommit.write { db in
            try Self.insert(transaction, db)
            if let events {
                try Self.record(events.settled(transaction), at: events.now(), db)
            }
        }
    }

    /// One prepared INSERT, kept by the connection: a transaction is inserted on every charge.
    static func insert(_ transaction: TransactionRecord, _ db: Database) throws {
        let statement = try DirectStatement(
            db,
            sql: """
                INSERT INTO "transaction" (id, merchant_id, status, amount, currency, refunded_amount, description, client_id,
                  payment_method_id, token_id, decline_code, processor_reference, brand, bin, last4, exp_month, exp_year, created_at,
                  idempotency_key, checkout_session_id, pan_length)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        )
        try statement.execute(
            binding: transaction.id,
            transaction.merchantID,
            transaction.status,
            transaction.amount,
            transaction.currency,
            transaction.refundedAmount,
            transaction.description,
            transaction.clientID,
            transaction.paymentMethodID,
            transaction.tokenID,
            transaction.declineCode,
            transaction.processorReference,
            transaction.brand,
            transaction.bin,
            transaction.last4,
            transaction.expMonth,
            transaction.expYear,
            StoreDate.text(transaction.createdAt),
            transaction.idempotencyKey,
            transaction.checkoutSessionID,
            transaction.panLength
        )
    }

    public func settleTransaction(
        _ pending: TransactionRecord,
        as settlement: Settlement,
        events: WebhookEvents?,
        answer: IdempotentAnswer?
    ) async throws -> TransactionRecord? {
        try await groupCommit.write { db in
            // The row is not read back: while it is pending nothing but this changes it, so
            // the record is the pending one with the settlement's columns. (Read back, by
            // RETURNING or a SELECT, it cost the writer a sixth of a charge's time: SQLite
            // buffers RETURNING rows in a temporary table, and GRDB maps each row's column
            // names anew.)
            let statement = try DirectStatement(
                db,
                sql: """
                    UPDATE "transaction" SET status = ?, decline_code = ?, processor_reference = ?,
                      payment_method_id = COALESCE(?, payment_method_id), pan_length = COALESCE(?, pan_length)
                    WHERE id = ? AND status = 'pending'
                    """
            )
            try statement.execute(
                binding: settlement.status,
                settlement.declineCode,
                settlement.processorReference,
                settlement.paymentMethodID,
                settlement.panLength,
                pending.id
            )
            guard db.changesCount == 1 else { return nil }
            let settled = pending.settled(as: settlement)
            if let answer {
                try Self.finishIdempotency(answer.merchantID, answer.key, status: answer.status, body: answer.body, keyID: answer.keyID, db)
            }
            if let events {
                try Self.record(events.settled(settled), at: events.now(), db)
            }
            if settled.status == "succeeded", let sessionID = settled.checkoutSessionID {
                try Self.completeCheckoutSession(sessionID, paidWith: settled, events: events, db)
            }
            return settled
        }
    }

    public func pendingTransactions(createdBefore date: Date, limit: Int) async throws -> [TransactionRecord] {
        try await database.read { db in
            try TransactionRecord
                .filter(Column("status") == "pending" && Column("created_at") < StoreDate.text(date))
                .order(Column("created_at"))
                .limit(limit)
                .fetchAll(db)
        }
    }

    public func pendingTransactionCount() async throws -> Int {
        try await database.read { db in try TransactionRecord.filter(Column("status") == "pending").fetchCount(db) }
    }

    public func transaction(id: String, merchantID: String) async throws -> TransactionRecord? {
        try await database.read { db in
            try TransactionRecord.filter(key: id).filter(Column("merchant_id") == merchantID).fetchOne(db)
        }
    }

    public func transactions(merchantID: String, clientID: String?, after: TransactionRecord?, limit: Int) async throws -> [TransactionRecord] {
        try await database.read { db in
            try Self.transactions(merchantID: merchantID, clientID: clientID, after: after.map { ($0.createdAt, $0.id) }, limit: limit).fetchAll(db)
        }
    }

    /// A page of a merchant's transactions, or of one client's, newest first.
    static func transactions(
        merchantID: String,
        clientID: String?,
        after: (createdAt: Date, id: String)?,
        limit: Int
    ) -> QueryInterfaceRequest<TransactionRecord> {
        var request = TransactionRecord.filter(Column("merchant_id") == merchantID)
        if let clientID { request = request.filter(Column("client_id") == clientID) }
        return newestFirst(request, after: after, limit: limit)
    }

    public func insertRefund(_ refund: RefundRecord, events: WebhookEvents?, answer: IdempotentAnswer?) async throws -> TransactionRecord? {
        try await database.write { db in
            try db.execute(
                sql: """
                    UPDATE "transaction" SET refunded_amount = refunded_amount + ?
                    WHERE id = ? AND merchant_id = ? AND status = 'succeeded' AND refunded_amount + ? <= amount
                    """,
                arguments: [refund.amount, refund.transactionID, refund.merchantID, refund.amount]
            )
            guard db.changesCount == 1 else { return nil }
            try refund.insert(db)
            if let events { try Self.record(events.refunded(refund), at: events.now(), db) }
            if let answer {
                try Self.finishIdempotency(answer.merchantID, answer.key, status: answer.status, body: answer.body, keyID: answer.keyID, db)
            }
            return try TransactionRecord.fetchOne(db, key: refund.transactionID)
        }
    }

    public func deleteRefund(_ refund: RefundRecord, answered: IdempotentAnswer?) async throws {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM refund WHERE id = ?", arguments: [refund.id])
            guard db.changesCount == 1 else { return }
            if let answered {
                // The key goes with the refund it answered: its retry runs again.
                try db.execute(
                    sql: "DELETE FROM idempotency_key WHERE merchant_id = ? AND key = ?",
                    arguments: [answered.merchantID, answered.key]
                )
            }
            try db.execute(
                sql: #"UPDATE "transaction" SET refunded_amount = refunded_amount - ? WHERE id = ?"#,
                arguments: [refund.amount, refund.transactionID]
            )
        }
    }
}

extension SQLiteVaultStore {
    /// A page of a list newest first, by (created_at, id): those after `after` (the last
    /// record of the previous page), at most `limit`. Records made in the same millisecond
    /// are neither skipped nor repeated.
    static func newestFirst<Record>(
        _ request: QueryInterfaceRequest<Record>,
        after: (createdAt: Date, id: String)?,
        limit: Int
    ) -> QueryInterfaceRequest<Record> {
        var request = request
        if let after {
            let created = Column("created_at")
            request = request.filter(created < after.createdAt || (created == after.createdAt && Column("id") < after.id))
        }
        return request.order(Column("created_at").desc, Column("id").desc).limit(limit)
    }
}

extension ClientRecord: FetchableRecord, PersistableRecord {
    public static let databaseTableName = "client"
}

extension PaymentMethodRecord: FetchableRecord, PersistableRecord {
    public static let databaseTableName = "payment_method"
}

/// Read back on every charge: columns mapped by hand, as ``TokenRecord``'s. Written only by
/// the prepared INSERT of ``SQLiteVaultStore/insertTransaction(_:events:)``.
extension TransactionRecord: FetchableRecord, TableRecord {
    public static let databaseTableName = "transaction"

    /// The table's columns in the order ``init(row:)`` reads them by position (`SELECT *`
    /// gives them so): by name, GRDB compares every column's name for every field of every
    /// row read.
    static let columns = [
        "id", "merchant_id", "status", "amount", "currency", "refunded_amount", "description", "client_id",
        "payment_method_id", "token_id", "decline_code", "processor_reference", "brand", "bin", "last4", "exp_month",
        "exp_year", "created_at", "idempotency_key", "checkout_session_id", "pan_length",
    ]

    public init(row: Row) {
        self.init(
            id: row[0],
            merchantID: row[1],
            status: row[2],
            amount: row[3],
            currency: row[4],
            refundedAmount: row[5],
            description: row[6],
            clientID: row[7],
            paymentMethodID: row[8],
            tokenID: row[9],
            declineCode: row[10],
            processorReference: row[11],
            brand: row[12],
            bin: row[13],
            last4: row[14],
            expMonth: row[15],
            expYear: row[16],
            createdAt: row[17],
            idempotencyKey: row[18],
            checkoutSessionID: row[19],
            panLength: row[20]
        )
    }
}

extension RefundRecord: FetchableRecord, PersistableRecord {
    public static let databaseTableName = "refund"
}
