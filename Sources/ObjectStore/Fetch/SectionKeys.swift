import Foundation
import GRDB
import GRDBSQLite

/// What a fetched results controller needs from a fetch: the row keys in order, and the
/// runs of equal section names along them.
package struct SectionedRowKeys: Sendable, Equatable {
    /// A run of consecutive rows with one section name.
    package struct Run: Sendable, Equatable {
        package var name: String
        package var count: Int
    }

    /// The ``ObjectID/rowKey``s of the fetched objects, in order.
    package var rowKeys: [Int64]
    /// The section runs, in order; one run named "" for an unsectioned fetch with rows.
    package var sections: [Run]
}

extension ObjectContext {
    /// The row keys `request` fetches, and, with `sectionNameKeyPath`, the section name of
    /// each run of rows: one query, reading no other values.
    ///
    /// Section names are the key path's values as text: strings as they are, numbers in
    /// decimal, bools as `1` and `0`, dates as their day (`2014-06-12`, UTC), nil as the
    /// empty string — the same text
    /// ``sectionName(forKeyPath:of:)`` gives for an object in memory.
    package func fetchRowKeys<Result>(_ request: FetchRequest<Result>, sectionNameKeyPath: String?) throws -> SectionedRowKeys {
        let query = try rowKeysQuery(request, sectionNameKeyPath: sectionNameKeyPath)
        return try self.query(request) { db in try query.rowKeys(in: db) }
    }

    /// ``fetchRowKeys(_:sectionNameKeyPath:)``'s query, to run later on any thread
    /// (``RowKeysQuery/run()``) against the saved data: the request is checked and its SQL
    /// made here, on the context's queue.
    package func rowKeysQuery<Result>(_ request: FetchRequest<Result>, sectionNameKeyPath: String?) throws -> RowKeysQuery {
        try rowKeysQuery(request, entity: checkedEntity(for: request), sectionNameKeyPath: sectionNameKeyPath)
    }

    /// The query of `request`'s rows, only those that meet `condition` (SQL on the `t0`
    /// alias) when given: tested before the predicate, since SQLite tests the terms in order
    /// and the predicate may call a function for every row (a search).
    private func rowKeysQuery<Result>(_ request: FetchRequest<Result>, entity: EntityDescription, sectionNameKeyPath: String?,
                                      condition: SQL? = nil) throws -> RowKeysQuery {
        let sectionSQL = try sectionNameKeyPath.map { try keyPathSQL($0, of: entity, alias: "t0") }
        let sectionType = sectionNameKeyPath.flatMap { try? resolvedKeyPath($0, of: entity).valueType }
        var sql = SQL(sql: "SELECT t0.\(Schema.primaryKey)" + (sectionSQL.map { ", " + $0 } ?? ""))
        sql.append(sql: " FROM \(entity.name.quotedDatabaseIdentifier) t0")
        if let condition {
            sql.append(sql: " WHERE ")
            sql.append(literal: condition)
            if let predicate = request.predicate {
                sql.append(sql: " AND (")
                sql.append(literal: try predicate.sql(for: entity, in: model, alias: "t0"))
                sql.append(sql: ")")
            }
        } else {
            sql.append(literal: try whereClause(of: request, entity: entity))
        }
        sql.append(sql: " ORDER BY " + (try orderingTerms(of: request, entity: entity)))
        sql.append(literal: limitClause(of: request))
        return RowKeysQuery(store: store, sql: sql, isSectioned: sectionSQL != nil, sectionType: sectionType)
    }

    /// ``rowKeysQuery(_:sectionNameKeyPath:)`` in two halves, to run at once on two readers
    /// (``SplitRowKeysQuery/run(orElse:)``): the rows whose section value comes before
    /// `boundary` in the results' order, and the others. Nil unless the results are sorted
    /// first by `sectionNameKeyPath`, a text attribute of the entity compared as stored (the
    /// halves' conditions and the order then compare alike), without a limit or offset.
    package func splitRowKeysQuery<Result>(_ request: FetchRequest<Result>, sectionNameKeyPath keyPath: String,
                                           at boundary: String) throws -> SplitRowKeysQuery? {
        let entity = try checkedEntity(for: request)
        guard !keyPath.contains("."), entity.attribute(named: keyPath)?.type == .string, let first = request.sortDescriptors.first,
              first.key == keyPath, first.options.isEmpty, request.fetchLimit == 0, request.fetchOffset == 0 else { return nil }
        let column = try keyPathSQL(keyPath, of: entity, alias: "t0")
        // NULL sorts first ascending, last descending.
        let (before, after) = first.ascending
            ? ("(\(column) < ? OR \(column) IS NULL)", "\(column) >= ?")
            : ("\(column) > ?", "(\(column) <= ? OR \(column) IS NULL)")
        let halves = try [before, after].map { condition in
            try rowKeysQuery(request, entity: entity, sectionNameKeyPath: keyPath, condition: SQL(sql: condition, arguments: [boundary]))
        }
        return SplitRowKeysQuery(halves: (halves[0], halves[1]))
    }

    /// The section name of `object` for `keyPath`, as a fetch sectioned by `keyPath` names
    /// its row: strings as they are, numbers in decimal, bools as `1` and `0`, dates as their
    /// day (`2014-06-12`, UTC), nil as the empty string.
    public func sectionName(forKeyPath keyPath: String, of object: any KeyValueReading) -> String {
        sectionNamer(forKeyPath: keyPath, entity: (object as? ManagedObject)?.entity)(object)
    }

    /// ``sectionName(forKeyPath:of:)`` for many objects of the entity named `entityName`:
    /// the key path is resolved once.
    package func sectionNamer(forKeyPath keyPath: String, entityName: String) -> (any KeyValueReading) -> String {
        sectionNamer(forKeyPath: keyPath, entity: model.entity(named: entityName))
    }

    private func sectionNamer(forKeyPath keyPath: String, entity: EntityDescription?) -> (any KeyValueReading) -> String {
        let type = entity.flatMap { try? resolvedKeyPath(keyPath, of: $0).valueType }
        let components = keyPath.split(separator: ".").map(String.init)
        return { Self.sectionName(of: KeyPathReader.value(components, of: $0), type: type) }
    }

    /// Checks that `keyPath` leads from `entity` to one attribute value per object.
    public func validateKeyPath(_ keyPath: String, for entity: EntityDescription) throws {
        _ = try keyPathSQL(keyPath, of: entity, alias: "t0")
    }

    static func sectionName(of value: DatabaseValue, type: AttributeType?) -> String {
        if type == .date, case .date(let date) = Value(databaseValue: value, type: .date) {
            return Date.dayString(date)
        }
        switch value.storage {
        case .null: return ""
        case .int64(let v): return String(v)
        case .double(let v): return String(v)
        case .string(let v): return v
        case .blob(let v): return v.base64EncodedString()
        }
    }

    private func resolvedKeyPath(_ keyPath: String, of entity: EntityDescription) throws -> ResolvedKeyPath {
        try ResolvedKeyPath.resolve(keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init), from: entity, in: model)
    }

    private func keyPathSQL(_ keyPath: String, of entity: EntityDescription, alias: String) throws -> String {
        let path = try resolvedKeyPath(keyPath, of: entity)
        try path.checkScalar()
        guard path.valueType != nil else {
            throw FetchPredicateError(.keyPath, "'\(keyPath)' is a relationship; use one of its attributes, as in \(keyPath).name")
        }
        var compiler = PredicateSQLCompiler(model: model, alias: alias)
        return compiler.scalar(path, alias: alias)
    }
}

/// One column's value in the previous row of a statement, kept as SQLite's bytes, so that the
/// same value in the next row is recognized without making a String or Data.
private struct PreviousColumnValue {
    /// The value, as a DatabaseValue: made once per new value.
    private(set) var value: DatabaseValue = .null
    private var type: CInt = -1   // no row yet
    private var bytes: [UInt8] = []

    /// Whether column `index` of the statement's current row holds the previous row's
    /// value; when it does not, it becomes the value remembered.
    mutating func isRepeated(in statement: SQLiteStatement, at index: CInt) -> Bool {
        let type = sqlite3_column_type(statement, index)
        if type == self.type {
            switch type {
            case SQLITE_NULL:
                return true
            case SQLITE_TEXT, SQLITE_BLOB:
                let current = Self.bytes(in: statement, at: index, type: type)
                if current.count == bytes.count && (current.isEmpty || bytes.withUnsafeBytes { memcmp($0.baseAddress!, current.baseAddress!, current.count) == 0 }) {
                    return true
                }
            default:
                if DatabaseValue(sqliteStatement: statement, index: index) == value { return true }
            }
        }
        self.type = type
        value = DatabaseValue(sqliteStatement: statement, index: index)
        bytes = type == SQLITE_TEXT || type == SQLITE_BLOB ? Array(Self.bytes(in: statement, at: index, type: type)) : []
        return false
    }

    /// The bytes of a TEXT or BLOB column, valid until the statement steps.
    private static func bytes(in statement: SQLiteStatement, at index: CInt, type: CInt) -> UnsafeRawBufferPointer {
        // The pointer first, then the size, as SQLite documents.
        let start = type == SQLITE_TEXT ? UnsafeRawPointer(sqlite3_column_text(statement, index)) : sqlite3_column_blob(statement, index)
        return UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : Int(sqlite3_column_bytes(statement, index)))
    }
}


/// A fetch of row keys and section runs, made on a context's queue, run on any thread
/// against the store's saved data (a reader of its pool, beside the writer and the others).
package struct RowKeysQuery: Sendable {
    let store: PersistentStore
    let sql: SQL
    let isSectioned: Bool
    let sectionType: AttributeType?

    /// Runs the query in a read transaction of its own. Cancelling the task interrupts it
    /// (GRDB interrupts the reader's statement) and it throws `CancellationError`.
    package func run() async throws -> SectionedRowKeys {
        try await store.database.read { db in try rowKeys(in: db) }
    }

    /// Runs the query as ``run()`` does, with the store's history token its read saw: the
    /// rows are those of the data a context holds once its
    /// ``ObjectContext/mergedHistoryToken`` is that token (less its unsaved changes).
    package func runWithHistoryToken() async throws -> (rows: SectionedRowKeys, token: Int64) {
        try await store.database.read { db in (try rowKeys(in: db), try PersistentStore.currentToken(db)) }
    }

    func rowKeys(in db: Database) throws -> SectionedRowKeys {
        guard isSectioned else {
            let keys = try Int64.fetchAll(db, SQLRequest<Int64>(literal: sql))
            return SectionedRowKeys(rowKeys: keys, sections: keys.isEmpty ? [] : [.init(name: "", count: keys.count)])
        }
        var result = SectionedRowKeys(rowKeys: [], sections: [])
        // Read through SQLite's own buffers: a DatabaseValue (a String) for every row
        // doubled the time of a million-row fetch; only a new run makes one.
        let statement = try db.makeStatement(literal: sql)
        let row = statement.sqliteStatement
        var previous = PreviousColumnValue()
        let rows = try Row.fetchCursor(statement)
        while try rows.next() != nil {
            result.rowKeys.append(sqlite3_column_int64(row, 0))
            if previous.isRepeated(in: row, at: 1) {
                result.sections[result.sections.count - 1].count += 1
                continue
            }
            let name = ObjectContext.sectionName(of: previous.value, type: sectionType)
            if result.sections.last?.name == name {
                // Dates group by day: another time of the same day.
                result.sections[result.sections.count - 1].count += 1
            } else {
                result.sections.append(.init(name: name, count: 1))
            }
        }
        return result
    }
}


/// A fetch of row keys and section runs in two halves by the value the results are sorted
/// by first, run at once on two readers of the store's pool: on two cores, a search that
/// reads a million rows through a function shows in about half the time.
package struct SplitRowKeysQuery: Sendable {
    let halves: (RowKeysQuery, RowKeysQuery)

    /// Runs both halves at once, each in a read transaction of its own, and joins them.
    /// When a commit came between their transactions (the store's history moved on), the
    /// halves may not fit together: `whole`, the same fetch in one query, runs instead.
    /// Cancelling the task interrupts both halves (see ``RowKeysQuery/run()``).
    package func run(orElse whole: RowKeysQuery) async throws -> SectionedRowKeys {
        let read = { @Sendable (query: RowKeysQuery) async throws -> (token: Int64, rows: SectionedRowKeys) in
            try await query.store.database.read { db in (try PersistentStore.currentHistoryToken(in: db), try query.rowKeys(in: db)) }
        }
        async let firstHalf = read(halves.0)
        async let secondHalf = read(halves.1)
        let (first, second) = try await (firstHalf, secondHalf)
        guard first.token == second.token else { return try await whole.run() }
        var joined = first.rows
        joined.rowKeys += second.rows.rowKeys
        for run in second.rows.sections {
            if joined.sections.last?.name == run.name {
                joined.sections[joined.sections.count - 1].count += run.count
            } else {
                joined.sections.append(run)
            }
        }
        return joined
    }
}
