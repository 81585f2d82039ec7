import GRDB
import GRDBSQLite
import Tokenizer

/// A statement the connection keeps, bound, stepped and read through SQLite's own calls
/// instead of GRDB's `execute(arguments:)` and `Row`: for the few statements that every token
/// and every charge runs on the writer, where all the vault's writes wait in line.
///
/// GRDB boxes each argument in a `DatabaseValue`, binds them one nested closure per argument
/// and builds a `Row` for each row read. In a charge that was 40 % of the writer's time (perf,
/// session 32), more than SQLite's own work. GRDB's conversions still do the work for each
/// value here: `StatementBinding` binds it, `StatementColumnConvertible` reads it.
///
/// Only for statements inside a transaction GRDB began (a group commit's): GRDB's statement
/// hooks, which feed its database observation, are not called, and the store observes
/// nothing. The statement is left reset with no arguments bound, as GRDB expects to find it.
///
/// ```swift
/// let select = try DirectStatement(db, sql: "SELECT status FROM \"transaction\" WHERE id = ?")
/// let status: String? = try select.first(binding: id) { try $0.value(0) }
/// ```
struct DirectStatement {
    private let statement: Statement
    private var handle: SQLiteStatement { statement.sqliteStatement }

    /// The connection's prepared statement for `sql`, with nothing bound.
    init(_ db: Database, sql: String) throws {
        statement = try db.cachedStatement(sql: sql)
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Runs the statement to its end with `values` bound to its parameters: an INSERT or an
    /// UPDATE.
    func execute<each Value: StatementBinding>(binding values: repeat each Value) throws {
        defer { finish() }
        try bind(repeat each values)
        var code: CInt
        repeat { code = sqlite3_step(handle) } while code == SQLITE_ROW
        guard code == SQLITE_DONE else { throw failure(code) }
    }

    /// The first row with `values` bound, read by `read`; nil when there is none.
    func first<T, each Value: StatementBinding>(binding values: repeat each Value, read: (Columns) throws -> T) throws -> T? {
        defer { finish() }
        try bind(repeat each values)
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return try read(Columns(statement: statement))
        case SQLITE_DONE: return nil
        case let code: throw failure(code)
        }
    }

    /// Every row with `values` bound, each read by `read`.
    func all<T, each Value: StatementBinding>(binding values: repeat each Value, read: (Columns) throws -> T) throws -> [T] {
        defer { finish() }
        try bind(repeat each values)
        var rows: [T] = []
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_ROW: rows.append(try read(Columns(statement: statement)))
            case SQLITE_DONE: return rows
            case let code: throw failure(code)
            }
        }
    }

    /// The columns of the row the statement is on.
    struct Columns {
        fileprivate let statement: Statement
        private var handle: SQLiteStatement { statement.sqliteStatement }

        /// Column `index` (from 0), nil when it is NULL.
        func optional<T: StatementColumnConvertible>(_ index: CInt) -> T? {
            T.fromStatement(handle, atUncheckedIndex: index)
        }

        /// Column `index` (from 0); an error when it is NULL or not a `T`.
        func value<T: StatementColumnConvertible>(_ index: CInt) throws -> T {
            guard let value = T.fromStatement(handle, atUncheckedIndex: index) else {
                throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "column \(index) is not a \(T.self)", sql: statement.sql)
            }
            return value
        }
    }

    /// Binds `values` to the statement's parameters, in order from the first.
    private func bind<each Value: StatementBinding>(_ values: repeat each Value) throws {
        var index: CInt = 1
        for value in repeat each values {
            let code = value.bind(to: handle, at: index)
            guard code == SQLITE_OK else { throw failure(code) }
            index += 1
        }
    }

    /// Back to the start with nothing bound: SQLite lets go of the copies of the arguments
    /// (sealed card data among them) and of the read lock a row holds.
    private func finish() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// SQLite's error for `code`, with its message and the statement (never its arguments).
    /// Only here is the statement's text asked for: GRDB makes it anew at each call.
    private func failure(_ code: CInt) -> DatabaseError {
        let connection = sqlite3_db_handle(handle)
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        let message = connection.map { String(cString: sqlite3_errmsg($0)) }
        return DatabaseError(resultCode: ResultCode(rawValue: extended), message: message, sql: statement.sql)
    }
}
