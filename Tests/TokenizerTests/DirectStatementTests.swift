import Foundation
import GRDB
import Testing

@testable import Payments
@testable import SQLiteVault
@testable import Tokenizer

/// The writer's statements that bypass GRDB's binding and rows (``DirectStatement``): what
/// GRDB did for them (reset statements, errors without arguments, NULLs, bad values) still holds.
@Suite("Direct statements")
struct DirectStatementTests {
    @Test("a failed INSERT is SQLite's error, naming the statement but none of its values; the statement works again after it")
    func failureKeepsValuesOut() async throws {
        try await withFileStore { store, _ in
            let fixture = try await VaultFixture(store: store)
            var token = GroupCommitTests.record("tok_direct", merchantID: fixture.merchantID)
            token.fingerprint = "fingerprint-that-must-not-show"
            try await store.insertToken(token)
            let error = await #expect(throws: DatabaseError.self) { try await store.insertToken(token) }
            #expect(error?.resultCode == .SQLITE_CONSTRAINT)
            #expect(error?.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY)
            #expect(error?.sql?.hasPrefix("INSERT INTO token") == true)
            let text = String(describing: error)
            #expect(!text.contains("fingerprint-that-must-not-show") && !text.contains("tok_direct"), "\(text)")
            var next = token
            next.id = "tok_direct_2"
            try await store.insertToken(next)
            #expect(try await store.token(id: "tok_direct_2", merchantID: fixture.merchantID)?.stored == next.stored)
        }
    }

    @Test("a token reads back as written: NULLs as nil, dates to the millisecond, through the writer and a reader alike")
    func roundTrip() async throws {
        try await withFileStore { store, _ in
            let fixture = try await VaultFixture(store: store)
            var bound = GroupCommitTests.record("tok_bound", merchantID: fixture.merchantID)
            (bound.amount, bound.currency, bound.sealedCVC) = (1999, "EUR", Data([9, 8, 7]))
            let plain = GroupCommitTests.record("tok_plain", merchantID: fixture.merchantID)
            try await store.insertToken(bound)
            try await store.insertToken(plain)
            #expect(try await store.token(id: "tok_bound", merchantID: fixture.merchantID)?.stored == bound.stored)
            #expect(try await store.token(id: "tok_plain", merchantID: fixture.merchantID)?.stored == plain.stored)
            #expect(try await store.token(id: "tok_plain", merchantID: "mer_other") == nil)
            let spent = try await store.spendToken(
                id: "tok_bound",
                merchantID: fixture.merchantID,
                amount: 1999,
                currency: "EUR",
                at: Date(),
                charge: nil
            )
            guard case .spent(let record, charge: nil) = spent else {
                Issue.record("the bound token was not spent: \(spent)")
                return
            }
            #expect(record.sealedCVC == Data([9, 8, 7]) && record.amount == 1999)
        }
    }

    @Test("a stored value that is not what its column should hold is an error, not a crash")
    func badValueThrows() async throws {
        try await withFileStore { store, _ in
            let fixture = try await VaultFixture(store: store)
            try await store.insertToken(GroupCommitTests.record("tok_bad", merchantID: fixture.merchantID))
            try await store.database.write { db in
                try db.execute(sql: "UPDATE token SET created_at = 'not a date' WHERE id = 'tok_bad'")
            }
            let error = await #expect(throws: DatabaseError.self) {
                try await store.token(id: "tok_bad", merchantID: fixture.merchantID)
            }
            #expect(error?.message?.contains("column 13") == true)
            // A spend reads the token on the writer: the same error, and the group goes on.
            await #expect(throws: DatabaseError.self) {
                try await store.spendToken(id: "tok_bad", merchantID: fixture.merchantID, amount: 1, currency: "EUR", at: Date(), charge: nil)
            }
            // Each statement was left reset: the next reads and spends work.
            try await store.insertToken(GroupCommitTests.record("tok_good", merchantID: fixture.merchantID))
            #expect(try await store.token(id: "tok_good", merchantID: fixture.merchantID) != nil)
            let spent = try await store.spendToken(
                id: "tok_good",
                merchantID: fixture.merchantID,
                amount: 1,
                currency: "EUR",
                at: Date(),
                charge: nil
            )
            guard case .spent = spent else {
                Issue.record("tok_good was not spent: \(spent)")
                return
            }
        }
    }
}

extension TokenRecord {
    /// The record with its dates to the millisecond, as the store keeps them (a date read
    /// back can differ from the one written below that).
    fileprivate var stored: TokenRecord {
        var record = self
        record.createdAt = StoreDate.stored(createdAt)
        record.expiresAt = StoreDate.stored(expiresAt)
        record.usedAt = usedAt.map(StoreDate.stored)
        return record
    }
}
