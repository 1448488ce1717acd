import GRDB

extension ObjectContext {
    /// The current value of an attribute: the unsaved one, or the saved one (loading a fault).
    func attributeValue(of object: ManagedObject, key: String) throws -> Value {
        guard object.entity.attribute(named: key) != nil else { throw ContextError.unknownKey(key, in: object.entity) }
        switch try storedValue(of: object, key: key) {
        case .attribute(let value)?: return value
        default: return .null
        }
    }

    /// The current stored value of an attribute or a key-owning to-one relationship.
    func storedValue(of object: ManagedObject, key: String) throws -> StoredValue? {
        if let value = object.changes[key] { return value }
        if object.isFault { try fulfillFaults([object]) }
        return object.committed?[key]
    }

    func setAttribute(_ value: Value, of object: ManagedObject, key: String) throws {
        preconditionOnQueue("setValue(_:forKey:)")
        try setStored(.attribute(value), of: object, key: key)
    }

    /// Records a change of one stored value, with the old value kept for observers and
    /// ``ManagedObject/committedValues(forKeys:)``, and the saved value the change started
    /// from kept for the save's conflict check.
    func setStored(_ value: StoredValue, of object: ManagedObject, key: String) throws {
        guard object.managedObjectContext === self else {
            throw ContextError(.unavailableObject, objectID: object.objectID, "\(object.objectID) does not belong to this context")
        }
        guard !object.isDeleted else {
            throw ContextError(.unavailableObject, objectID: object.objectID, "\(object.objectID) was deleted; it cannot be changed")
        }
        let current = try storedValue(of: object, key: key)
        if current == value { return }
        // A counter's change is undone when it is back at the value it started from (a merge
        // may have reloaded the saved value meanwhile: a tap landing on it still adds one).
        let unchanged = object.entity.attribute(named: key)?.isCounter == true ? object.changeBases[key] ?? object.committed?[key] : object.committed?[key]
        if !object.isInserted && unchanged == value {
            object.changes[key] = nil
            object.changeBases[key] = nil
        } else {
            if !object.isInserted && object.changes[key] == nil, let base = object.committed?[key] {
                object.changeBases[key] = base
            }
            object.changes[key] = value
        }
        if object.changes.isEmpty && !object.isInserted {
            changedObjects.remove(object)
        } else {
            changedObjects.insert(object)
        }
        unprocessed.updatedKeys[object, default: []].insert(key)
        scheduleProcessing()
    }

    // MARK: Loading values

    /// The columns read for an entity's objects, after the primary key.
    func columns(of entity: EntityDescription) -> [(key: String, read: (DatabaseValue) -> StoredValue)] {
        var columns: [(String, (DatabaseValue) -> StoredValue)] = entity.attributes.map { attribute in
            (attribute.name, { .attribute(Value(databaseValue: $0, type: attribute.type)) })
        }
        for relationship in entity.relationships where model.storesForeignKey(relationship, of: entity) {
            let destination = relationship.destinationEntity
            columns.append((relationship.name, { value in
                guard let pk = Int64.fromDatabaseValue(value) else { return .object(nil) }
                return .object(ObjectID(entityName: destination, sqlKey: pk))
            }))
        }
        return columns
    }

    /// `t0."a", t0."b", ...` for the entity's columns.
    func columnList(of entity: EntityDescription, alias: String) -> String {
        columns(of: entity).map { "\(alias).\($0.key.quotedDatabaseIdentifier)" }.joined(separator: ", ")
    }

    /// Sets an object's saved values from a row that starts with the primary key; `columns`
    /// are ``columns(of:)`` of its entity, made once for many rows.
    func load(_ row: Row, into object: ManagedObject, columns: [(key: String, read: (DatabaseValue) -> StoredValue)]) {
        object.committed = storedValues(of: row, columns: columns)
    }

    /// The values of a row that starts with the primary key, by key.
    func storedValues(of row: Row, columns: [(key: String, read: (DatabaseValue) -> StoredValue)]) -> [String: StoredValue] {
        var values: [String: StoredValue] = Dictionary(minimumCapacity: columns.count)
        for (index, column) in columns.enumerated() {
            values[column.key] = column.read(row[index + 1])
        }
        return values
    }

    /// Loads the saved values of faults, one query for all of them (per entity). An object
    /// whose row is gone stays a fault.
    package func fulfillFaults(_ objects: [ManagedObject]) throws {
        let faults = objects.filter { $0.isFault && $0.objectID.primaryKey != nil }
        guard !faults.isEmpty else { return }
        for group in Dictionary(grouping: faults, by: \.entity.name).values {
            let entity = group[0].entity
            let columns = columns(of: entity)
            let byKey = Dictionary(group.map { ($0.objectID.sqlKey, $0) }) { a, _ in a }
            let rows = try store.database.read { db in try self.rows(of: entity, keys: Array(byKey.keys), in: db) }
            for row in rows {
                if let object = byKey[row[0]] { load(row, into: object, columns: columns) }
            }
        }
    }

    /// The rows of `entity` whose primary keys are `keys` (in no particular order; missing
    /// rows are left out), each the primary key then ``columns(of:)``.
    func rows(of entity: EntityDescription, keys: [Int64], in db: Database) throws -> [Row] {
        var rows: [Row] = []
        try forEachRow(of: entity, keys: keys, columns: columnList(of: entity, alias: "t0"), in: db) { rows.append($0.copy()) }
        return rows
    }

    /// Calls `body` with each row of `entity` whose primary key is in `keys` (in no
    /// particular order; missing rows are left out): the primary key, then `columns` (SQL
    /// for `FROM "Entity" t0`). The row is valid only during the call.
    func forEachRow(of entity: EntityDescription, keys: [Int64], columns: String, in db: Database, _ body: (Row) throws -> Void) throws {
        try Self.forEachRow(of: entity, keys: keys, columns: columns, in: db, body)
    }

    /// ``forEachRow(of:keys:columns:in:_:)``, which reads nothing of a context.
    static func forEachRow(of entity: EntityDescription, keys: [Int64], columns: String, in db: Database, _ body: (Row) throws -> Void) throws {
        try db.forEachRow(matching: keys, valuesPerStatement: 1024, sql: {
            "SELECT t0.\(Schema.primaryKey), \(columns) FROM \(entity.name.quotedDatabaseIdentifier) t0 WHERE t0.\(Schema.primaryKey) IN (\($0))"
        }, body)
    }

    // MARK: Writing changes

    /// Writes the changes of `objects` into `db`. With `temporaryKeys`, inserted rows get
    /// negative keys (``ObjectID/sqlKey``) so that a query in a transaction that is then
    /// rolled back sees exactly the context's state; otherwise they get new primary keys,
    /// returned by temporary ID. The keys `leavingOut` names for an updated object are not
    /// written (a save under ``MergePolicy/storeWins`` keeps the store's values there).
    func writeChanges(
        of objects: Set<ManagedObject>, to db: Database, temporaryKeys: Bool, leavingOut: [ManagedObject: Set<String>] = [:]
    ) throws -> [ObjectID: Int64] {
        var permanentKeys: [ObjectID: Int64] = [:]
        func key(of id: ObjectID?) -> DatabaseValue {
            guard let id else { return .null }
            if id.isTemporaryID && !temporaryKeys { return permanentKeys[id]?.databaseValue ?? .null }
            return id.sqlKey.databaseValue
        }
        func databaseValue(_ value: StoredValue) -> DatabaseValue {
            switch value {
            case .attribute(let value): return value.databaseValue
            case .object(let id): return key(of: id)
            }
        }
        let ordered = objects.sorted { $0.objectID < $1.objectID }
        var pendingKeyColumns: [(ManagedObject, [String])] = []
        for object in ordered where object.isInserted && !object.isDeleted {
            let table = object.entity.name.quotedDatabaseIdentifier
            let keys = columns(of: object.entity).map(\.key)
            var names = keys.map(\.quotedDatabaseIdentifier)
            var values = keys.map { object.changes[$0].map(databaseValue) ?? .null }
            if temporaryKeys {
                names.insert(Schema.primaryKey, at: 0)
                values.insert(object.objectID.sqlKey.databaseValue, at: 0)
            } else {
                let laterKeys = keys.filter { if case .object(let id?)? = object.changes[$0] { return id.isTemporaryID } else { return false } }
                if !laterKeys.isEmpty { pendingKeyColumns.append((object, laterKeys)) }
            }
            let placeholders = Array(repeating: "?", count: values.count).joined(separator: ", ")
            let sql = names.isEmpty ? "INSERT INTO \(table) DEFAULT VALUES"
                : "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES (\(placeholders))"
            try db.cachedStatement(sql: sql).execute(binding: values)
            if !temporaryKeys { permanentKeys[object.objectID] = db.lastInsertedRowID }
        }
        // Keys of rows inserted in this save, known now that every row has its key.
        for (object, keys) in pendingKeyColumns {
            try update(object, keys: keys, in: db, value: databaseValue, primaryKey: permanentKeys[object.objectID]!)
        }
        for object in ordered where !object.isInserted && !object.isDeleted && !object.changes.isEmpty {
            let left = leavingOut[object] ?? []
            let keys = object.changes.keys.filter { !left.contains($0) }.sorted()
            if keys.isEmpty { continue }
            try update(object, keys: keys, in: db, value: databaseValue, primaryKey: object.objectID.sqlKey)
        }
        for object in ordered where object.isDeleted && !object.isInserted {
            try db.cachedStatement(sql: "DELETE FROM \(object.entity.name.quotedDatabaseIdentifier) WHERE \(Schema.primaryKey) = ?")
                .execute(arguments: [object.objectID.sqlKey])
        }
        return permanentKeys
    }

    private func update(
        _ object: ManagedObject, keys: [String], in db: Database, value: (StoredValue) -> DatabaseValue, primaryKey: Int64
    ) throws {
        var assignments: [String] = [], values: [DatabaseValue] = []
        for key in keys {
            let column = key.quotedDatabaseIdentifier
            // A counter adds what the edit added to what the row holds now (ObjectContext+Counters).
            if let delta = counterDelta(of: object, key: key) {
                assignments.append("\(column) = coalesce(\(column), 0) + ?")
                values.append(delta.databaseValue)
            } else {
                assignments.append("\(column) = ?")
                values.append(object.changes[key].map(value) ?? .null)
            }
        }
        values.append(primaryKey.databaseValue)
        try db.cachedStatement(sql: "UPDATE \(object.entity.name.quotedDatabaseIdentifier) SET \(assignments.joined(separator: ", ")) WHERE \(Schema.primaryKey) = ?")
            .execute(binding: values)
    }

    /// Runs `body` on a connection that sees the context's unsaved changes: the store as it
    /// is when there are none, else a write transaction holding them that is rolled back.
    func withPendingChanges<T>(_ body: (Database) throws -> T) throws -> T {
        if changedObjects.isEmpty {
            return try store.database.read(body)
        }
        let objects = changedObjects
        return try store.database.writeWithoutTransaction { db in
            var result: T?
            try db.inTransaction {
                _ = try writeChanges(of: objects, to: db, temporaryKeys: true)
                result = try body(db)
                return .rollback
            }
            return result!
        }
    }
}

extension ObjectID {
    /// The ID of a row key read from SQL: negative keys are temporary objects' rows.
    init(entityName: String, sqlKey: Int64) {
        self = sqlKey < 0 ? ObjectID.temporary(entityName: entityName, number: -sqlKey)
            : ObjectID(entityName: entityName, primaryKey: sqlKey)
    }
}
