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
    /// entity, with an increasing token (see ``PersistentStore/changes(since:)``).
    static let historyTable = "Z_HISTORY"

    static let createHistoryTableSQL = "CREATE TABLE IF NOT EXISTS \(historyTable) "
        + "(token INTEGER PRIMARY KEY AUTOINCREMENT, entity TEXT NOT NULL, rowKey INTEGER NOT NULL, kind TEXT NOT NULL)"

    /// The triggers that record every committed change of an entity's rows in the history,
    /// whoever writes them (another process, the `sqlite3` shell). One row a change and
    /// nothing else: the store's `generation` is read from the history's sequence
    /// (``PersistentStore/generation()``), so a bulk write pays for one insert a row, not an
    /// update of a shared counter too (100,000 rows: about 1.3× the write without
    /// triggers, where the counter made it about 1.8×).
    static func createTriggerSQL(for entity: EntityDescription) -> [String] {
        let name = "'\(entity.name.replacingOccurrences(of: "'", with: "''"))'"
        let table = entity.name.quotedDatabaseIdentifier
        let record = { (row: String, kind: String) in "INSERT INTO \(historyTable) (entity, rowKey, kind) VALUES (\(name), \(row).\(primaryKey), '\(kind)');" }
        return ["INSERT", "UPDATE", "DELETE"].map { event in
            "CREATE TRIGGER \(triggerName(for: entity, event: event).quotedDatabaseIdentifier) AFTER \(event) ON \(table) "
                + "BEGIN \(record(event == "DELETE" ? "OLD" : "NEW", event.lowercased())) END"
        } + [
            // A row given another key (`UPDATE … SET Z_PK = …`, which only another program
            // writes) is the old key's row deleted and the new one's inserted. This trigger
            // fires only for updates that name the key column: others pay nothing for it.
            "CREATE TRIGGER \(triggerName(for: entity, event: "key").quotedDatabaseIdentifier) AFTER UPDATE OF \(primaryKey) ON \(table) "
                + "WHEN OLD.\(primaryKey) IS NOT NEW.\(primaryKey) BEGIN \(record("OLD", "delete")) \(record("NEW", "insert")) END",
        ]
    }

    /// The store's generation: the count kept by earlier triggers (fixed since) plus the
    /// history's last token, which grows with every change and is never handed out again.
    static let generationSQL = "SELECT (SELECT CAST(value AS INTEGER) FROM \(PersistentStore.metadataTable) WHERE key = 'generation') "
        + "+ IFNULL((SELECT seq FROM sqlite_sequence WHERE name = '\(historyTable)'), 0)"

    /// The statements that replace an entity's triggers by those of ``createTriggerSQL(for:)``.
    static func replaceTriggerSQL(for entity: EntityDescription) -> [String] {
        ["INSERT", "UPDATE", "DELETE", "KEY"].map { "DROP TRIGGER IF EXISTS \(triggerName(for: entity, event: $0).quotedDatabaseIdentifier)" }
            + createTriggerSQL(for: entity)
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
