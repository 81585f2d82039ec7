/// A card security code (CVC, CVV, CID): 3 digits, or 4 for American Express.
///
/// Like ``PAN`` it never prints its digits: `description` is `***`.
public struct CVC: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let digits: String

    /// Validates a CVC for a brand; with no brand, 3 or 4 digits are accepted.
    ///
    /// - Throws: ``CardValidationError`` `invalid_cvc`.
    public init(_ input: String, brand: CardBrand?) throws(CardValidationError) {
        // White space around it is let go; inside it ("12 3") it is a typing mistake.
        let text = Substring(input).drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()
        guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit) else {
            throw CardValidationError(
                .invalidCVC,
                .cvc,
                "the security code is digits only, printed on the back of the card (the front for American Express)"
            )
        }
        if let brand {
            guard text.count == brand.cvcLength else {
                throw CardValidationError(
                    .invalidCVC,
                    .cvc,
                    "\(brand.displayName.first.map { "AEIOU".contains($0) } == true ? "an" : "a") \(brand.displayName) security code has \(brand.cvcLength) digits; this one has \(text.count)"
                )
            }
        } else {
            guard text.count == 3 || text.count == 4 else {
                throw CardValidationError(.invalidCVC, .cvc, "a security code has 3 or 4 digits; this one has \(text.count)")
            }
        }
        self.digits = String(text)
    }

    /// The digits. Use them only to encrypt or to hand to a processor.
    public var revealed: String { digits }
    public var length: Int { digits.count }
    public var description: String { String(repeating: "*", count: digits.count) }
    public var debugDescription: String { "CVC(\(description))" }
    public var customMirror: Mirror { Mirror(self, children: ["masked": description]) }
}
