public import Foundation

/// What anyone may see of a card: brand, first six and last four digits, expiry.
public struct CardSummary: Sendable, Equatable, Codable {
    public var brand: String
    public var bin: String
    public var last4: String
    public var expMonth: Int
    public var expYear: Int

    public init(brand: String, bin: String, last4: String, expMonth: Int, expYear: Int) {
        self.brand = brand
        self.bin = bin
        self.last4 = last4
        self.expMonth = expMonth
        self.expYear = expYear
    }

    enum CodingKeys: String, CodingKey {
        case brand, bin, last4
        case expMonth = "exp_month"
        case expYear = "exp_year"
    }
}

/// A token as its merchant sees it: never the card number or CVC.
public struct Token: Sendable, Equatable {
    public let id: String
    public let card: CardSummary
    /// The amount and currency the token is bound to, if any.
    public let amount: Int?
    public let currency: String?
    public let createdAt: Date
    public let expiresAt: Date
    public let usedAt: Date?
    /// Whether a CVC was given and is still held (it is erased at the first authorization).
    public let hasCVC: Bool

    public var used: Bool { usedAt != nil }

    init(_ record: TokenRecord) {
        self.id = record.id
        self.card = CardSummary(brand: record.brand, bin: record.bin, last4: record.last4, expMonth: record.expMonth, expYear: record.expYear)
        self.amount = record.amount
        self.currency = record.currency
        self.createdAt = record.createdAt
        self.expiresAt = record.expiresAt
        self.usedAt = record.usedAt
        self.hasCVC = record.sealedCVC != nil
    }
}
