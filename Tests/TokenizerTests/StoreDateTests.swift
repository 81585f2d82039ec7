import Foundation
import GRDB
import Testing

@testable import Payments
@testable import Tokenizer

@Suite("Store dates")
struct StoreDateTests {
    @Test("dates are written exactly as GRDB writes them, so SQL compares both alike")
    func sameTextAsGRDB() throws {
        var generator = SystemRandomNumberGenerator()
        var dates = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_800_000_000.9999), Date(timeIntervalSince1970: 951_782_400),  // 2000-02-29
            Date(timeIntervalSince1970: 4_107_542_399.999), Date(timeIntervalSince1970: -86_400.5), Date(),
        ]
        for _ in 0..<5000 { dates.append(Date(timeIntervalSince1970: Double.random(in: -2_000_000_000...5_000_000_000, using: &generator))) }
        // Exactly half a millisecond, before and after 1970: where rounding rules part.
        for _ in 0..<2000 {
            let milliseconds = Double(Int64.random(in: -2_000_000_000_000...5_000_000_000_000, using: &generator))
            dates.append(Date(timeIntervalSince1970: (milliseconds + 0.5) / 1000))
        }
        dates.append(Date(timeIntervalSince1970: -768_607_307.3395))
        for date in dates {
            let grdb = try #require(String.fromDatabaseValue(date.databaseValue))
            #expect(StoreDate.text(date) == grdb, "\(date.timeIntervalSince1970)")
        }
    }

    @Test("API dates are written as JSONEncoder's .iso8601 writes them")
    func sameTextAsISO8601() throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let date = Date(timeIntervalSince1970: Double.random(in: 0...4_000_000_000, using: &generator))
            let expected = String(decoding: try encoder.encode([date]), as: UTF8.self).dropFirst(2).dropLast(2)
            #expect(StoreDate.iso8601(date) == String(expected), "\(date.timeIntervalSince1970)")
        }
    }
}
