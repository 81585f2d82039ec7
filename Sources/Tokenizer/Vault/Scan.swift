public import Foundation

/// A scan as its merchant sees it: what the scanner read, never the card number.
public struct Scan: Sendable, Equatable {
    /// What a scan read of the card: brand, BIN and last four when it read the number, the
    /// expiry when it read one.
    public struct Card: Sendable, Equatable, Codable {
        public var brand: String?
        public var bin: String?
        public var last4: String?
        public var expMonth: Int?
        public var expYear: Int?

        public init(brand: String? = nil, bin: String? = nil, last4: String? = nil, expMonth: Int? = nil, expYear: Int? = nil) {
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

    /// A whole number the scanner read but could not verify (it fails the check digit, or
    /// the reading is too weak): masked, with the reason. It is never sealed or tokenized;
    /// the person corrects it and the number is sent with the token request instead.
    public struct Unverified: Sendable, Equatable, Codable {
        public var masked: String
        public var reason: String

        public init(masked: String, reason: String) {
            self.masked = masked
            self.reason = reason
        }
    }

    public let id: String
    /// `found` when the scanner read a number it is sure of, `unverified` when it read a whole
    /// number it could not verify, `specimen` when the picture shows a sample card, `not_found`
    /// otherwise.
    public let status: String
    /// Only when `status` is `unverified`, and only in the answer to the scan itself.
    public var unverified: Unverified?
    /// Nil when the scanner read nothing at all.
    public let card: Card?
    /// 0 to 1: how sure the scanner is of the number.
    public let confidence: Double
    public let createdAt: Date
    /// Until when the scan can be made into a token.
    public let expiresAt: Date
    public let usedAt: Date?

    init(_ record: ScanRecord) {
        self.id = record.id
        self.status = record.status
        let card = Card(brand: record.brand, bin: record.bin, last4: record.last4, expMonth: record.expMonth, expYear: record.expYear)
        self.card = card == Card() ? nil : card
        self.confidence = record.confidence
        self.createdAt = record.createdAt
        self.expiresAt = record.expiresAt
        self.usedAt = record.usedAt
    }
}
