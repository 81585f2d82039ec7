package import Foundation

/// Writes a JSON object straight into bytes, for what is written on every token: the API's
/// two commonest answers (a token, a transaction) and the sealed card. The generic
/// `JSONEncoder` was a quarter of a token request's own work. Like the encoder's synthesized
/// output, absent optionals are left out; the response types stay `Encodable` for lists, and
/// tests hold both outputs equal.
///
/// ```swift
/// var json = JSONObjectWriter()
/// json.field("id", "tok_…")
/// json.object("card") { $0.field("last4", "4242") }
/// let bytes = json.finish()   // {"id":"tok_…","card":{"last4":"4242"}}
/// ```
package struct JSONObjectWriter {
    private var bytes: [UInt8]
    private var empty = true

    package init(capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    package mutating func field(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        self.key(key)
        Self.appendString(value, to: &bytes)
    }

    package mutating func field(_ key: StaticString, _ value: Int?) {
        guard let value else { return }
        self.key(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    package mutating func field(_ key: StaticString, _ value: Bool) {
        self.key(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// ISO 8601 to the second, as the API's encoder writes dates.
    package mutating func field(_ key: StaticString, _ value: Date) {
        field(key, StoreDate.iso8601(value))
    }

    package mutating func field(_ key: StaticString, _ card: CardSummary) {
        object(key) { json in
            json.field("brand", card.brand)
            json.field("bin", card.bin)
            json.field("last4", card.last4)
            json.field("exp_month", card.expMonth)
            json.field("exp_year", card.expYear)
        }
    }

    package mutating func object(_ key: StaticString, _ fill: (inout JSONObjectWriter) -> Void) {
        self.key(key)
        bytes.append(UInt8(ascii: "{"))
        empty = true
        fill(&self)
        bytes.append(UInt8(ascii: "}"))
        empty = false
    }

    /// A value that is JSON already (an object written before), as it is.
    package mutating func json(_ key: StaticString, _ value: [UInt8]) {
        self.key(key)
        bytes.append(contentsOf: value)
    }

    /// The object's bytes, closed.
    package consuming func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private mutating func key(_ key: StaticString) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: "\":".utf8)
    }

    /// A JSON string (RFC 8259): quote, backslash and control characters escaped, the rest
    /// as UTF-8.
    package static func appendString(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: "\\\\".utf8)
            case UInt8(ascii: "\n"): bytes.append(contentsOf: "\\n".utf8)
            case UInt8(ascii: "\r"): bytes.append(contentsOf: "\\r".utf8)
            case UInt8(ascii: "\t"): bytes.append(contentsOf: "\\t".utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: "\\u00".utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 15)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
