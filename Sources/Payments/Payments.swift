public import Foundation
public import Tokenizer

/// Transactions, clients and saved payment methods, over the vault and a processor.
///
/// ```swift
/// let payments = Payments(vault: vault)   // the sandbox processor
/// let charge = try await payments.charge(.init(token: token.id, amount: 1999, currency: "EUR"), merchantID: id)
/// ```
public struct Payments: Sendable {
    public let vault: Vault
    public let processor: any Processor
    /// Writes the objects of webhook events; without it no events are written (a vault no
    /// server sends webhooks from).
    public let webhookObjects: (any WebhookObjectWriter)?
    /// Where webhook endpoints may point: public addresses only, unless allowed.
    public var webhookAddresses = WebhookAddressPolicy()

    public init(vault: Vault, processor: any Processor = SandboxProcessor(), webhookObjects: (any WebhookObjectWriter)? = nil) {
        self.vault = vault
        self.processor = processor
        self.webhookObjects = webhookObjects
    }

    /// What the store writes events with, on the vault's clock.
    var events: WebhookEvents? {
        webhookObjects.map { WebhookEvents(objects: $0, now: vault.configuration.now) }
    }

    /// What to charge: a token or a saved payment method, an amount in minor units and its
    /// currency, and optionally a client to file it under and save the card for.
    public struct ChargeRequest: Sendable {
        public var token: String?
        public var paymentMethod: String?
        public var amount: Int
        public var currency: String
        public var description: String?
        public var client: String?
        public var savePaymentMethod: Bool
        /// The Idempotency-Key the request runs under: recorded with the charge, so that a
        /// retry after a crash finds it.
        public var idempotencyKey: String?
        /// The checkout session this charge pays (the hosted page's charges): completed in
        /// the write that settles the charge as succeeded.
        var checkoutSessionID: String?
        /// The answer to keep for the request's Idempotency-Key, made from the transaction as
        /// it is settled: kept in the settling write (see ``IdempotencyKeys/Keeper``). Not used
        /// when the charge saves its card (a failed save is told after the settlement).
        public var answer: (@Sendable (TransactionRecord) throws -> IdempotentAnswer)?
        /// The request's Idempotency-Key keeper, when its key is left for the charge to claim
        /// (``IdempotencyKeys/Keeper/unclaimed``): a token's spend claims it in its write. A
        /// charge of a saved card does not, and is refused before it writes, so that the key
        /// is claimed on its own first.
        public var keeper: IdempotencyKeys.Keeper?

        public init(
            token: String? = nil,
            paymentMethod: String? = nil,
            amount: Int,
            currency: String,
            description: String? = nil,
            client: String? = nil,
            savePaymentMethod: Bool = false,
            idempotencyKey: String? = nil
        ) {
            self.token = token
            self.paymentMethod = paymentMethod
            self.amount = amount
            self.currency = currency
            self.description = description
            self.client = client
            self.savePaymentMethod = savePaymentMethod
            self.idempotencyKey = idempotencyKey
        }
    }

    /// A saved card as its merchant sees it.
    public struct PaymentMethod: Sendable, Equatable {
        public let id: String
        public let clientID: String
        public let card: CardSummary
        public let createdAt: Date

        init(_ record: PaymentMethodRecord) {
            self.id = record.id
            self.clientID = record.clientID
            self.card = CardSummary(brand: record.brand, bin: record.bin, last4: record.last4, expMonth: record.expMonth, expYear: record.expYear)
            self.createdAt = record.createdAt
        }
    }

    var store: any VaultStore { vault.store }

    func storing<T: Sendable>(_ what: String, _ operation: () async throws -> T) async throws(VaultError) -> T {
        try await vault.storing(what, operation)
    }
}

/// One page of a list: its items, and whether more follow (ask again with the last item's id
/// as `starting_after`).
public struct Page<Item: Sendable>: Sendable {
    public let items: [Item]
    public let hasMore: Bool

    init(items: [Item], hasMore: Bool) {
        self.items = items
        self.hasMore = hasMore
    }
}
