import Foundation

/// What the JSON decoder lets through and a payments API must not: an object with the same
/// key twice (the decoder keeps the first; most parsers keep the last, so a proxy in front
/// would read another request), a NUL character inside a string (stored cut short by C
/// code further down), and a comma before an object's or array's end (JSON has none; a
/// strict parser in front would refuse what this one takes). With the request's parameters, also a top-level key it does not take,
/// and null for one that openapi.json does not call nullable (the decoder reads null as "left
/// out"). One pass over the bytes, before decoding; anything else that is wrong with the JSON
/// is left to the decoder's own errors.
enum StrictJSON {
    /// Why a body is refused: a key given twice, a NUL in a string, a top-level key the
    /// request does not take, or one given as null that may not be.
    enum Problem: Equatable {
        case duplicateKey(String)
        case nulCharacter
        case trailingComma
        case unknownKey(String)
        case nullValue(String)
    }

    /// - Parameter parameters: the keys the body's top-level object may have; nil for any.
    static func problem(in bytes: [UInt8], parameters: KnownParameters? = nil) -> Problem? {
        var keys = SeenKeys()
        var expectingKey = false
        // The top-level key whose value comes next.
        var topLevelKey: ArraySlice<UInt8>?
        // A comma read, and nothing since but white space.
        var afterComma = false
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if afterComma, byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") { return .trailingComma }
            if !Self.isWhiteSpace(byte) { afterComma = byte == UInt8(ascii: ",") }
            switch byte {
            case UInt8(ascii: "{"):
                keys.openObject()
                expectingKey = true
            case UInt8(ascii: "["):
                keys.openArray()
                expectingKey = false
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                keys.close()
                expectingKey = false
            case UInt8(ascii: ","):
                expectingKey = keys.inObject
            case UInt8(ascii: ":"):
                expectingKey = false
            case UInt8(ascii: "\""):
                guard let string = readString(bytes, from: index + 1) else { return nil }  // unterminated: the decoder says so
                if string.hasNUL { return .nulCharacter }
                // Only an object expects a key: `{` and a `,` inside one set it.
                if expectingKey {
                    let place = (index + 1)..<string.end
                    let text = string.hasEscapes ? normalized(bytes[index...string.end]) : nil
                    guard keys.insert(place, text: text, in: bytes) else {
                        return .duplicateKey(String(decoding: text ?? Array(bytes[place]), as: UTF8.self))
                    }
                    if let parameters, keys.depth == 1 {
                        let key = text.map { $0[...] } ?? bytes[place]
                        if !parameters.contains(key) { return .unknownKey(String(decoding: key, as: UTF8.self)) }
                        topLevelKey = key
                    }
                }
                index = string.end
            case UInt8(ascii: "n"):
                // A key's value at depth 1 that is the literal null (not a stray word such as
                // Infinity, which the decoder refuses as not JSON).
                if let parameters, keys.depth == 1, let key = topLevelKey, !parameters.isNullable(key),
                    bytes[index...].starts(with: "null".utf8)
                {
                    return .nullValue(String(decoding: key, as: UTF8.self))
                }
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// JSON's white space between tokens.
    static func isWhiteSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// The keys seen in each open object, innermost last. While an object's keys are few and
    /// written plainly, they are kept as places in the body and compared byte by byte: an API
    /// body costs no allocation per key (a set of copied keys was a quarter of the check's
    /// time). An object with many keys, or a key with escapes, has its keys kept as a set of
    /// their texts, so that a body of thousands of keys costs no more than one pass.
    private struct SeenKeys {
        /// Where an open object's keys start in ``places``, and its set once it has one; nil
        /// for an array.
        private struct Object {
            let first: Int
            var texts: Set<[UInt8]>?
        }

        /// Keys compared in place, up to this many per object.
        private static let fewKeys = 16
        private var open: [Object?] = []
        /// The plain keys of the open objects, each object's after its parent's: only the
        /// innermost object takes keys, so its places are the last ones.
        private var places: [Range<Int>] = []

        var inObject: Bool { open.last.map { $0 != nil } ?? false }
        /// Objects and arrays open: 1 inside the body's own object.
        var depth: Int { open.count }

        mutating func openObject() { open.append(Object(first: places.count)) }

        mutating func openArray() { open.append(nil) }

        mutating func close() {
            if let object = open.popLast(), let object { places.removeSubrange(object.first...) }
        }

        /// Adds a key of the innermost object, at `place` in `bytes` (`text`, when it has
        /// escapes, is what it stands for); false when the object has it already.
        mutating func insert(_ place: Range<Int>, text: [UInt8]?, in bytes: [UInt8]) -> Bool {
            let innermost = open.count - 1
            guard let object = open[innermost] else { return true }
            if object.texts == nil, text == nil, places.count - object.first < Self.fewKeys {
                let key = bytes[place]
                if places[object.first...].contains(where: { bytes[$0] == key }) { return false }
                places.append(place)
                return true
            }
            if object.texts == nil {
                open[innermost]?.texts = Set(places[object.first...].map { Array(bytes[$0]) })
                places.removeSubrange(object.first...)
            }
            // Inserted in place: a copy of the set taken out and put back was copied whole.
            return open[innermost]?.texts?.insert(text ?? Array(bytes[place])).inserted ?? true
        }
    }

    /// The string whose contents start at `start`: the index of its closing quote, and whether
    /// it has escapes and a NUL (raw, or escaped as \u0000).
    private static func readString(_ bytes: [UInt8], from start: Int) -> (end: Int, hasEscapes: Bool, hasNUL: Bool)? {
        var index = start
        var hasEscapes = false
        var hasNUL = false
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                return (index, hasEscapes, hasNUL)
            case UInt8(ascii: "\\"):
                hasEscapes = true
                let zero = UInt8(ascii: "0")
                if index + 5 < bytes.count, bytes[index + 1] == UInt8(ascii: "u"), bytes[(index + 2)...(index + 5)].allSatisfy({ $0 == zero }) {
                    hasNUL = true
                }
                index += 2
                continue
            case 0:
                hasNUL = true
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// A key with escapes, as the text it stands for ("\u0061" is "a"), so that two spellings
    /// of one key count as the same key.
    private static func normalized(_ quoted: ArraySlice<UInt8>) -> [UInt8] {
        guard let text = try? JSONDecoder().decode(String.self, from: Data(quoted)) else { return Array(quoted) }
        return Array(text.utf8)
    }
}
