import GRDB

extension ObjectContext {
    /// Fetches the objects `request` describes, as SQLite orders them.
    ///
    /// Unsaved changes count unless the request says otherwise: they are written into a
    /// transaction that is rolled back after the query, so the answer is exactly SQLite's
    /// for the context's current state, limits and offsets included.
    public func fetch<Result>(_ request: FetchRequest<Result>) throws -> FetchedObjects<Result> {
        assertOnQueue()
        let entity = try checkedEntity(for: request)
        let loadValues = request.fetchBatchSize <= 0
        var sql = SQL(sql: "SELECT t0.\(Schema.primaryKey)")
        if loadValues && !columns(of: entity).isEmpty {
            sql.append(sql: ", " + columnList(of: entity, alias: "t0"))
        }
        sql.append(sql: " FROM \(entity.name.quotedDatabaseIdentifier) t0")
        sql.append(literal: try whereClause(of: request, entity: entity))
        sql.append(sql: " ORDER BY " + (try orderingTerms(of: request, entity: entity)))
        sql.append(literal: limitClause(of: request))
        let rows = try query(request) { db in try Row.fetchAll(db, SQLRequest<Row>(literal: sql)) }
        var keys: [Int64] = []
        keys.reserveCapacity(rows.count)
        var loaded: [ManagedObject] = []
        if loadValues { loaded.reserveCapacity(rows.count) }
        let columns = columns(of: entity)
        for row in rows {
            let key: Int64 = row[0]
            keys.append(key)
            if loadValues {
                let object = try registeredObject(with: ObjectID(entityName: entity.name, sqlKey: key))
                if object.isFault { load(row, into: object, columns: columns) }
                loaded.append(object)
            }
        }
        return FetchedObjects(context: self, entityName: entity.name, rowKeys: keys, batchSize: max(0, request.fetchBatchSize),
                              loadedObjects: loadValues ? loaded : nil)
    }

    /// The number of objects `request` would fetch (its limit and offset included).
    public func count<Result>(for request: FetchRequest<Result>) throws -> Int {
        assertOnQueue()
        let entity = try checkedEntity(for: request)
        var inner = SQL(sql: "SELECT 1 FROM \(entity.name.quotedDatabaseIdentifier) t0")
        inner.append(literal: try whereClause(of: request, entity: entity))
        inner.append(literal: limitClause(of: request))
        let sql = SQL(sql: "SELECT COUNT(*) FROM (") + inner + SQL(sql: ")")
        return try query(request) { db in try Int.fetchOne(db, SQLRequest<Int>(literal: sql)) ?? 0 }
    }

    func orderingTerms<Result>(of request: FetchRequest<Result>, entity: EntityDescription) throws -> String {
        var terms = try request.sortDescriptors.map { try $0.sqlOrderingTerm(for: entity, in: model, alias: "t0") }
        terms.append(ObjectID.sqlOrderingTerms(alias: "t0", withUnsavedRows: request.includesPendingChanges && hasUnsavedInserts))
        return terms.joined(separator: ", ")
    }

    func limitClause<Result>(of request: FetchRequest<Result>) -> SQL {
        guard request.fetchLimit > 0 || request.fetchOffset > 0 else { return SQL(sql: "") }
        return SQL(sql: " LIMIT ? OFFSET ?", arguments: [request.fetchLimit > 0 ? request.fetchLimit : -1, max(0, request.fetchOffset)])
    }

    func checkedEntity<Result>(for request: FetchRequest<Result>) throws -> EntityDescription {
        processPendingChanges()
        let entity = try model.existingEntity(named: request.entityName)
        let objectClass = entity.objectClass ?? ManagedObject.self
        guard objectClass == Result.self || objectClass is Result.Type else {
            throw ContextError(.wrongType, entity: entity.name, "\(entity.name) objects are \(objectClass), not \(Result.self); use FetchRequest<\(objectClass)> or FetchRequest<ManagedObject>")
        }
        try request.predicate?.validate(for: entity, in: model)
        for descriptor in request.sortDescriptors { try descriptor.validate(for: entity, in: model) }
        return entity
    }

    func whereClause<Result>(of request: FetchRequest<Result>, entity: EntityDescription) throws -> SQL {
        guard let predicate = request.predicate else { return SQL(sql: "") }
        return SQL(sql: " WHERE ") + (try predicate.sql(for: entity, in: model, alias: "t0"))
    }

    func query<Result, T>(_ request: FetchRequest<Result>, _ body: (Database) throws -> T) throws -> T {
        // A read-only store cannot take the pending changes even into a rolled-back
        // transaction: its fetches answer from the saved data.
        request.includesPendingChanges && !store.isReadOnly ? try withPendingChanges(body) : try store.database.read(body)
    }

    /// The object at `position` of a fetch result; with a batch size, a fault there loads
    /// the values of its whole batch in one query.
    func fetchedObject<Result>(at position: Int, of objects: FetchedObjects<Result>) -> ManagedObject {
        object(at: position, ofRowKeys: objects.rowKeys, entityName: objects.entityName, batchSize: objects.batchSize)
    }

    /// Where `object` belongs among `keys`, row keys of `entityName` in the order of
    /// `sortDescriptors` (ties by ID): the index of the first one it does not follow. Nil
    /// when a descriptor sorts by a key path across relationships, or a row is gone: search
    /// another way then.
    ///
    /// A binary search in one read transaction: objects the context holds compare as they
    /// are in memory, the others by their row, read alone and kept as loaded objects. It
    /// reads about log2(n) rows; faulting a batch around each probe reads 20 a probe, each
    /// batch in a transaction of its own.
    package func insertionIndex(of object: ManagedObject, in keys: [Int64], entityName: String,
                               sortedBy sortDescriptors: [FetchSortDescriptor]) throws -> Int? {
        // Attributes of the objects themselves: comparing them reads nothing more, so
        // nothing here needs a second (nested) read.
        guard sortDescriptors.allSatisfy({ !$0.key.contains(".") }) else { return nil }
        if object.isFault { try fulfillFaults([object]) }
        let entity = try model.existingEntity(named: entityName)
        let columns = columns(of: entity)
        let sql = "SELECT t0.\(Schema.primaryKey), \(columnList(of: entity, alias: "t0")) FROM \(entity.name.quotedDatabaseIdentifier) t0 WHERE t0.\(Schema.primaryKey) = ?"
        return try store.database.read { db -> Int? in
            var low = 0, high = keys.count
            while low < high {
                let mid = (low + high) / 2
                let other = try self.registeredObject(with: ObjectID(entityName: entityName, sqlKey: keys[mid]))
                if other.isFault {
                    guard let row = try Row.fetchOne(db.cachedStatement(sql: sql), arguments: [keys[mid]]) else { return nil }
                    load(row, into: other, columns: columns)
                }
                switch sortDescriptors.compare(other, object) {
                case .orderedAscending: low = mid + 1
                case .orderedDescending: high = mid
                case .orderedSame: if other.objectID < object.objectID { low = mid + 1 } else { high = mid }
                }
            }
            return low
        }
    }

    /// Where each of `objects` belongs among `keys` (as ``insertionIndex(of:in:entityName:sortedBy:)``
    /// answers for one), for many objects at once (``InsertionSearch``, in a read transaction
    /// now). `values` are the objects' own (``SortValues``), when the caller has them. Nil
    /// when a descriptor sorts by a key path across relationships, or a probed row is gone.
    package func insertionIndexes(of objects: [ManagedObject], values: [SortValues]? = nil, in keys: [Int64], entityName: String,
                                  sortedBy sortDescriptors: [FetchSortDescriptor]) throws -> [Int]? {
        guard let search = try insertionSearch(of: [(keys, objects, values)], entityName: entityName, sortedBy: sortDescriptors) else {
            return nil
        }
        return try store.database.read { db in try search.run(in: db) }?.positions.first
    }

    /// The object at `position` of a list of row keys of one entity; with a batch size, a
    /// fault there loads the values of its whole batch (`batchSize` keys around it) in one
    /// query, as a fetch with ``FetchRequest/fetchBatchSize`` does.
    package func object(at position: Int, ofRowKeys keys: [Int64], entityName: String, batchSize: Int) -> ManagedObject {
        // Keys of a fetch name objects of a model entity, so this cannot throw.
        let object = try! self.registeredObject(with: ObjectID(entityName: entityName, sqlKey: keys[position]))
        guard batchSize > 0, object.isFault else { return object }
        let start = position - position % batchSize
        let batch = keys[start..<min(keys.count, start + batchSize)].compactMap {
            try? self.registeredObject(with: ObjectID(entityName: entityName, sqlKey: $0))
        }
        try? fulfillFaults(batch)
        return object
    }
}
