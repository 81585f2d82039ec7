import PostgresNIO

/// The text of a statement prepared on each connection (``Prepared``): one SQL text per type.
protocol PreparedText: SendableMetatype {
    static var sql: String { get }
}

/// A statement with the text of `Text` and the values of `query`, whose text must be that one
/// (the query is built by the same function that built the text, with other values).
struct Prepared<Text: PreparedText>: PostgresPreparedStatement {
    typealias Row = PostgresRow
    static var name: String { "capture_\(Text.self)" }
    static var sql: String { Text.sql }
    let query: PostgresQuery

    init(_ query: PostgresQuery) {
        precondition(query.sql == Text.sql, "the statement's text is not the one prepared as \(Text.self)")
        self.query = query
    }

    func makeBindings() -> PostgresBindings { query.binds }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}
