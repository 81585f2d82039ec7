import Foundation
import GRDB
import Testing

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
        for date in dates {
            let grdb = try #require(String.fromDatabaseValue(date.databaseValue))
            #expect(StoreDate.text(date) == grdb, "\(date.timeIntervalSince1970)")
        }
    }
}
