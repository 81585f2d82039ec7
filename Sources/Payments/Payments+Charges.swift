import CardCapture
import Foundation
public import Tokenizer

extension Payments {
    /// Charges a token (spending it) or a saved payment method. A declined or failed charge
    /// is still a transaction, with its status and decline code; it throws only when the
    /// request itself is wrong (a spent token, an unknown payment method, a bad amount), or
    /// the store fails before the charge is recorded (nothing was charged).
    ///
    /// Once the charge is recorded pending (the token spent), nothing is thrown for the store:
    /// where the outcome cannot be written (the database went away after the processor
    /// answered), the transaction comes back `pending`, as recorded, for the sweeper to settle
    /// by asking the processor (``resolve(_:merchantID:)``). An error there would tell the
    /// caller that nothing happened while the card may have been charged.
    public func charge(_ request: ChargeRequest, merchantID: String) async throws(VaultError) -> TransactionRecord {
        let currency = try Currency(request.currency)
        try Vault.check(amount: request.amount, in: currency)
        try TextRules.checkDescription(request.description)
        switch (request.token, request.paymentMethod) {
        case (let token?, nil):
            return try await charge(token: token, request, currency: currency, merchantID: merchantID)
        case (nil, let method?):
            if request.keeper?.unclaimed != nil {
                // Its first write is the transaction's insert, which claims no key.
                throw VaultError(.idempotencyKeyInUse, "a saved card's charge claims its Idempotency-Key before it runs")
            }
            return try await charge(paymentMethod: method, request, currency: currency, merchantID: merchantID)
        case (nil, nil):
            throw VaultError(.invalidRequest, "give either token or payment_method to charge", param: "token")
        case (.some, .some):
            throw VaultError(.invalidRequest, "give token or payment_method, not both", param: "payment_method")
        }
    }

    private func charge(
        token: String,
        _ request: ChargeRequest,
        currency: Currency,
        merchantID: String
    ) async throws(VaultError)
        -> TransactionRecord
    {
        if request.savePaymentMethod && request.client == nil {
            throw VaultError(.invalidRequest, "save_payment_method needs the client to save the card for", param: "client")
        }
        if let client = request.client { try await requireClient(client, merchantID: merchantID) }
        // The token is spent here, once, in the same write that records the charge as
        // pending: a crash from here on leaves a transaction to resolve, never a spent token
        // without one. The CVC comes out of the vault for this one attempt and goes out of
        // scope with `card` at the end of this function.
        let pending = pendingCharge(request)
        let card: SpentCard
        do {
            card = try await vault.spend(
                token,
                merchantID: merchantID,
                amount: request.amount,
                currency: currency,
                charge: pending,
                keeper: request.keeper
            )
        } catch let error where error.code == .storageOutcomeUnknown {
            return try await spendCutOff(pending, request, merchantID: merchantID, error)
        }
        guard let recorded = card.pendingCharge else { preconditionFailure("a spend for a charge records it pending") }
        let outcome = await authorize(
            reference: pending.transactionID,
            card.pan,
            expiry: card.expiry,
            cvc: card.cvc,
            holder: card.holder,
            amount: request.amount,
            currency: currency
        )
        var paymentMethodID: String?
        var saveError: VaultError?
        if request.savePaymentMethod, let client = request.client, case .succeeded = outcome {
            do {
                paymentMethodID = try await save(card, client: client, merchantID: merchantID).id
            } catch {
                // The charge happened: it is settled all the same, then the failure is told.
                saveError = error
            }
        }
        let transaction: TransactionRecord
        do {
            transaction = try await settle(
                recorded,
                outcome,
                paymentMethodID: paymentMethodID,
                panLength: card.pan.length,
                answer: request.savePaymentMethod ? nil : request.answer
            )
        } catch {
            return Self.outcomeNotWritten(recorded)
        }
        if let saveError { throw saveError }
        return transaction
    }

    private func charge(
        paymentMethod id: String,
        _ request: ChargeRequest,
        currency: Currency,
        merchantID: String
    ) async throws(VaultError)
        -> TransactionRecord
    {
        if request.savePaymentMethod {
            throw VaultError(
                .invalidRequest,
                "a payment method is saved already; save_payment_method is for token charges",
                param: "save_payment_method"
            )
        }
        guard let method = try await storing("read the payment method", { try await store.paymentMethod(id: id, merchantID: merchantID) }) else {
            throw VaultError(.paymentMethodNotFound, "no payment method \(id.prefix(40)) for this merchant", param: "payment_method")
        }
        if let client = request.client, client != method.clientID {
            throw VaultError(.paymentMethodOfAnotherClient, "payment method \(id) belongs to another client", param: "client")
        }
        let card = try vault.openSaved(method)
        var filed = request
        filed.client = method.clientID
        let pending = pendingCharge(filed)
        var transaction = TransactionRecord(
            id: pending.transactionID,
            merchantID: merchantID,
            status: TransactionRecord.pending,
            amount: request.amount,
            currency: currency.code,
            refundedAmount: 0,
            description: request.description,
            clientID: method.clientID,
            paymentMethodID: method.id,
            tokenID: nil,
            declineCode: nil,
            processorReference: nil,
            brand: method.brand,
            bin: method.bin,
            last4: method.last4,
            expMonth: method.expMonth,
            expYear: method.expYear,
            createdAt: pending.createdAt,
            idempotencyKey: pending.idempotencyKey,
            checkoutSessionID: pending.checkoutSessionID,
            panLength: card.pan.length
        )
        let today = CalendarDate(vault.configuration.now())
        if (card.expiry.year, card.expiry.month) < (today.year, today.month) {
            // A saved card that has run out: no processor would take it.
            (transaction.status, transaction.declineCode) = ("declined", "expired_card")
            try await storing("record the transaction") { try await store.insertTransaction(transaction, events: events) }
            return transaction
        }
        try await storing("record the transaction") { try await store.insertTransaction(transaction, events: events) }
        let outcome = await authorize(
            reference: pending.transactionID,
            card.pan,
            expiry: card.expiry,
            cvc: nil,
            holder: card.holder,
            amount: request.amount,
            currency: currency
        )
        do {
            return try await settle(transaction, outcome, paymentMethodID: nil, panLength: card.pan.length, answer: request.answer)
        } catch {
            return Self.outcomeNotWritten(transaction)
        }
    }

    /// The answer to a charge whose spend was cut off by the database going away, so that its
    /// write may have committed: the card was not sent to the processor either way, so no
    /// money moved. The charge is looked for (within the request's wait for the database):
    /// recorded, it is settled `failed` (processing_error) and that is the answer; not
    /// recorded, nothing changed, and the answer says so (`storage_unavailable`); the database
    /// still away, the answer says that the token may be used up, and by which transaction.
    private func spendCutOff(
        _ pending: PendingCharge,
        _ request: ChargeRequest,
        merchantID: String,
        _ error: VaultError
    ) async throws(VaultError) -> TransactionRecord {
        let found: TransactionRecord?
        do {
            found = try await storing("look for the charge whose spend was cut off") {
                try await store.transaction(id: pending.transactionID, merchantID: merchantID)
            }
        } catch {
            throw VaultError(
                .storageOutcomeUnknown,
                "the vault's database went away while the token was being spent: nothing was charged (the card was not sent "
                    + "to the processor), but the token may be used up by transaction \(pending.transactionID), which is then "
                    + "settled failed; look it up once the database is back (in a few seconds), and charge a new token if it failed",
                cause: error.cause
            )
        }
        // The key, when the spend was to claim it, was claimed exactly when the charge was written.
        let claiming = request.keeper.map { $0.claim == .unknown } ?? false
        guard let found else {
            if claiming { request.keeper?.claimWent(.unclaimed) }
            throw VaultError.storageUnavailable(cause: error.cause)
        }
        if claiming { request.keeper?.claimWent(.made) }
        do {
            let answer = request.savePaymentMethod ? nil : request.answer
            return try await settle(found, .failed(code: "processing_error"), paymentMethodID: nil, panLength: nil, answer: answer)
        } catch {
            return Self.outcomeNotWritten(found)
        }
    }

    /// The answer to a charge recorded pending whose outcome could not be written: the
    /// transaction as recorded, `pending` (the API answers 202); the sweeper settles it.
    private static func outcomeNotWritten(_ pending: TransactionRecord) -> TransactionRecord {
        precondition(pending.status == TransactionRecord.pending, "only a pending charge is answered pending")
        return pending
    }

    /// The record of a charge before the processor is asked.
    private func pendingCharge(_ request: ChargeRequest) -> PendingCharge {
        PendingCharge(
            transactionID: ObjectID.random(.transaction).rawValue,
            description: request.description,
            clientID: request.client,
            idempotencyKey: request.idempotencyKey,
            // To the millisecond, as stored: the charge is answered from this record, and a
            // read of it later must show the same.
            createdAt: StoreDate.stored(vault.configuration.now()),
            checkoutSessionID: request.checkoutSessionID
        )
    }

    /// The processor's answer. When the call throws (a lost connection), the processor is
    /// asked what became of the authorization; one it never saw is a failed charge
    /// (processing_error).
    private func authorize(
        reference: String,
        _ pan: PAN,
        expiry: Expiry,
        cvc: CVC?,
        holder: String?,
        amount: Int,
        currency: Currency
    ) async -> AuthorizationOutcome {
        let request = AuthorizationRequest(
            reference: reference,
            pan: pan,
            expiry: expiry,
            cvc: cvc,
            amount: amount,
            currency: currency,
            holder: holder
        )
        do {
            return try await processor.authorize(request)
        } catch {
            if let known = try? await processor.outcome(ofAuthorization: reference) { return known }
            return .failed(code: "processing_error")
        }
    }

    /// Gives a pending transaction, as it was recorded, its outcome, and keeps `answer`'s
    /// answer in the same write when given. When another process settled it first (a
    /// recovery that found it lapsed), that settlement stands and is returned (and the answer
    /// is not kept).
    private func settle(
        _ pending: TransactionRecord,
        _ outcome: AuthorizationOutcome,
        paymentMethodID: String?,
        panLength: Int?,
        answer: (@Sendable (TransactionRecord) throws -> IdempotentAnswer)? = nil
    ) async throws(VaultError) -> TransactionRecord {
        var settlement = Self.settlement(outcome, paymentMethodID: paymentMethodID)
        settlement.panLength = panLength
        // An answer that cannot be made here (its sealing failed) is left to be kept after.
        let kept = answer.flatMap { try? $0(pending.settled(as: settlement)) }
        if let settled = try await storing(
            "record the transaction",
            { try await store.settleTransaction(pending, as: settlement, events: events, answer: kept) }
        ) {
            if let kept { kept.keeper.keep(kept) }
            return settled
        }
        return try await transaction(pending.id, merchantID: pending.merchantID)
    }

    static func settlement(_ outcome: AuthorizationOutcome, paymentMethodID: String?) -> Settlement {
        switch outcome {
        case .succeeded(let reference):
            Settlement(status: "succeeded", processorReference: reference, paymentMethodID: paymentMethodID)
        case .declined(let code):
            Settlement(status: "declined", declineCode: code)
        case .failed(let code):
            Settlement(status: "failed", declineCode: code)
        }
    }

    // MARK: - Recovery

    /// A transaction, settled first if it is still pending from a request that died: the
    /// processor is asked what became of its authorization; one it never received was not
    /// charged and is `failed` (processing_error).
    public func resolve(_ transactionID: String, merchantID: String) async throws(VaultError) -> TransactionRecord {
        let transaction = try await transaction(transactionID, merchantID: merchantID)
        guard transaction.status == TransactionRecord.pending else { return transaction }
        return try await resolvePending(transaction)
    }

    /// Settles every transaction left pending for longer than `age` (by a process that died
    /// between the spend and the processor's answer). Returns how many were settled.
    @discardableResult
    ///
    /// - Parameter settled: told each transaction as it was settled.
    public func resolvePending(
        olderThan age: Duration,
        settled tell: ((TransactionRecord) -> Void)? = nil
    ) async throws(VaultError) -> Int {
        let cutoff = vault.configuration.now().addingTimeInterval(-age.seconds)
        var settled = 0
        while true {
            let batch = try await storing("find pending transactions") { try await store.pendingTransactions(createdBefore: cutoff, limit: 100) }
            for transaction in batch {
                let outcome = try await resolvePending(transaction)
                tell?(outcome)
            }
            settled += batch.count
            if batch.count < 100 { return settled }
        }
    }

    private func resolvePending(_ transaction: TransactionRecord) async throws(VaultError) -> TransactionRecord {
        let outcome: AuthorizationOutcome
        do {
            outcome = try await processor.outcome(ofAuthorization: transaction.id) ?? .failed(code: "processing_error")
        } catch {
            throw VaultError(
                .processorError,
                "the processor could not say what became of transaction \(transaction.id); it stays pending and is asked again"
            )
        }
        // The card is not opened again: the charge keeps no length (the brand's usual one is used).
        return try await settle(transaction, outcome, paymentMethodID: nil, panLength: nil)
    }
}
