import Foundation
import Payments
import Tokenizer

/// The objects webhook events carry, in the shapes the API answers with, so that a backend
/// reads an event's `data.object` with the code that reads a `GET`.
struct APIWebhookObjects: WebhookObjectWriter {
    /// The address hosted pages are reached at, for a session's `url`.
    let baseURL: String

    func transaction(_ record: TransactionRecord) -> [UInt8] {
        ResourceBodies.Transaction(record).json().finish()
    }

    func refund(_ record: RefundRecord) throws -> [UInt8] {
        Array(try APIJSON.encoder.encode(ResourceBodies.Refund(record)))
    }

    func checkoutSession(_ record: CheckoutSessionRecord, transaction: TransactionRecord?) throws -> [UInt8] {
        Array(try APIJSON.encoder.encode(CheckoutRoutes.Session(record, transaction: transaction, base: baseURL)))
    }
}
