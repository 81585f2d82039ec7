import GRDB
import Testing

@testable import Payments
@testable import SQLiteVault
@testable import Tokenizer

/// Tokens and transactions are read by position (``TokenRecord/init(row:)``,
/// ``TransactionRecord/init(row:)``) from `SELECT *` and `RETURNING *`: a migration that
/// changed the tables' column order would make every read wrong, and this test says so first.
@Suite("Record columns")
struct RecordColumnsTests {
    @Test("the token and transaction tables keep the column order their records are read in")
    func tableOrder() async throws {
        let store = try SQLiteVaultStore.inMemory()
        let (tokenColumns, transactionColumns) = try await store.database.read { db in
            (try db.columns(in: "token").map(\.name), try db.columns(in: "transaction").map(\.name))
        }
        #expect(tokenColumns == TokenRecord.columns)
        #expect(transactionColumns == TransactionRecord.columns)
    }
}
