import CardCapture
public import Foundation

/// Dates as text, in UTC, made with integer arithmetic rather than a `DateFormatter` (ICU),
/// which cost more than the rest of a token's insert.
public enum StoreDate {
    /// "yyyy-MM-dd HH:mm:ss.SSS": the text GRDB writes for a `Date`, so that the two compare
    /// and sort alike in SQL.
    package static func text(_ date: Date) -> String {
        format(milliseconds: milliseconds(date), separator: " ", fraction: true)
    }

    /// Whole milliseconds since 1970, rounded to the nearest, halves up (towards the future,
    /// before 1970 too), as the formatter does.
    private static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000 + 0.5).rounded(.down))
    }

    /// The date as a store keeps it (``text(_:)``): to the millisecond, rounded the same way.
    package static func stored(_ date: Date) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds(date)) / 1000)
    }

    /// "yyyy-MM-ddTHH:mm:ssZ": ISO 8601 to the second, as `JSONEncoder`'s `.iso8601` writes it.
    public static func iso8601(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970).rounded(.down)) * 1000
        return format(milliseconds: milliseconds, separator: "T", fraction: false) + "Z"
    }

    private static func format(milliseconds: Int64, separator: Character, fraction: Bool) -> String {
        let (days, millisecondOfDay) = floorDivision(milliseconds, 86_400_000)
        let date = CalendarDate(daysSince1970: Int(days))
        let (year, month, day) = (Int64(date.year), Int64(date.month), Int64(date.day))
        let second = millisecondOfDay / 1000
        var bytes = [UInt8]()
        bytes.reserveCapacity(23)
        func put(_ value: Int64, digits: Int) {
            var divisor: Int64 = 1
            for _ in 1..<digits { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                bytes.append(UInt8(48 + rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        put(year, digits: 4)
        bytes.append(UInt8(ascii: "-"))
        put(month, digits: 2)
        bytes.append(UInt8(ascii: "-"))
        put(day, digits: 2)
        bytes.append(separator.asciiValue ?? UInt8(ascii: " "))
        put(second / 3600, digits: 2)
        bytes.append(UInt8(ascii: ":"))
        put(second / 60 % 60, digits: 2)
        bytes.append(UInt8(ascii: ":"))
        put(second % 60, digits: 2)
        if fraction {
            bytes.append(UInt8(ascii: "."))
            put(millisecondOfDay % 1000, digits: 3)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }
}
