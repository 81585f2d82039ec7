public import Foundation

/// A merchant's client: the owner of saved payment methods.
public struct ClientRecord: Sendable, Codable, Equatable {
    public var id: String
    public var merchantID: String
    public var email: String?
    public var description: String?
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, email, description
        case merchantID = "merchant_id"
        case createdAt = "created_at"
    }
}

/// A saved card for a client: sealed like a token's card, never with a CVC. One per card and
/// client (by fingerprint).
public struct PaymentMethodRecord: Sendable, Codable, Equatable {
    public var id: String
    public var merchantID: String
    public var clientID: String
    public var fingerprint: String
    public var brand: String
    public var bin: String
    public var last4: String
    public var expMonth: Int
    public var expYear: Int
    public var keyID: String
    public var sealedCard: Data
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, fingerprint, brand, bin, last4
        case merchantID = "merchant_id"
        case clientID = "client_id"
        case expMonth = "exp_month"
        case expYear = "exp_year"
        case keyID = "key_id"
        case sealedCard = "sealed_card"
        case createdAt = "created_at"
    }
}

/// A charge, whatever its outcome.
public struct TransactionRecord: Sendable, Codable, Equatable {
    public var id: String
    public var merchantID: String
    public var status: String
    public var amount: Int
    public var currency: String
    public var refundedAmount: Int
    public var description: String?
    public var clientID: String?
    public var paymentMethodID: String?
    public var tokenID: String?
    public var declineCode: String?
    public var processorReference: String?
    public var brand: String
    public var bin: String
    public var last4: String
    public var expMonth: Int
    public var expYear: Int
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, status, amount, currency, description, brand, bin, last4
        case merchantID = "merchant_id"
        case refundedAmount = "refunded_amount"
        case clientID = "client_id"
        case paymentMethodID = "payment_method_id"
        case tokenID = "token_id"
        case declineCode = "decline_code"
        case processorReference = "processor_reference"
        case expMonth = "exp_month"
        case expYear = "exp_year"
        case createdAt = "created_at"
    }
}

/// Money given back on a transaction.
public struct RefundRecord: Sendable, Codable, Equatable {
    public var id: String
    public var merchantID: String
    public var transactionID: String
    public var amount: Int
    public var currency: String
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, amount, currency
        case merchantID = "merchant_id"
        case transactionID = "transaction_id"
        case createdAt = "created_at"
    }
}

/// How a request with an `Idempotency-Key` may go ahead.
public enum IdempotencyClaim: Sendable, Equatable {
    /// First use of the key: run the request, then ``VaultStore/finishIdempotency(merchantID:key:status:body:)``.
    case claimed
    /// The key was used with the same request: answer what was answered then.
    case replay(status: Int, body: Data)
    /// The key was used with another request.
    case mismatch
    /// The first request with this key is still running.
    case inProgress
}
