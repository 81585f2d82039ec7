public import Foundation

/// Writes the objects events carry, in the shapes the API answers with: the server knows
/// them (a checkout session's `url` is an address of the server), the vault does not.
public protocol WebhookObjectWriter: Sendable {
    func transaction(_ record: TransactionRecord) throws -> [UInt8]
    func refund(_ record: RefundRecord) throws -> [UInt8]
    /// A session with its payment, once it has one.
    func checkoutSession(_ record: CheckoutSessionRecord, transaction: TransactionRecord?) throws -> [UInt8]
}

/// The events a change in the store gives rise to. A store write that settles a charge, ends
/// a checkout session or adds a refund writes its event in the same transaction, so that an
/// outcome is never recorded without its event, nor an event without its outcome.
///
/// Events hold no card data beyond the brand, bin, last four digits and expiry that the API's
/// objects show.
public struct WebhookEvents: Sendable {
    let objects: any WebhookObjectWriter
    /// The time an event is written at: the vault's clock.
    package let now: @Sendable () -> Date

    public init(objects: any WebhookObjectWriter, now: @escaping @Sendable () -> Date = Date.init) {
        self.objects = objects
        self.now = now
    }

    /// The most webhook endpoints a merchant may have; a store's batches count on it.
    public static let endpointLimit = 16

    /// Every event type, as `POST /v1/webhook_endpoints` takes them in `events`.
    public static let types = [
        "checkout_session.completed",
        "checkout_session.expired",
        "checkout_session.canceled",
        "transaction.succeeded",
        "transaction.declined",
        "transaction.failed",
        "refund.created",
    ]

    /// `transaction.succeeded`, `.declined` or `.failed` for a settled charge; nil while pending.
    package func settled(_ transaction: TransactionRecord) throws -> WebhookEventDraft? {
        guard ["succeeded", "declined", "failed"].contains(transaction.status) else { return nil }
        return WebhookEventDraft(
            type: "transaction." + transaction.status,
            merchantID: transaction.merchantID,
            object: try objects.transaction(transaction)
        )
    }

    package func refunded(_ refund: RefundRecord) throws -> WebhookEventDraft {
        WebhookEventDraft(type: "refund.created", merchantID: refund.merchantID, object: try objects.refund(refund))
    }

    /// `checkout_session.completed`, `.expired` or `.canceled` for a session that ended.
    package func ended(_ session: CheckoutSessionRecord, transaction: TransactionRecord?) throws -> WebhookEventDraft? {
        let type: String
        switch session.status {
        case CheckoutSessionRecord.complete: type = "checkout_session.completed"
        case CheckoutSessionRecord.expired: type = "checkout_session.expired"
        case CheckoutSessionRecord.canceled: type = "checkout_session.canceled"
        default: return nil
        }
        return WebhookEventDraft(
            type: type,
            merchantID: session.merchantID,
            object: try objects.checkoutSession(session, transaction: transaction)
        )
    }
}
