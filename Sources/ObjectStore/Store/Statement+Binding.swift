import GRDB
import GRDBSQLite

extension Statement {
    /// Binds `values` to the statement's parameters, in order, for the run or fetch that
    /// follows without arguments (`execute()`, `Row.fetchCursor(statement)`), which keep them.
    ///
    /// `execute(arguments:)` with `StatementArguments` made from an array costs about as much
    /// as SQLite's own work on a row: GRDB reads each value through a key path, copies the
    /// array twice to check it against the statement, then binds. Here each value is bound
    /// as it is. A save, a pulled page's rows and bases, and a push's reads go through this.
    ///
    /// - Throws: A `DatabaseError` (`SQLITE_MISUSE`) when the statement takes another number
    ///   of values, before anything is bound or run.
    package func bind(values: [DatabaseValue]) throws {
        guard values.count == Int(sqlite3_bind_parameter_count(sqliteStatement)) else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE,
                                message: "\(values.count) values for a statement of \(sqlite3_bind_parameter_count(sqliteStatement)) parameters", sql: sql)
        }
        // Resets the statement, clears its bindings and marks them set, so that GRDB's run
        // that follows keeps them: none of GRDB's own are bound.
        setUncheckedArguments(StatementArguments())
        for (index, value) in values.enumerated() {
            let code = value.bind(to: sqliteStatement, at: CInt(index + 1))
            guard code == SQLITE_OK else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "the value at \(index + 1) could not be bound", sql: sql)
            }
        }
    }

    /// Runs the statement with `values` bound to its parameters in order (see
    /// ``bind(values:)``).
    package func execute(binding values: [DatabaseValue]) throws {
        try bind(values: values)
        try execute()
    }
}

extension Database {
    /// Runs `sql(marks)` for `values`, up to `valuesPerStatement` (a power of two) at a
    /// time, `marks` being a `?` for each value of the chunk (bound after `leading`), and
    /// gives `body` each row: a page of a thousand objects read in a few statements rather
    /// than one statement an object. A chunk of fewer is padded to a power of two with its
    /// last value repeated, so that a few statements, kept compiled, serve every chunk
    /// (preparing one took half the query's time): `sql` must give a row once however often
    /// a value repeats, as `IN (…)` does.
    package func forEachRow(matching values: [some DatabaseValueConvertible], leading: [any DatabaseValueConvertible] = [],
                            valuesPerStatement: Int = 512, sql: (String) -> String, _ body: (Row) throws -> Void) throws {
        let head = leading.map(\.databaseValue)
        var arguments: [DatabaseValue] = []
        for start in stride(from: 0, to: values.count, by: valuesPerStatement) {
            let chunk = values[start..<min(start + valuesPerStatement, values.count)]
            let marks = 1 << (Int.bitWidth - (chunk.count - 1).leadingZeroBitCount)
            arguments.removeAll(keepingCapacity: true)
            arguments += head
            for value in chunk { arguments.append(value.databaseValue) }
            arguments += repeatElement(arguments[arguments.count - 1], count: marks - chunk.count)
            let statement = try cachedStatement(sql: sql(Array(repeating: "?", count: marks).joined(separator: ",")))
            try statement.bind(values: arguments)
            let rows = try Row.fetchCursor(statement)
            while let row = try rows.next() { try body(row) }
        }
    }
}
