public import Foundation

/// A payment asked for by a merchant's backend and taken on the hosted page: open until it is
/// paid (complete), canceled, or its time runs out (expired). One payment per session.
public struct CheckoutSessionRecord: Sendable, Codable, Equatable {
    public var id: String
    public var merchantID: String
    /// `open`, `complete`, `expired` or `canceled`.
    public var status: String
    public var amount: Int
    public var currency: String
    public var description: String?
    public var returnURL: String
    public var cancelURL: String?
    /// Brand ids the page takes (comma-separated in the store); nil for every brand.
    public var allowedBrands: [String]?
    /// `query` or `ifcc`: how the outcome is added to the return URL.
    public var returnFormat: String
    /// Percent, as given ("8.5"); the amount includes the tax.
    public var taxRate: String?
    public var clientID: String?
    public var savePaymentMethod: Bool
    public var metadata: [String: String]
    /// The payment, once the session is complete.
    public var transactionID: String?
    /// Payments tried on the page (declines included).
    public var attempts: Int
    public var createdAt: Date
    public var expiresAt: Date
    /// When the session became complete, expired or canceled.
    public var endedAt: Date?

    /// Every field, as the stores read them back.
    package init(
        id: String,
        merchantID: String,
        status: String,
        amount: Int,
        currency: String,
        description: String? = nil,
        returnURL: String,
        cancelURL: String? = nil,
        allowedBrands: [String]? = nil,
        returnFormat: String,
        taxRate: String? = nil,
        clientID: String? = nil,
        savePaymentMethod: Bool,
        metadata: [String: String],
        transactionID: String? = nil,
        attempts: Int,
        createdAt: Date,
        expiresAt: Date,
        endedAt: Date? = nil
    ) {
        self.id = id
        self.merchantID = merchantID
        self.status = status
        self.amount = amount
        self.currency = currency
        self.description = description
        self.returnURL = returnURL
        self.cancelURL = cancelURL
        self.allowedBrands = allowedBrands
        self.returnFormat = returnFormat
        self.taxRate = taxRate
        self.clientID = clientID
        self.savePaymentMethod = savePaymentMethod
        self.metadata = metadata
        self.transactionID = transactionID
        self.attempts = attempts
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.endedAt = endedAt
    }

    public static let open = "open"
    public static let complete = "complete"
    public static let expired = "expired"
    public static let canceled = "canceled"
}

/// Whether a payment may start on a session's page.
public enum CheckoutClaim: Sendable, Equatable {
    /// Go ahead: the attempt is counted and the session held for the payment.
    case claimed(CheckoutSessionRecord)
    case notFound
    /// Complete, expired or canceled.
    case notOpen(CheckoutSessionRecord)
    /// Every attempt the session allows has been made.
    case attemptsUsed(CheckoutSessionRecord)
    /// Another payment on the session is under way.
    case busy
}

extension CheckoutSessionRecord {
    /// The metadata as the stores keep it: a JSON object, keys sorted.
    package static func encode(_ metadata: [String: String]) throws -> String {
        String(decoding: try metadataEncoder.encode(metadata), as: UTF8.self)
    }

    package static func decodeMetadata(_ stored: String) throws -> [String: String] {
        try metadataDecoder.decode([String: String].self, from: Data(stored.utf8))
    }

    /// The allowed brands as the stores keep them: comma-separated.
    package static func encode(brands: [String]?) -> String? {
        brands?.joined(separator: ",")
    }

    package static func decodeBrands(_ stored: String?) -> [String]? {
        stored.map { $0.split(separator: ",").map(String.init) }
    }

    private static let metadataDecoder = JSONDecoder()
    private static let metadataEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
}
