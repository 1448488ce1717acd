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

    /// Inserts `rows` into `table`, `rowsPerStatement` a statement
    /// (`INSERT INTO table (columns) VALUES (?, …), (?, …), …`), `values` appending a row's
    /// values in the order of `columns`; `inserted` is called after each statement with the
    /// number of rows it gave. A page of server rows, a first push's bases and global IDs
    /// are written this way: one statement a row costs its run again for each.
    func insertRows<Element>(_ rows: [Element], into table: String, columns: [String], orReplace: Bool = false, rowsPerStatement: Int,
                             values: (Element, inout [DatabaseValue]) -> Void, inserted: (_ count: Int) throws -> Void = { _ in }) throws {
        let head = "INSERT \(orReplace ? "OR REPLACE " : "")INTO \(table) (\(columns.joined(separator: ", "))) VALUES "
        let row = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        var arguments: [DatabaseValue] = []
        for start in stride(from: 0, to: rows.count, by: rowsPerStatement) {
            let chunk = rows[start..<min(start + rowsPerStatement, rows.count)]
            arguments.removeAll(keepingCapacity: true)
            for element in chunk { values(element, &arguments) }
            let sql = head + Array(repeating: row, count: chunk.count).joined(separator: ", ")
            // Kept for a whole chunk, whose text is the same each time (compiling a statement
            // of hundreds of arguments costs about as much as running it), and for one row.
            try statement(sql: sql, kept: chunk.count == rowsPerStatement || chunk.count == 1).execute(arguments: StatementArguments(arguments))
            try inserted(chunk.count)
        }
    }

    /// Sets `columns` of many rows of `table` (a table keyed by `Z_PK`), each row its own
    /// values, `rowsPerStatement` rows a statement: `values` appends a row's key and then
    /// its value of each column. A row given twice would take one of its values: give each
    /// once.
    func updateRows<Element>(_ rows: [Element], of table: String, columns: [String], rowsPerStatement: Int,
                             values: (Element, inout [DatabaseValue]) -> Void) throws {
        // The rows' values are the columns `column1` (the key), `column2`, … of `VALUES`.
        let head = "UPDATE \(table) SET " + columns.enumerated().map { "\($1) = v.column\($0 + 2)" }.joined(separator: ", ") + " FROM (VALUES "
        let row = "(" + Array(repeating: "?", count: columns.count + 1).joined(separator: ", ") + ")"
        let tail = ") AS v WHERE \(table).Z_PK = v.column1"
        var arguments: [DatabaseValue] = []
        for start in stride(from: 0, to: rows.count, by: rowsPerStatement) {
            let chunk = rows[start..<min(start + rowsPerStatement, rows.count)]
            arguments.removeAll(keepingCapacity: true)
            for element in chunk { values(element, &arguments) }
            let sql = head + Array(repeating: row, count: chunk.count).joined(separator: ", ") + tail
            try statement(sql: sql, kept: chunk.count == rowsPerStatement || chunk.count == 1).execute(arguments: StatementArguments(arguments))
        }
    }

    /// The statement of `sql`: kept in the connection's cache when `kept` (a chunk of the
    /// full size or of one row, the same text each time: a pull of one change reads one
    /// object), else made for this once.
    func statement(sql: String, kept: Bool) throws -> Statement {
        try kept ? cachedStatement(sql: sql) : makeStatement(sql: sql)
    }
}
