import GRDB

extension Database {
    /// Runs `sql(marks)` for `values` a few hundred at a time, `marks` being a `?` for each
    /// value of the chunk (bound after `leading`), and gives `body` each row: a page of a
    /// thousand objects read in a few statements rather than one statement an object.
    func forEachRow(matching values: [some DatabaseValueConvertible], leading: [any DatabaseValueConvertible] = [],
                    sql: (String) -> String, _ body: (Row) throws -> Void) throws {
        for start in stride(from: 0, to: values.count, by: 500) {
            let chunk = values[start..<min(start + 500, values.count)]
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            let arguments = StatementArguments((leading + chunk.map { $0 as any DatabaseValueConvertible }).map { $0 as (any DatabaseValueConvertible)? })
            let rows = try Row.fetchCursor(statement(sql: sql(marks), kept: chunk.count == 500 || chunk.count == 1), arguments: arguments)
            while let row = try rows.next() { try body(row) }
        }
    }

    /// The statement of `sql`: kept in the connection's cache when `kept` (a chunk of the
    /// full size or of one row, the same text each time: a pull of one change reads one
    /// object), else made for this once.
    func statement(sql: String, kept: Bool) throws -> Statement {
        try kept ? cachedStatement(sql: sql) : makeStatement(sql: sql)
    }
}
