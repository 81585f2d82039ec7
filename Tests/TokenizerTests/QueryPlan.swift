import GRDB

@testable import Payments
@testable import SQLiteVault
@testable import Tokenizer

extension SQLiteVaultStore {
    /// SQLite's plan for `sql` (each step's detail: SEARCH for an index lookup or range, SCAN
    /// for a walk of all rows, USE TEMP B-TREE for a sort), with NULL for every parameter.
    func queryPlan(_ sql: String) async throws -> [String] {
        try await database.read { db in
            let blanks = StatementArguments([DatabaseValue?](repeating: nil, count: sql.filter { $0 == "?" }.count))
            return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN \(sql)", arguments: blanks).map { $0["detail"] as String }
        }
    }
}
