import Foundation
import GRDB

/// How a model maps to SQLite tables: one table per entity named after it, with the
/// integer primary key ``primaryKey``, one column per attribute named after it, and one
/// column per to-one relationship that stores its key (see ``Model/storesForeignKey(_:of:)``),
/// named after the relationship and holding the destination's primary key.
enum Schema {
    /// The primary key column of every entity table.
    static let primaryKey = "Z_PK"

    /// The columns of an entity's table besides the primary key: attributes, then keys.
    static func columns(of entity: EntityDescription, in model: Model) -> [(name: String, sqlType: String)] {
        entity.attributes.map { ($0.name, $0.type.sqlType) }
            + entity.relationships.filter { model.storesForeignKey($0, of: entity) }.map { ($0.name, "INTEGER") }
    }

    /// The statement that creates an entity's table.
    static func createTableSQL(for entity: EntityDescription, in model: Model) -> String {
        let columns = ["\(primaryKey) INTEGER PRIMARY KEY AUTOINCREMENT"]
            + Schema.columns(of: entity, in: model).map { "\($0.name.quotedDatabaseIdentifier) \($0.sqlType)" }
        return "CREATE TABLE \(entity.name.quotedDatabaseIdentifier) (\(columns.joined(separator: ", ")))"
    }

    /// The table of change history: one row per inserted, updated or deleted row of an
    /// entity, with an increasing token (see ``PersistentStore/changes(since:)``), the
    /// entity's number in ``entityTable``, the row's key and a ``HistoryKind``.
    ///
    /// Every row of a bulk write adds one, so the table is kept cheap to append to: numbers
    /// rather than names (the first entity's number, 1, and the kinds of inserts and updates,
    /// 0 and 1, take no bytes of a record at all), and no `NOT NULL`, whose possible abort
    /// has SQLite copy every existing page a statement changes into a statement journal
    /// first. `AUTOINCREMENT` stays: a token is never handed out again, not even after the
    /// history was pruned empty, and it costs one read and one write of `sqlite_sequence` a
    /// statement, not a row.
    static let historyTable = "Z_HISTORY"

    /// The history's table. An update also records which columns it changed
    /// (``changedColumnsColumn``), so that a list whose order, sections and predicate read
    /// none of them knows, without reading the row, that the object stayed where it was.
    static let createHistoryTableSQL = "CREATE TABLE IF NOT EXISTS \(historyTable) "
        + "(token INTEGER PRIMARY KEY AUTOINCREMENT, entity INTEGER, rowKey INTEGER, kind INTEGER, \(changedColumnsColumn) INTEGER)"

    /// The history's column of the columns an update changed: bit `n` set when the column
    /// whose `cid` (`PRAGMA table_info`) is `n` changed (`IS NOT`), NULL when not known (an
    /// insert or delete, a table of more than ``maskedColumns`` columns, a row recorded
    /// before its entity's triggers were last installed, or by triggers older than it).
    static let changedColumnsColumn = "columns"

    /// The columns a mask can name: a column past them makes every update's mask NULL.
    static let maskedColumns = 62

    /// What a row of the history records.
    enum HistoryKind: Int64 {
        case insert = 0, update = 1, delete = 2
    }

    /// The entities' numbers in the history (Core Data's `Z_ENT`): given in the order the
    /// entities came into the store, and kept, since an entity is never removed.
    static let entityTable = "Z_ENTITY"

    static let createEntityTableSQL = "CREATE TABLE IF NOT EXISTS \(entityTable) (Z_ENT INTEGER PRIMARY KEY, Z_NAME TEXT NOT NULL UNIQUE)"

    /// The entities of the history, by number.
    static func entitiesByNumber(in db: Database, model: Model) throws -> [Int64: EntityDescription] {
        var entities: [Int64: EntityDescription] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT Z_ENT, Z_NAME FROM \(entityTable)")) {
            entities[row[0]] = model.entity(named: row[1])
        }
        return entities
    }

    /// Replaces an entity's triggers by those that record its changes in the history,
    /// numbering the entity first if it has no number yet.
    ///
    /// The update trigger names the table's columns as they are now (a column added since
    /// would go unrecorded, so every migration installs them again), and the entity's
    /// updates recorded before are marked as of unknown columns: a column's `cid` is what
    /// their masks count by, and a table made again may number its columns otherwise.
    static func installTriggers(for entity: EntityDescription, in db: Database) throws {
        let number = try self.number(of: entity, in: db)
        let columns = try db.columns(in: entity.name).map(\.name)
        for statement in dropTriggerSQL(for: entity) + createTriggerSQL(for: entity, number: number, columns: columns) {
            try db.execute(sql: statement)
        }
        try db.execute(sql: "UPDATE \(historyTable) SET \(changedColumnsColumn) = NULL WHERE entity = ? AND \(changedColumnsColumn) IS NOT NULL",
                       arguments: [number])
    }

    /// The SQL expression of an update trigger that gives the mask of the columns it changed
    /// (see ``changedColumnsColumn``), `columns` being the table's names in `cid` order
    /// (GRDB's `columns(in:)`, the key among them).
    static func changedColumnsMask(of columns: [String]) -> String {
        guard columns.count <= maskedColumns else { return "NULL" }
        let terms = columns.enumerated().filter { $0.element != primaryKey }.map { cid, column in
            "(NEW.\(column.quotedDatabaseIdentifier) IS NOT OLD.\(column.quotedDatabaseIdentifier)) * \(Int64(1) << Int64(cid))"
        }
        return terms.isEmpty ? "0" : terms.joined(separator: " + ")
    }

    /// The names of the columns `mask` sets, `columns` being the table's in `cid` order.
    static func changedColumns(_ mask: Int64, of columns: [String]) -> Set<String> {
        Set(columns.prefix(maskedColumns).enumerated().lazy.filter { mask & (Int64(1) << Int64($0.offset)) != 0 }.map(\.element))
    }

    /// The number of `entity` in the history, given to it now if it has none.
    @discardableResult
    static func number(of entity: EntityDescription, in db: Database) throws -> Int64 {
        try db.execute(sql: "INSERT OR IGNORE INTO \(entityTable) (Z_NAME) VALUES (?)", arguments: [entity.name])
        return try Int64.fetchOne(db, sql: "SELECT Z_ENT FROM \(entityTable) WHERE Z_NAME = ?", arguments: [entity.name]) ?? 0
    }

    /// The triggers that record every committed change of an entity's rows in the history,
    /// whoever writes them (another process, the `sqlite3` shell). One row a change and
    /// nothing else: the store's `generation` is read from the history's sequence
    /// (``PersistentStore/generation()``), so a bulk write pays for one insert a row, not an
    /// update of a shared counter too.
    private static func createTriggerSQL(for entity: EntityDescription, number: Int64, columns: [String]) -> [String] {
        let table = entity.name.quotedDatabaseIdentifier
        let record = { (row: String, kind: HistoryKind) in
            "INSERT INTO \(historyTable) (entity, rowKey, kind) VALUES (\(number), \(row).\(primaryKey), \(kind.rawValue));"
        }
        let recordUpdate = "INSERT INTO \(historyTable) (entity, rowKey, kind, \(changedColumnsColumn)) "
            + "VALUES (\(number), NEW.\(primaryKey), \(HistoryKind.update.rawValue), \(changedColumnsMask(of: columns)));"
        return [("INSERT", record("NEW", .insert)), ("UPDATE", recordUpdate), ("DELETE", record("OLD", .delete))].map { event, body in
            "CREATE TRIGGER \(triggerName(for: entity, event: event).quotedDatabaseIdentifier) AFTER \(event) ON \(table) BEGIN \(body) END"
        } + [
            // A row given another key (`UPDATE … SET Z_PK = …`, which only another program
            // writes) is the old key's row deleted and the new one's inserted. This trigger
            // fires only for updates that name the key column: others pay nothing for it.
            "CREATE TRIGGER \(triggerName(for: entity, event: "key").quotedDatabaseIdentifier) AFTER UPDATE OF \(primaryKey) ON \(table) "
                + "WHEN OLD.\(primaryKey) IS NOT NEW.\(primaryKey) BEGIN \(record("OLD", .delete)) \(record("NEW", .insert)) END",
        ]
    }

    /// The store's generation: the count kept by earlier triggers (fixed since) plus the
    /// history's last token, which grows with every change and is never handed out again.
    static let generationSQL = "SELECT (SELECT CAST(value AS INTEGER) FROM \(PersistentStore.metadataTable) WHERE key = 'generation') "
        + "+ IFNULL((SELECT seq FROM sqlite_sequence WHERE name = '\(historyTable)'), 0)"

    /// The statements that drop an entity's history triggers.
    static func dropTriggerSQL(for entity: EntityDescription) -> [String] {
        ["INSERT", "UPDATE", "DELETE", "KEY"].map { "DROP TRIGGER IF EXISTS \(triggerName(for: entity, event: $0).quotedDatabaseIdentifier)" }
    }

    private static func triggerName(for entity: EntityDescription, event: String) -> String {
        "Z_\(entity.name)_\(event.lowercased())"
    }

    /// The name of an index: its own, or one derived from the entity and properties.
    static func indexName(_ index: IndexDescription, of entity: EntityDescription) -> String {
        index.name ?? "Z_\(entity.name)_" + index.elements.map { ($0.ascending ? "" : "desc_") + $0.property }.joined(separator: "_")
    }

    /// The statements that create an entity's indexes: the model's own, plus one on every
    /// key column so that to-many relationships and delete rules find related rows fast.
    static func createIndexSQL(for entity: EntityDescription, in model: Model) -> [(name: String, sql: String)] {
        let table = entity.name.quotedDatabaseIdentifier
        var statements = entity.indexes.map { index -> (String, String) in
            let name = indexName(index, of: entity)
            let columns = index.elements.map { $0.property.quotedDatabaseIdentifier + ($0.ascending ? "" : " DESC") }
            return (name, "CREATE INDEX \(name.quotedDatabaseIdentifier) ON \(table)(\(columns.joined(separator: ", ")))")
        }
        for relationship in entity.relationships where model.storesForeignKey(relationship, of: entity) {
            let name = "Z_\(entity.name)_\(relationship.name)_key"
            statements.append((name, "CREATE INDEX \(name.quotedDatabaseIdentifier) ON \(table)(\(relationship.name.quotedDatabaseIdentifier))"))
        }
        return statements
    }
}
