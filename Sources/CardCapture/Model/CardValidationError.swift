/// Why a card number, expiry or CVC was refused.
///
/// The code is stable (it appears in JSON and the HTTP API); the message tells a person
/// what to fix. Neither ever contains the card number or the CVC.
public struct CardValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable error code. New codes may be added.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        enum Base: String, Sendable {
            case invalidNumber = "invalid_number"
            case incompleteNumber = "incomplete_number"
            case incompleteExpiry = "incomplete_expiry"
            case invalidExpiryMonth = "invalid_expiry_month"
            case invalidExpiryYear = "invalid_expiry_year"
            case expiredCard = "expired_card"
            case invalidCVC = "invalid_cvc"
        }

        let base: Base

        /// Not a card number: wrong characters, a failed check digit, an unknown brand or a wrong length.
        public static let invalidNumber = Code(base: .invalidNumber)
        /// Too few digits so far for the brand: the person may still be typing.
        public static let incompleteNumber = Code(base: .incompleteNumber)
        /// The expiry is not complete yet ("12/2", "1"): the person may still be typing.
        public static let incompleteExpiry = Code(base: .incompleteExpiry)
        /// The month is missing, not a number or not 1 to 12, or the expiry cannot be read.
        public static let invalidExpiryMonth = Code(base: .invalidExpiryMonth)
        /// The year is missing or implausible.
        public static let invalidExpiryYear = Code(base: .invalidExpiryYear)
        /// The card's last valid month is in the past.
        public static let expiredCard = Code(base: .expiredCard)
        /// The CVC is not 3 digits (4 for American Express).
        public static let invalidCVC = Code(base: .invalidCVC)

        /// The code as it appears in JSON, for example `invalid_number`.
        public var rawValue: String { base.rawValue }
        public var description: String { base.rawValue }
    }

    /// Which input the error is about.
    public enum Field: String, Sendable {
        case number, expiry, cvc
    }

    public let code: Code
    public let field: Field
    /// What is wrong and what to do, for people. Never holds card data.
    public let message: String

    init(_ code: Code, _ field: Field, _ message: String) {
        self.code = code
        self.field = field
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
