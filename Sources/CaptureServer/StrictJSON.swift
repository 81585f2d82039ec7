import Foundation

/// What the JSON decoder lets through and a payments API must not: an object with the same
/// key twice (the decoder keeps the first; most parsers keep the last, so a proxy in front
/// would read another request) and a NUL character inside a string (stored cut short by C
/// code further down). One pass over the bytes, before decoding; anything else that is wrong
/// with the JSON is left to the decoder's own errors.
enum StrictJSON {
    /// Why a body is refused: a key given twice, or a NUL in a string.
    enum Problem: Equatable {
        case duplicateKey(String)
        case nulCharacter
    }

    static func problem(in bytes: [UInt8]) -> Problem? {
        /// The keys seen in each open object (nil for an array), innermost last.
        var open: [Set<[UInt8]>?] = []
        var expectingKey = false
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "{"):
                open.append([])
                expectingKey = true
            case UInt8(ascii: "["):
                open.append(nil)
                expectingKey = false
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                _ = open.popLast()
                expectingKey = false
            case UInt8(ascii: ","):
                expectingKey = open.last.map { $0 != nil } ?? false
            case UInt8(ascii: ":"):
                expectingKey = false
            case UInt8(ascii: "\""):
                guard let string = readString(bytes, from: index + 1) else { return nil }  // unterminated: the decoder says so
                if string.hasNUL { return .nulCharacter }
                if expectingKey, let innermost = open.indices.last, open[innermost] != nil {
                    let key = string.hasEscapes ? normalized(bytes[index...string.end]) : Array(bytes[(index + 1)..<string.end])
                    // Inserted in place: a copy of the set taken out and put back was copied whole.
                    guard open[innermost]?.insert(key).inserted == true else { return .duplicateKey(String(decoding: key, as: UTF8.self)) }
                }
                index = string.end
            default:
                break
            }
            index += 1
        }
        return nil
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
