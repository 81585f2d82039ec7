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
        let text = Self.withoutSurroundingSpace(input)
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw CardValidationError(
                .invalidCVC,
                .cvc,
                "the security code is digits only, printed on the back of the card (the front for American Express)"
            )
        }
        if let brand {
            guard text.utf8.count == brand.cvcLength else {
                throw CardValidationError(
                    .invalidCVC,
                    .cvc,
                    "\(brand.withArticle) security code has \(brand.cvcLength) digits; this one has \(text.utf8.count)"
                )
            }
        } else {
            guard text.utf8.count == 3 || text.utf8.count == 4 else {
                throw CardValidationError(.invalidCVC, .cvc, "a security code has 3 or 4 digits; this one has \(text.utf8.count)")
            }
        }
        self.digits = String(text)
    }

    /// `input` without the white space around it. Found by index, not by reversing the
    /// characters twice and building a string from them one by one, which took a quarter of
    /// a token's validation and sealing (perf, bench-api).
    static func withoutSurroundingSpace(_ input: String) -> Substring {
        guard let first = input.firstIndex(where: { !$0.isWhitespace }), let last = input.lastIndex(where: { !$0.isWhitespace }) else {
            return ""
        }
        return input[first...last]
    }

    /// The digits. Use them only to encrypt or to hand to a processor.
    public var revealed: String { digits }
    public var length: Int { digits.count }
    public var description: String { String(repeating: "*", count: digits.count) }
    public var debugDescription: String { "CVC(\(description))" }
    public var customMirror: Mirror { Mirror(self, children: ["masked": description]) }
}
