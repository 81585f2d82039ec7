import CardCapture
import Foundation

extension Payments {
    /// Charges a token (spending it) or a saved payment method. A declined or failed charge
    /// is still a transaction, with its status and decline code; it throws only when the
    /// request itself is wrong (a spent token, an unknown payment method, a bad amount).
    public func charge(_ request: ChargeRequest, merchantID: String) async throws(VaultError) -> TransactionRecord {
        let currency = try Currency(request.currency)
        try Vault.check(amount: request.amount, in: currency)
        if let description = request.description, description.count > 500 {
            throw VaultError(.invalidRequest, "description is limited to 500 characters", param: "description")
        }
        switch (request.token, request.paymentMethod) {
        case (let token?, nil):
            return try await charge(token: token, request, currency: currency, merchantID: merchantID)
        case (nil, let method?):
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
        // The token is spent here, once; the CVC comes out of the vault for this one attempt
        // and goes out of scope with `card` at the end of this function.
        let card = try await vault.spend(token, merchantID: merchantID, amount: request.amount, currency: currency)
        let outcome = await authorize(card.pan, expiry: card.expiry, cvc: card.cvc, holder: card.holder, amount: request.amount, currency: currency)
        var paymentMethodID: String?
        if request.savePaymentMethod, let client = request.client, case .succeeded = outcome {
            paymentMethodID = try await save(card, client: client, merchantID: merchantID).id
        }
        return try await record(
            outcome,
            request,
            currency: currency,
            merchantID: merchantID,
            card: card.token.card,
            tokenID: token,
            paymentMethodID: paymentMethodID
        )
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
            throw VaultError(.invalidRequest, "payment method \(id) belongs to another client", param: "client")
        }
        let card = try vault.openSaved(method)
        let outcome: AuthorizationOutcome
        let today = CalendarDate(vault.configuration.now())
        if (card.expiry.year, card.expiry.month) < (today.year, today.month) {
            // A saved card that has run out: no processor would take it.
            outcome = .declined(code: "expired_card")
        } else {
            outcome = await authorize(card.pan, expiry: card.expiry, cvc: nil, holder: card.holder, amount: request.amount, currency: currency)
        }
        var filed = request
        filed.client = method.clientID
        let summary = CardSummary(brand: method.brand, bin: method.bin, last4: method.last4, expMonth: method.expMonth, expYear: method.expYear)
        return try await record(outcome, filed, currency: currency, merchantID: merchantID, card: summary, tokenID: nil, paymentMethodID: method.id)
    }

    /// The processor's answer; a processor that throws is a failed charge (processing_error).
    private func authorize(_ pan: PAN, expiry: Expiry, cvc: CVC?, holder: String?, amount: Int, currency: Currency) async -> AuthorizationOutcome {
        let request = AuthorizationRequest(pan: pan, expiry: expiry, cvc: cvc, amount: amount, currency: currency, holder: holder)
        do {
            return try await processor.authorize(request)
        } catch {
            return .failed(code: "processing_error")
        }
    }

    private func record(
        _ outcome: AuthorizationOutcome,
        _ request: ChargeRequest,
        currency: Currency,
        merchantID: String,
        card: CardSummary,
        tokenID: String?,
        paymentMethodID: String?
    ) async throws(VaultError) -> TransactionRecord {
        var status = "succeeded"
        var declineCode: String?
        var reference: String?
        switch outcome {
        case .succeeded(let processorReference): reference = processorReference
        case .declined(let code): (status, declineCode) = ("declined", code)
        case .failed(let code): (status, declineCode) = ("failed", code)
        }
        let transaction = TransactionRecord(
            id: ObjectID.random(.transaction).rawValue,
            merchantID: merchantID,
            status: status,
            amount: request.amount,
            currency: currency.code,
            refundedAmount: 0,
            description: request.description,
            clientID: request.client,
            paymentMethodID: paymentMethodID,
            tokenID: tokenID,
            declineCode: declineCode,
            processorReference: reference,
            brand: card.brand,
            bin: card.bin,
            last4: card.last4,
            expMonth: card.expMonth,
            expYear: card.expYear,
            createdAt: vault.configuration.now()
        )
        try await storing("record the transaction") { try await store.insertTransaction(transaction) }
        return transaction
    }
}
