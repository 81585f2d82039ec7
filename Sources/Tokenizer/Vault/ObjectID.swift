package import Foundation

/// An identifier for an object the vault hands out: a prefix (`tok_`, `tran_`, …) and 128
/// random bits from the system's cryptographic generator, in base 62. Ids of stored records
/// start with the time they were made, so that they sort by age (see ``Kind/timeOrdered``).
///
/// An id is never derived from card data, and because it always holds letters after the
/// prefix it can never be mistaken for a card number.
///
/// ```swift
/// let id = ObjectID.random(.token)   // tok_0VbftIT7 then 22 random digits: time, then chance
/// ```
public struct ObjectID: Sendable, Hashable, CustomStringConvertible {
    /// What kind of object an id names.
    public struct Kind: Sendable, Hashable {
        public let prefix: String
        /// Whether ids start with the millisecond they were made (8 base-62 digits) before the
        /// random part. A store's primary-key index then takes each new record on its last
        /// page, one page for all the records of a commit, where a random id dirtied a page
        /// of its own anywhere in the index: a token wrote 2.3 pages to SQLite's log instead
        /// of under one, and copying that log back stalled the writer. API keys and request
        /// ids are random only.
        public let timeOrdered: Bool

        public static let token = Kind(prefix: "tok_", timeOrdered: true)
        public static let transaction = Kind(prefix: "tran_", timeOrdered: true)
        public static let client = Kind(prefix: "client_", timeOrdered: true)
        public static let paymentMethod = Kind(prefix: "pm_", timeOrdered: true)
        public static let scan = Kind(prefix: "scan_", timeOrdered: true)
        public static let merchant = Kind(prefix: "mer_", timeOrdered: true)
        public static let refund = Kind(prefix: "re_", timeOrdered: true)
        public static let checkoutSession = Kind(prefix: "cs_", timeOrdered: true)
        public static let webhookEndpoint = Kind(prefix: "we_", timeOrdered: true)
        public static let event = Kind(prefix: "evt_", timeOrdered: true)
        public static let webhookDelivery = Kind(prefix: "whd_", timeOrdered: true)
        public static let request = Kind(prefix: "req_", timeOrdered: false)
        public static let publishableKey = Kind(prefix: "pk_", timeOrdered: false)
        public static let secretKey = Kind(prefix: "sk_", timeOrdered: false)
        public static let webhookSecret = Kind(prefix: "whsec_", timeOrdered: false)
        /// A running server process, as the holder of Idempotency-Keys (``ServerPresence``).
        public static let server = Kind(prefix: "srv_", timeOrdered: true)
    }

    public let rawValue: String

    /// The random part: 22 base-62 digits hold 128 bits (62^22 > 2^128).
    package static let randomLength = 22
    /// The time part of a time-ordered id: milliseconds since 1970 in 8 base-62 digits, enough
    /// until the year 8000; base-62 digits sort in ASCII order, so the ids sort by time.
    package static let timeLength = 8
    package static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    /// A new id with 128 random bits.
    public static func random(_ kind: Kind) -> ObjectID {
        random(kind, at: Date())
    }

    /// A new id made at `date`: the vault's records take their own clock's time, so that an
    /// id never starts later than the record's `created_at` (within the millisecond).
    package static func random(_ kind: Kind, at date: Date) -> ObjectID {
        var generator = SystemRandomPair()
        return random(kind, at: date, using: &generator)
    }

    /// The text every time-ordered id of `kind` made at or before `date` sorts below, and
    /// every one made in a later millisecond (times rounded as the ids round them) does not:
    /// an index on the ids finds "made by then" without a column of times.
    package static func bound(_ kind: Kind, after date: Date) -> String {
        precondition(kind.timeOrdered, "only time-ordered ids sort by time")
        var text = Array(kind.prefix.utf8)
        appendTime(milliseconds(date) + 1, to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    static func random(_ kind: Kind, at date: Date, using generator: inout some RandomNumberGenerator) -> ObjectID {
        var text = Array(kind.prefix.utf8)
        text.reserveCapacity(text.count + timeLength + randomLength)
        if kind.timeOrdered { appendTime(milliseconds(date), to: &text) }
        appendRandomBody(to: &text, using: &generator)
        return ObjectID(rawValue: String(decoding: text, as: UTF8.self))
    }

    /// Milliseconds since 1970, to the nearest (none before 1970).
    private static func milliseconds(_ date: Date) -> UInt64 {
        UInt64(max(0, (date.timeIntervalSince1970 * 1000).rounded()))
    }

    /// Appends the time part: the milliseconds in ``timeLength`` base-62 digits.
    private static func appendTime(_ milliseconds: UInt64, to text: inout [UInt8]) {
        var rest = milliseconds
        let start = text.count
        text.append(contentsOf: repeatElement(alphabet[0], count: timeLength))
        for index in (start..<text.count).reversed() {
            text[index] = alphabet[Int(rest % 62)]
            rest /= 62
        }
    }

    /// Appends 128 random bits in base 62, with at least one letter.
    private static func appendRandomBody(to text: inout [UInt8], using generator: inout some RandomNumberGenerator) {
        // Two 64-bit words, written out in base 62, least significant digit first, then
        // turned round.
        var high = generator.next() as UInt64
        var low = generator.next() as UInt64
        let start = text.count
        for _ in 0..<randomLength {
            // Divide the 128-bit number (high, low) by 62, keeping the remainder.
            let highQuotient = high / 62
            let highRemainder = high % 62
            let (lowQuotient, remainder) = (62 as UInt64).dividingFullWidth((highRemainder, low))
            high = highQuotient
            low = lowQuotient
            text.append(alphabet[Int(remainder)])
        }
        text[start...].reverse()
        // Guarantee at least one letter so the body is never all digits.
        if text[start...].allSatisfy({ $0 < 65 }) { text[start] = alphabet[10 + Int(text[start] - 48)] }
    }

    /// The system's cryptographic generator, drawn from once for both words of an id.
    struct SystemRandomPair: RandomNumberGenerator {
        private var pair: (UInt64, UInt64) = (0, 0)
        private var taken = 0
        private var more = SystemRandomNumberGenerator()

        init() {
            withUnsafeMutableBytes(of: &pair) { SystemRandom.fill($0) }
        }

        mutating func next() -> UInt64 {
            taken += 1
            switch taken {
            case 1: return pair.0
            case 2: return pair.1
            default: return more.next()
            }
        }
    }

    /// Reads an id of a kind back from text; nil when the prefix or the body is wrong.
    public init?(_ text: String, kind: Kind) {
        guard text.hasPrefix(kind.prefix) else { return nil }
        let body = text.utf8.dropFirst(kind.prefix.utf8.count)
        let length = Self.randomLength + (kind.timeOrdered ? Self.timeLength : 0)
        guard body.count == length, body.allSatisfy({ Self.alphabet.contains($0) }) else { return nil }
        self.rawValue = text
    }

    private init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }
}
