import GRDB
import ObjectStore

extension Database {
    /// The sizes of the statements that take `count` rows, at most `limit` a statement: as
    /// many of `limit` as there are, then the rest in powers of two, largest first (37 rows
    /// at most 100 a statement: 32, 4 and 1). Every statement is then one of a few texts,
    /// each kept compiled: compiling a statement of hundreds of arguments costs about as
    /// much as running it, and a page's last chunk had a size of its own each time.
    static func chunkSizes(of count: Int, limit: Int) -> [Int] {
        precondition(limit > 0)
        var sizes = Array(repeating: limit, count: count / limit)
        var rest = count % limit
        while rest > 0 {
            let size = 1 << (Int.bitWidth - 1 - rest.leadingZeroBitCount)
            sizes.append(size)
            rest -= size
        }
        return sizes
    }

    /// Runs `sql(n)` for `rows`, `n` at a time (``chunkSizes(of:limit:)`` of at most
    /// `rowsPerStatement`), with the values `values` appends for each row of the chunk bound
    /// in order; then `ran` with the statement and `n`.
    private func forEachChunk<Element>(of rows: [Element], rowsPerStatement: Int, sql: (Int) -> String,
                                       values: (Element, inout [DatabaseValue]) -> Void, _ ran: (Statement, Int) throws -> Void) throws {
        var arguments: [DatabaseValue] = []
        var start = rows.startIndex
        for size in Self.chunkSizes(of: rows.count, limit: rowsPerStatement) {
            arguments.removeAll(keepingCapacity: true)
            for element in rows[start..<start + size] { values(element, &arguments) }
            start += size
            let statement = try cachedStatement(sql: sql(size))
            try statement.bind(values: arguments)
            try ran(statement, size)
        }
    }

    /// Inserts `rows` into `table`, `rowsPerStatement` a statement at most
    /// (`INSERT INTO table (columns) VALUES (?, …), (?, …), …`, see ``chunkSizes(of:limit:)``),
    /// `values` appending a row's values in the order of `columns`; `inserted` is called
    /// after each statement with the number of rows it gave. A page of server rows, a first
    /// push's bases and global IDs are written this way: one statement a row costs its run
    /// again for each.
    ///
    /// - Parameter upsert: An `ON CONFLICT …` clause that ends each statement (with
    ///   `orReplace` false): what a row whose key is there already does.
    func insertRows<Element>(_ rows: [Element], into table: String, columns: [String], orReplace: Bool = false, upsert: String? = nil,
                             rowsPerStatement: Int,
                             values: (Element, inout [DatabaseValue]) -> Void, inserted: (_ count: Int) throws -> Void = { _ in }) throws {
        precondition(!orReplace || upsert == nil, "a row already there is replaced or upserted, not both")
        let head = "INSERT \(orReplace ? "OR REPLACE " : "")INTO \(table) (\(columns.joined(separator: ", "))) VALUES "
        let row = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        let tail = upsert.map { " " + $0 } ?? ""
        try forEachChunk(of: rows, rowsPerStatement: rowsPerStatement, sql: { head + Array(repeating: row, count: $0).joined(separator: ", ") + tail },
                         values: values) { statement, count in
            try statement.execute()
            try inserted(count)
        }
    }

    /// Sets `columns` of many rows of `table` (a table keyed by `Z_PK`), each row its own
    /// values, `rowsPerStatement` rows a statement at most: `values` appends a row's key and
    /// then its value of each column. A row given twice would take one of its values: give
    /// each once.
    func updateRows<Element>(_ rows: [Element], of table: String, columns: [String], rowsPerStatement: Int,
                             values: (Element, inout [DatabaseValue]) -> Void) throws {
        // The rows' values are the columns `column1` (the key), `column2`, … of `VALUES`.
        let head = "UPDATE \(table) SET " + columns.enumerated().map { "\($1) = v.column\($0 + 2)" }.joined(separator: ", ") + " FROM (VALUES "
        let row = "(" + Array(repeating: "?", count: columns.count + 1).joined(separator: ", ") + ")"
        let tail = ") AS v WHERE \(table).Z_PK = v.column1"
        try forEachChunk(of: rows, rowsPerStatement: rowsPerStatement, sql: { head + Array(repeating: row, count: $0).joined(separator: ", ") + tail },
                         values: values) { statement, _ in try statement.execute() }
    }
}
