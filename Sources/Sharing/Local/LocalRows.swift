import Foundation
import GRDB
import ObjectStore

/// Reads and writes a store's rows in the server's terms (see ``RowImage``): to-one
/// relationships as the destination's global ID instead of its local key.
///
/// Writes go through SQL like any other writer's, inside the caller's transaction, so the
/// store's history records them and every context following the store (a controller, a
/// `watch`) sees each transaction as one batch.
struct LocalRows: Sendable {
    let model: Model
    /// Each entity's insert of every column (``columns(of:)``), by entity name: a join
    /// inserts a row for every object of the server, each with every column.
    private let insertsOfEveryColumn: [String: String]
    /// ``columns(of:)`` of each entity, by name.
    private let columnsByEntity: [String: [String]]

    init(model: Model) {
        self.model = model
        var inserts: [String: String] = [:], columns: [String: [String]] = [:]
        for entity in model.entities {
            let names = Self.columns(of: entity, model: model)
            columns[entity.name] = names
            guard !names.isEmpty else { continue }
            inserts[entity.name] = "INSERT INTO \(entity.name.quotedDatabaseIdentifier) (\(names.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", ")))"
        }
        insertsOfEveryColumn = inserts
        columnsByEntity = columns
    }

    /// The attribute and stored to-one relationship names of `entity`, as the local table's
    /// columns are named.
    func columns(of entity: EntityDescription) -> [String] { columnsByEntity[entity.name] ?? Self.columns(of: entity, model: model) }

    private static func columns(of entity: EntityDescription, model: Model) -> [String] {
        var names: [String] = []
        for attribute in entity.attributes { names.append(attribute.name) }
        for relationship in foreignKeys(of: entity, model: model) { names.append(relationship.name) }
        return names
    }

    func foreignKeys(of entity: EntityDescription) -> [RelationshipDescription] { Self.foreignKeys(of: entity, model: model) }

    private static func foreignKeys(of entity: EntityDescription, model: Model) -> [RelationshipDescription] {
        entity.relationships.filter { model.storesForeignKey($0, of: entity) }
    }

    /// The row keys of every row of `entity`.
    func allKeys(of entity: EntityDescription, in db: Database) throws -> [Int64] {
        try Int64.fetchAll(db, sql: "SELECT Z_PK FROM \(entity.name.quotedDatabaseIdentifier)")
    }

    /// The rows `keys` of `entity` that exist, in server terms. A destination that has no
    /// global ID yet is given one (it is pushed in the same push, or was saved before sharing
    /// began); a relationship waiting for an object not pulled yet reads as that object's ID.
    ///
    /// Many keys are read a few hundred a statement (`Z_PK IN (…)`): a push's pass and a
    /// pulled page read a thousand rows, and a statement a row cost more than the rows.
    func values(of entity: EntityDescription, keys: [Int64], in db: Database) throws -> [Int64: [String: Value]] {
        var result: [Int64: [String: Value]] = [:]
        result.reserveCapacity(keys.count)
        let select = (["Z_PK"] + columns(of: entity)).map(\.quotedDatabaseIdentifier).joined(separator: ", ")
        let foreignKeys = foreignKeys(of: entity)
        try db.forEachRow(matching: keys, sql: { "SELECT \(select) FROM \(entity.name.quotedDatabaseIdentifier) WHERE Z_PK IN (\($0))" }) { row in
            let key: Int64 = row[0]
            var values: [String: Value] = [:]
            values.reserveCapacity(entity.attributes.count + foreignKeys.count)
            for (index, attribute) in entity.attributes.enumerated() {
                values[attribute.name] = Value(databaseValue: row[index + 1], type: attribute.type)
            }
            for (offset, relationship) in foreignKeys.enumerated() {
                let index = 1 + entity.attributes.count + offset
                if let destinationKey: Int64 = row[index] {
                    let id = try GlobalIDs.assignedGlobalID(entity: relationship.destinationEntity, rowKey: destinationKey, in: db)
                    values[relationship.name] = .string(id.uuidString.lowercased())
                } else if let target = try pendingReference(entity: entity.name, rowKey: key, relationship: relationship.name, in: db) {
                    values[relationship.name] = .string(target.uuidString.lowercased())
                } else {
                    values[relationship.name] = .null
                }
            }
            result[key] = values
        }
        return result
    }

    /// Whether `entity` has a row `key`.
    func exists(_ entity: EntityDescription, key: Int64, in db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM \(entity.name.quotedDatabaseIdentifier) WHERE Z_PK = ?)"), arguments: [key]) ?? false
    }

    /// Inserts a row with `values` and returns its key.
    func insert(_ entity: EntityDescription, values: [String: Value], in db: Database) throws -> Int64 {
        // Built by hand, not with key paths and `map`: a join inserts a row for every object
        // of the server, and the generic calls cost more than SQLite's insert.
        let columns = columns(of: entity)
        var names = ""
        var placeholders = ""
        var arguments: [DatabaseValue] = []
        arguments.reserveCapacity(columns.count)
        var pending: [(name: String, target: UUID)] = []
        for name in columns {
            guard let value = values[name] else { continue }
            let resolved = try databaseValue(value, of: name, entity: entity, rowKey: nil, in: db)
            arguments.append(resolved.value)
            if let target = resolved.pending { pending.append((name, target)) }
        }
        if arguments.isEmpty {
            try db.execute(sql: "INSERT INTO \(entity.name.quotedDatabaseIdentifier) DEFAULT VALUES")
            return db.lastInsertedRowID
        }
        // Cached: a join inserts thousands of rows with the same columns, most often all.
        let sql: String
        if arguments.count == columns.count, let everyColumn = insertsOfEveryColumn[entity.name] {
            sql = everyColumn
        } else {
            for name in columns where values[name] != nil {
                if !names.isEmpty { names += ", "; placeholders += ", " }
                names += name.quotedDatabaseIdentifier
                placeholders += "?"
            }
            sql = "INSERT INTO \(entity.name.quotedDatabaseIdentifier) (\(names)) VALUES (\(placeholders))"
        }
        try db.cachedStatement(sql: sql).execute(binding: arguments)
        let key = db.lastInsertedRowID
        for (name, target) in pending {
            try setPendingReference(entity: entity.name, rowKey: key, relationship: name, target: target, in: db)
        }
        return key
    }

    /// Whether `values` holds every column of `entity` and `entity` stores no relationship:
    /// a row ``insert(_:rows:in:)`` takes.
    func holdsEveryColumn(_ values: [String: Value], of entity: EntityDescription) -> Bool {
        let columns = columns(of: entity)
        return values.count >= columns.count && !columns.isEmpty && foreignKeys(of: entity).isEmpty && columns.allSatisfy { values[$0] != nil }
    }

    /// Inserts `rows`, each with every column of `entity` (``holdsEveryColumn(_:of:)``), a
    /// hundred a statement, and returns their keys in order.
    ///
    /// The rows of one statement take consecutive keys: the table's key is an
    /// `AUTOINCREMENT` one, which SQLite gives one row after another, each one above the
    /// largest the table ever had, and the store's one writer inserts nothing in between.
    func insert(_ entity: EntityDescription, rows: [[String: Value]], in db: Database) throws -> [Int64] {
        let columns = columns(of: entity)
        var keys: [Int64] = []
        keys.reserveCapacity(rows.count)
        try db.insertRows(rows, into: entity.name.quotedDatabaseIdentifier, columns: columns.map(\.quotedDatabaseIdentifier), rowsPerStatement: 100,
                          values: { values, arguments in for name in columns { arguments.append(values[name]!.databaseValue) } },
                          inserted: { count in
            guard db.changesCount == count else {
                // Nothing of the page is kept: its transaction rolls back, and the next round takes it again.
                throw DatabaseError(resultCode: .SQLITE_ERROR, message: "a statement inserted \(db.changesCount) rows of \(count) into \(entity.name); nothing of this page of server rows was saved, and the next round takes the page again")
            }
            let last = db.lastInsertedRowID
            keys += (last - Int64(count) + 1)...last
        })
        return keys
    }

    /// New values of some columns of one row, as its table stores them: made by
    /// ``rowUpdate(_:key:values:in:)``, written with others by ``update(_:rows:in:)``.
    struct RowUpdate {
        var key: Int64
        /// The columns set, sorted: the updates that set the same ones share statements.
        var columns: [String]
        var values: [DatabaseValue]
    }

    /// The update of the columns of `values` of the row `key`, or nil when `values` is
    /// empty. Its relationships are resolved now, as an insert's are: one to an object the
    /// store does not have is set to NULL and waits for it (``resolveReferences(to:key:in:)``),
    /// so write the update before the objects inserted meanwhile resolve theirs.
    func rowUpdate(_ entity: EntityDescription, key: Int64, values: [String: Value], in db: Database) throws -> RowUpdate? {
        guard !values.isEmpty else { return nil }
        let names = values.keys.sorted()
        var arguments: [DatabaseValue] = []
        arguments.reserveCapacity(names.count)
        for name in names {
            let resolved = try databaseValue(values[name]!, of: name, entity: entity, rowKey: key, in: db)
            arguments.append(resolved.value)
            if let target = resolved.pending {
                try setPendingReference(entity: entity.name, rowKey: key, relationship: name, target: target, in: db)
            }
        }
        return RowUpdate(key: key, columns: names, values: arguments)
    }

    /// Writes `updates` of rows of `entity`, each row at most once: those that set the same
    /// columns a hundred rows a statement (`UPDATE … FROM (VALUES …)`, which looks each row
    /// up by its key). A pulled page changes up to a thousand rows: a statement a row cost
    /// the desktop more than SQLite's work on the rows (a statement's start and end, its
    /// arguments, GRDB's checks), and five desktops following a firehose share two cores.
    func update(_ entity: EntityDescription, rows updates: [RowUpdate], in db: Database) throws {
        let table = entity.name.quotedDatabaseIdentifier
        var byColumns: [[String]: [RowUpdate]] = [:]
        for update in updates { byColumns[update.columns, default: []].append(update) }
        for (columns, rows) in byColumns {
            try db.updateRows(rows, of: table, columns: columns.map(\.quotedDatabaseIdentifier), rowsPerStatement: max(1, min(100, 900 / (columns.count + 1)))) { row, arguments in
                arguments.append(row.key.databaseValue)
                arguments += row.values
            }
        }
    }

    func delete(_ entity: EntityDescription, key: Int64, in db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM \(entity.name.quotedDatabaseIdentifier) WHERE Z_PK = ?").execute(arguments: [key])
        try db.cachedStatement(sql: "DELETE FROM \(SharingState.referenceTable) WHERE entity = ? AND rowKey = ?").execute(arguments: [entity.name, key])
    }

    /// Rows that waited for the object `id`, which now has the row `key`: their relationships
    /// are set.
    func resolveReferences(to id: UUID, key: Int64, in db: Database) throws {
        let waiting = try Row.fetchAll(db.cachedStatement(sql: "SELECT entity, rowKey, relationship FROM \(SharingState.referenceTable) WHERE target = ?"),
                                       arguments: [id.bytes])
        guard !waiting.isEmpty else { return }
        for row in waiting {
            let entityName: String = row[0], rowKey: Int64 = row[1], relationship: String = row[2]
            guard model.entity(named: entityName) != nil else { continue }
            try db.execute(sql: "UPDATE \(entityName.quotedDatabaseIdentifier) SET \(relationship.quotedDatabaseIdentifier) = ? WHERE Z_PK = ?",
                           arguments: [key, rowKey])
        }
        try db.cachedStatement(sql: "DELETE FROM \(SharingState.referenceTable) WHERE target = ?").execute(arguments: [id.bytes])
    }

    /// A value in server terms as the local column stores it; a relationship to an object
    /// the store does not have yet is stored as NULL and its global ID returned as pending.
    private func databaseValue(_ value: Value, of name: String, entity: EntityDescription, rowKey: Int64?, in db: Database) throws -> (value: DatabaseValue, pending: UUID?) {
        guard let relationship = entity.relationship(named: name) else { return (value.databaseValue, nil) }
        if let rowKey {
            try db.cachedStatement(sql: "DELETE FROM \(SharingState.referenceTable) WHERE entity = ? AND rowKey = ? AND relationship = ?")
                .execute(arguments: [entity.name, rowKey, name])
        }
        guard case .string(let text) = value, let id = UUID(uuidString: text) else { return (.null, nil) }
        if let object = try GlobalIDs.object(for: id, in: db), object.entityName == relationship.destinationEntity,
           let destination = model.entity(named: object.entityName), try exists(destination, key: object.rowKey, in: db) {
            return (object.rowKey.databaseValue, nil)
        }
        return (.null, id)
    }

    private func pendingReference(entity: String, rowKey: Int64, relationship: String, in db: Database) throws -> UUID? {
        let bytes = try Data.fetchOne(db.cachedStatement(sql: "SELECT target FROM \(SharingState.referenceTable) WHERE entity = ? AND rowKey = ? AND relationship = ?"),
                                      arguments: [entity, rowKey, relationship])
        return bytes.flatMap(UUID.init(bytes:))
    }

    private func setPendingReference(entity: String, rowKey: Int64, relationship: String, target: UUID, in db: Database) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(SharingState.referenceTable) (entity, rowKey, relationship, target) VALUES (?, ?, ?, ?)")
            .execute(arguments: [entity, rowKey, relationship, target.bytes])
    }
}
