import CardCapture
import Foundation
public import Tokenizer

extension Payments {
    /// A new client for the merchant.
    public func createClient(email: String?, description: String?, merchantID: String) async throws(VaultError) -> ClientRecord {
        if let email, !TextRules.isEmailAddress(email) {
            throw VaultError(.invalidRequest, "email must be an address such as pat@example.com", param: "email")
        }
        try TextRules.checkDescription(description)
        let client = ClientRecord(
            id: ObjectID.random(.client).rawValue,
            merchantID: merchantID,
            email: email,
            description: description,
            createdAt: vault.configuration.now()
        )
        try await storing("create the client") { try await store.insertClient(client) }
        return client
    }

    public func client(_ id: String, merchantID: String) async throws(VaultError) -> ClientRecord {
        try await requireClient(id, merchantID: merchantID)
    }

    @discardableResult
    func requireClient(_ id: String, merchantID: String) async throws(VaultError) -> ClientRecord {
        guard let client = try await storing("read the client", { try await store.client(id: id, merchantID: merchantID) }) else {
            throw VaultError(.clientNotFound, "no client \(id.prefix(40)) for this merchant", param: "client")
        }
        return client
    }

    /// A client's saved cards, oldest first, a page at a time: at most `limit`, after the
    /// payment method `startingAfter` when it is given.
    public func paymentMethods(
        client id: String,
        merchantID: String,
        startingAfter: String? = nil,
        limit: Int = 100
    ) async throws(VaultError) -> Page<PaymentMethod> {
        try await requireClient(id, merchantID: merchantID)
        let page = try await page(
            after: startingAfter,
            limit: limit,
            find: { try await store.paymentMethod(id: $0, merchantID: merchantID).flatMap { $0.clientID == id ? $0 : nil } },
            notFound: VaultError(
                .paymentMethodNotFound,
                "no payment method \(startingAfter?.prefix(40) ?? "") of this client to start after",
                param: "starting_after"
            ),
            fetch: { try await store.paymentMethods(clientID: id, merchantID: merchantID, after: $0, limit: $1) }
        )
        return Page(items: page.items.map(PaymentMethod.init), hasMore: page.hasMore)
    }

    /// Deletes a saved card and its sealed data.
    public func deletePaymentMethod(_ id: String, merchantID: String) async throws(VaultError) {
        guard try await storing("delete the payment method", { try await store.deletePaymentMethod(id: id, merchantID: merchantID) }) else {
            throw VaultError(.paymentMethodNotFound, "no payment method \(id.prefix(40)) for this merchant", param: "payment_method")
        }
    }

    /// Saves a spent token's card for a client, without its CVC; the same card for the same
    /// client stays one payment method, with the newest expiry.
    func save(_ card: SpentCard, client: String, merchantID: String) async throws(VaultError) -> PaymentMethod {
        let sealed = try vault.sealSaved(card, client: client)
        let record = PaymentMethodRecord(
            id: ObjectID.random(.paymentMethod).rawValue,
            merchantID: merchantID,
            clientID: client,
            fingerprint: card.fingerprint,
            brand: card.pan.brand.id,
            bin: card.pan.bin,
            last4: card.pan.last4,
            expMonth: card.expiry.month,
            expYear: card.expiry.year,
            keyID: vault.keys.keyID,
            sealedCard: sealed,
            createdAt: vault.configuration.now()
        )
        return PaymentMethod(try await storing("save the payment method") { try await store.savePaymentMethod(record) })
    }

    // MARK: - Reading transactions, refunds

    public func transaction(_ id: String, merchantID: String) async throws(VaultError) -> TransactionRecord {
        guard let transaction = try await storing("read the transaction", { try await store.transaction(id: id, merchantID: merchantID) }) else {
            throw VaultError(.transactionNotFound, "no transaction \(id.prefix(40)) for this merchant", param: "id")
        }
        return transaction
    }

    /// The merchant's transactions, newest first, a page at a time: at most `limit`, after the
    /// transaction `startingAfter` when it is given; one client's when `client` is given.
    public func transactions(
        merchantID: String,
        client: String?,
        startingAfter: String? = nil,
        limit: Int = 100
    ) async throws(VaultError) -> Page<TransactionRecord> {
        if let client { try await requireClient(client, merchantID: merchantID) }
        return try await page(
            after: startingAfter,
            limit: limit,
            find: { try await store.transaction(id: $0, merchantID: merchantID) },
            notFound: VaultError(
                .transactionNotFound,
                "no transaction \(startingAfter?.prefix(40) ?? "") for this merchant to start after",
                param: "starting_after"
            ),
            fetch: { try await store.transactions(merchantID: merchantID, clientID: client, after: $0, limit: $1) }
        )
    }

    /// A page of `limit` records after the one whose id is `startingAfter` (`find` looks it up;
    /// `notFound` when it is not there), read one longer to learn whether more follow.
    func page<Record: Sendable>(
        after startingAfter: String?,
        limit: Int,
        find: (String) async throws -> Record?,
        notFound: VaultError,
        fetch: (Record?, Int) async throws -> [Record]
    ) async throws(VaultError) -> Page<Record> {
        var after: Record?
        if let startingAfter {
            guard let found = try await storing("read the object to start after", { try await find(startingAfter) }) else { throw notFound }
            after = found
        }
        let records = try await storing("read the list") { try await fetch(after, limit + 1) }
        return Page(items: Array(records.prefix(limit)), hasMore: records.count > limit)
    }

    /// Gives back all that is left of a transaction, or `amount` of it; never more than was
    /// captured, however many refunds run at once.
    /// - Parameter answer: the answer to keep for the request's Idempotency-Key (claimed
    ///   before), made from the refund: kept in the write that records the refund, so that a
    ///   refund made is never left without its key's answer (and run again under the key).
    public func refund(
        _ transactionID: String,
        amount: Int?,
        merchantID: String,
        answer: (@Sendable (RefundRecord) throws -> IdempotentAnswer)? = nil
    ) async throws(VaultError) -> (RefundRecord, TransactionRecord) {
        let transaction = try await transaction(transactionID, merchantID: merchantID)
        guard transaction.status == "succeeded" else {
            throw VaultError(
                .notRefundable,
                "transaction \(transactionID) is \(transaction.status): no money was taken, so none can be given back",
                param: "id"
            )
        }
        let left = transaction.amount - transaction.refundedAmount
        // Nothing left to give back is the transaction's state (409, as openapi.json says), whatever
        // amount was asked; an amount over what is left is that amount's fault (422).
        guard left > 0 else {
            throw VaultError(.notRefundable, "transaction \(transactionID) is refunded in full already", param: "id")
        }
        let amount = amount ?? left
        guard amount > 0 else { throw VaultError(.invalidAmount, "amount must be a positive number of minor units", param: "amount") }
        let currency = try Currency(transaction.currency)
        let refund = RefundRecord(
            id: ObjectID.random(.refund).rawValue,
            merchantID: merchantID,
            transactionID: transactionID,
            amount: amount,
            currency: transaction.currency,
            createdAt: vault.configuration.now()
        )
        let kept: IdempotentAnswer?
        do {
            kept = try answer?(refund)
        } catch {
            throw VaultError(.storage, "the refund's answer could not be sealed; nothing was refunded, try again")
        }
        let recorded: TransactionRecord?
        do {
            recorded = try await storing("record the refund") { try await store.insertRefund(refund, events: events, answer: kept) }
        } catch let error where error.code == .storageOutcomeUnknown {
            try await undoCutOff(refund, answered: kept, error)
        }
        guard let updated = recorded else {
            throw VaultError(.refundTooLarge, "a refund of \(amount) is more than the \(left) left to refund on \(transactionID)", param: "amount")
        }
        if let reference = transaction.processorReference {
            // The amount is held by the refund's record while the processor gives it back; a
            // processor that fails gives nothing back, so the record goes and the caller is told.
            do {
                try await processor.refund(reference: reference, amount: amount, currency: currency)
            } catch {
                try await storing("undo the refund") { try await store.deleteRefund(refund, answered: kept) }
                throw VaultError(
                    .processorError,
                    "the processor did not make the refund of \(amount) on \(transactionID); nothing was refunded, try again later"
                )
            }
        }
        if let kept { kept.keeper.keep(kept) }
        return (refund, updated)
    }

    /// A refund whose write was cut off by the database going away, and may have been made:
    /// it is taken back (``VaultStore/deleteRefund(_:answered:)``, which changes nothing when
    /// it was not made) before the processor is asked, so that the answer that nothing changed
    /// is true. The database still away, the answer says what may be recorded.
    private func undoCutOff(_ refund: RefundRecord, answered: IdempotentAnswer?, _ error: VaultError) async throws(VaultError) -> Never {
        do {
            try await storing("take back the refund whose write was cut off") { try await store.deleteRefund(refund, answered: answered) }
        } catch {
            throw VaultError(
                .storageOutcomeUnknown,
                "the vault's database went away while refund \(refund.id) was being recorded: no money was given back, but the "
                    + "refund may show as made; look up transaction \(refund.transactionID) once the database is back (in a few "
                    + "seconds) before refunding again",
                cause: error.cause
            )
        }
        throw VaultError.storageUnavailable(cause: error.cause)
    }
}
