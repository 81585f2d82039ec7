/// Card numbers that processors publish for testing: the sandbox's outcomes
/// (`4000 0000 0000 0002` declined, …) and the numbers each brand's test cards carry. A
/// sandbox takes them as cards; a scanner serving live payments takes a picture of one for a
/// sample card (``Specimen/Reason/testNumber``).
public enum TestCards {
    /// The numbers, as digits.
    public static let numbers: Set<String> = [
        // Visa
        "4111111111111111", "4242424242424242", "4012888888881881", "4000056655665556", "4000000000000002",
        "4000000000009995", "4000000000000069", "4000000000000127", "4000000000000119",
        // Mastercard
        "5555555555554444", "5105105105105100", "2223003122003222", "5200828282828210", "2221000000000009",
        // American Express
        "378282246310005", "371449635398431", "378734493671000",
        // Discover
        "6011111111111117", "6011000990139424",
        // Diners Club
        "30569309025904", "38520000023237", "36227206271667", "3056930009020004",
        // JCB
        "3530111333300000", "3566002020360505",
        // UnionPay
        "6200000000000005", "6200000000000047", "6205500000000000004",
        // Maestro, Mir, Elo, Hipercard, Hiper
        "6759649826438453", "2200000000000004", "5066991111111118", "6062828888666688", "6370950000000005",
    ]

    /// Whether `digits` differ from a published test number of the same length in at least one
    /// place and at most `places`.
    static func isNear(_ digits: [UInt8], places: Int) -> Bool {
        numbers.contains { number in
            guard number.utf8.count == digits.count else { return false }
            let differing = zip(number.utf8, digits).filter { $0 - 48 != $1 }.count
            return differing >= 1 && differing <= places
        }
    }

    /// In how many places a reading that fails the check digit may differ from a test number
    /// and be taken, in the sandbox, for a misread of it (``Specimen/inNumber(_:acceptingTestNumbers:)``).
    static let misreadPlaces = 3

    /// Whether `digits` are some consecutive digits of a published test number, or all of one:
    /// what a crop that cut a group off the number reads.
    static func holdsPart(_ digits: [UInt8]) -> Bool {
        let text = String(decoding: digits.map { $0 + 48 }, as: UTF8.self)
        return numbers.contains { $0.contains(text) }
    }

    /// Whether `digits` is a published test number.
    public static func contains(_ digits: [UInt8]) -> Bool {
        numbers.contains(String(decoding: digits.map { $0 + 48 }, as: UTF8.self))
    }
}
