import Foundation
import Hummingbird
import Payments
import Tokenizer

/// The JSON shapes of transactions, refunds, clients and payment methods.
enum ResourceBodies {
    /// Written by hand (``JSONObjectWriter``) when answered alone, through `Encodable` in lists; a
    /// test holds the two alike.
    struct Transaction: WrittenJSONBody {
        let id: String
        let object = "transaction"
        let status: String
        let amount: Int
        let currency: String
        let amountRefunded: Int
        let description: String?
        let client: String?
        let paymentMethod: String?
        let token: String?
        let declineCode: String?
        let card: CardSummary
        let createdAt: Date

        init(_ record: TransactionRecord) {
            id = record.id
            status = record.status
            amount = record.amount
            currency = record.currency
            amountRefunded = record.refundedAmount
            description = record.description
            client = record.clientID
            paymentMethod = record.paymentMethodID
            token = record.tokenID
            declineCode = record.declineCode
            card = CardSummary(brand: record.brand, bin: record.bin, last4: record.last4, expMonth: record.expMonth, expYear: record.expYear)
            createdAt = record.createdAt
        }

        enum CodingKeys: String, CodingKey {
            case id, object, status, amount, currency, description, client, token, card
            case amountRefunded = "amount_refunded"
            case paymentMethod = "payment_method"
            case declineCode = "decline_code"
            case createdAt = "created_at"
        }

        func json() -> JSONObjectWriter {
            var json = JSONObjectWriter()
            json.field("id", id)
            json.field("object", object)
            json.field("status", status)
            json.field("amount", amount)
            json.field("currency", currency)
            json.field("amount_refunded", amountRefunded)
            json.field("description", description)
            json.field("client", client)
            json.field("payment_method", paymentMethod)
            json.field("token", token)
            json.field("decline_code", declineCode)
            json.field("card", card)
            json.field("created_at", createdAt)
            return json
        }
    }

    struct Refund: ResponseEncodable {
        let id: String
        let object = "refund"
        let transaction: String
        let amount: Int
        let currency: String
        let status = "succeeded"
        let createdAt: Date

        init(_ record: RefundRecord) {
            id = record.id
            transaction = record.transactionID
            amount = record.amount
            currency = record.currency
            createdAt = record.createdAt
        }

        enum CodingKeys: String, CodingKey {
            case id, object, transaction, amount, currency, status
            case createdAt = "created_at"
        }
    }

    struct Client: ResponseEncodable {
        let id: String
        let object = "client"
        let email: String?
        let description: String?
        let createdAt: Date

        init(_ record: ClientRecord) {
            id = record.id
            email = record.email
            description = record.description
            createdAt = record.createdAt
        }

        enum CodingKeys: String, CodingKey {
            case id, object, email, description
            case createdAt = "created_at"
        }
    }

    struct PaymentMethod: ResponseEncodable {
        let id: String
        let object = "payment_method"
        let client: String
        let card: CardSummary
        let createdAt: Date

        init(_ method: Payments.PaymentMethod) {
            id = method.id
            client = method.clientID
            card = method.card
            createdAt = method.createdAt
        }

        enum CodingKeys: String, CodingKey {
            case id, object, client, card
            case createdAt = "created_at"
        }
    }

    /// A page of a list; `has_more` says whether another page follows (ask for it with the
    /// last item's id as `starting_after`).
    struct List<Item: Encodable & Sendable>: ResponseEncodable {
        let object = "list"
        let data: [Item]
        let hasMore: Bool

        init<Record>(_ page: Page<Record>, _ transform: (Record) -> Item) {
            self.init(data: page.items.map(transform), hasMore: page.hasMore)
        }

        init(data: [Item], hasMore: Bool) {
            self.data = data
            self.hasMore = hasMore
        }

        enum CodingKeys: String, CodingKey {
            case object, data
            case hasMore = "has_more"
        }
    }

    struct Deleted: ResponseEncodable {
        let id: String
        let object: String
        let deleted = true
    }
}
