/// An identifier for an object the vault hands out: a prefix (`tok_`, `tran_`, …) and 128
/// random bits from the system's cryptographic generator, in base 62.
///
/// An id is never derived from card data, and because it always holds letters after the
/// prefix it can never be mistaken for a card number.
///
/// ```swift
/// let id = ObjectID.random(.token)   // tok_3kTMd9…
/// ```
public struct ObjectID: Sendable, Hashable, CustomStringConvertible {
    /// What kind of object an id names.
    public struct Kind: Sendable, Hashable {
        public let prefix: String

        public static let token = Kind(prefix: "tok_")
        public static let transaction = Kind(prefix: "tran_")
        public static let client = Kind(prefix: "client_")
        public static let paymentMethod = Kind(prefix: "pm_")
        public static let scan = Kind(prefix: "scan_")
        public static let merchant = Kind(prefix: "mer_")
        public static let request = Kind(prefix: "req_")
        public static let refund = Kind(prefix: "re_")
        public static let publishableKey = Kind(prefix: "pk_")
        public static let secretKey = Kind(prefix: "sk_")
    }

    public let rawValue: String

    /// Characters after the prefix: 22 base-62 digits hold 128 bits (62^22 > 2^128).
    static let bodyLength = 22
    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    /// A new id with 128 random bits.
    public static func random(_ kind: Kind) -> ObjectID {
        var generator = SystemRandomNumberGenerator()
        return random(kind, using: &generator)
    }

    static func random(_ kind: Kind, using generator: inout some RandomNumberGenerator) -> ObjectID {
        // Two 64-bit words, written out in base 62, most significant first.
        var high = generator.next() as UInt64
        var low = generator.next() as UInt64
        var digits: [UInt8] = []
        for _ in 0..<bodyLength {
            // Divide the 128-bit number (high, low) by 62, keeping the remainder.
            let highQuotient = high / 62
            let highRemainder = high % 62
            let (lowQuotient, remainder) = (62 as UInt64).dividingFullWidth((highRemainder, low))
            high = highQuotient
            low = lowQuotient
            digits.append(alphabet[Int(remainder)])
        }
        var body = digits.reversed().map { $0 }
        // Guarantee at least one letter so the body is never all digits.
        if body.allSatisfy({ $0 < 65 }) { body[0] = alphabet[10 + Int(body[0] - 48)] }
        return ObjectID(rawValue: kind.prefix + String(decoding: body, as: UTF8.self))
    }

    /// Reads an id of a kind back from text; nil when the prefix or the body is wrong.
    public init?(_ text: String, kind: Kind) {
        guard text.hasPrefix(kind.prefix) else { return nil }
        let body = text.utf8.dropFirst(kind.prefix.utf8.count)
        guard body.count == Self.bodyLength, body.allSatisfy({ Self.alphabet.contains($0) }) else { return nil }
        self.rawValue = text
    }

    private init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }
}
