import GRDB

// MARK: Saving

extension ObjectContext {
    /// Writes every change to the store in one SQLite transaction, under the context's
    /// ``mergePolicy``.
    ///
    /// First validates every inserted and updated object (required values, limits, the
    /// entity's validator) and every deleted one (`deny` rules). Then, in the write
    /// transaction, compares the rows of the updated objects with the saved values their
    /// edits started from (see ``MergePolicy``). When validation, a conflict or the write
    /// fails, nothing is written and every unsaved change stays in the context, so the
    /// person can fix it and save again.
    ///
    /// Afterwards the saved objects hold what the store holds, values another process wrote
    /// to fields not edited here included. Observers get ``ContextEvent/didSave(_:)`` (inserted
    /// objects now have permanent IDs), then ``ContextEvent/objectsDidChange(_:)`` with the
    /// changes they were not told of yet (made in the same event-loop turn as the save: a
    /// refused save tells them nothing), then ``ContextEvent/objectsDidChange(_:)`` for values
    /// the save found changed elsewhere (store values it kept, objects whose rows were
    /// deleted); other contexts of the store merge the save.
    ///
    /// - Throws: ``ValidationError``, ``MergeConflictError``, or the store's error.
    public func save() throws {
        try save(mergePolicy: mergePolicy, writingAlso: nil)
    }

    /// ``save()`` under `mergePolicy` instead of the context's ``mergePolicy``: after a
    /// ``MergeConflictError``, `save(mergePolicy: .editWins)` overwrites the other changes
    /// and `save(mergePolicy: .storeWins)` keeps them.
    public func save(mergePolicy: MergePolicy) throws {
        try save(mergePolicy: mergePolicy, writingAlso: nil)
    }

    /// ``save()``, with `writingAlso` run in the same transaction after the changes are
    /// written (an import records how far it got there, so that rows and progress commit
    /// together). It runs even when the context has no changes.
    func save(writingAlso extraWrite: ((Database) throws -> Void)?) throws {
        try save(mergePolicy: mergePolicy, writingAlso: extraWrite)
    }

    /// ``save()``, with `check` run first in the write transaction: what it throws ends the
    /// save with nothing written and every change kept.
    func save(checkingFirst check: @escaping (Database) throws -> Void, writingAlso extraWrite: ((Database) throws -> Void)? = nil) throws {
        try save(mergePolicy: mergePolicy, checkingFirst: check, writingAlso: extraWrite)
    }

    /// The steps of every save: validate, write, take what the store holds, tell observers.
    /// A step that throws leaves every change in place, since nothing before the write's
    /// commit changes the context.
    private func save(mergePolicy policy: MergePolicy, checkingFirst check: ((Database) throws -> Void)? = nil,
                      writingAlso extraWrite: ((Database) throws -> Void)?) throws {
        preconditionOnQueue("save()")
        if store.isReadOnly && (hasChanges || extraWrite != nil) {
            throw StoreError(.readOnly, path: store.url?.path ?? ":memory:", "the store was opened read-only; nothing was written and every change is kept")
        }
        guard hasChanges else {
            processPendingChanges()
            if let extraWrite { try store.failingClearlyWhenBusy(keeping: "nothing was written") { try store.database.write(extraWrite) } }
            return
        }
        // Changes observers were not told of yet are told only once they are saved (in
        // `tellObservers`), by the IDs they keep: a refused save tells nothing, and a list
        // never shows an object under a temporary ID that the same save replaces.
        try validateForSave()
        let objects = changedObjects
        let transaction = try write(objects, policy: policy, checkingFirst: check, writingAlso: extraWrite)
        let saved = takeWhatTheStoreHolds(objects, after: transaction)
        tellObservers(saved)
    }

    /// What one save's transaction wrote.
    private struct WrittenChanges {
        /// The primary keys of the inserted objects, by their temporary IDs.
        var permanentKeys: [ObjectID: Int64]
        /// The stored rows of the updated objects, and how the merge policy settled conflicts.
        var resolution: ConflictResolution
        /// The store's record of the save, for its other contexts.
        var localSave: UInt64?
    }

    /// What a save tells observers and the store's other contexts.
    private struct SavedChanges {
        /// The changes the save wrote, by the IDs the objects keep.
        var saved = ObjectChanges()
        /// Objects the save deleted: unregistered once observers heard of the delete.
        var deletedObjects: [ManagedObject] = []
        /// What the save found changed elsewhere: values now shown that no edit here set.
        var foundElsewhere = ObjectChanges()
        /// The store's record of the save, for its other contexts.
        var localSave: UInt64?
    }

    /// Writes the changes of `objects` in one transaction: `check` first, then the conflict
    /// check under `policy`, the rows, `extraWrite` and the store's history. Throws with
    /// nothing written (a busy store as a clear ``StoreError``).
    private func write(_ objects: Set<ManagedObject>, policy: MergePolicy, checkingFirst check: ((Database) throws -> Void)?,
                       writingAlso extraWrite: ((Database) throws -> Void)?) throws -> WrittenChanges {
        var localSave: UInt64?
        do {
            return try store.failingClearlyWhenBusy(keeping: "nothing was saved and every change is kept in the context: save again") {
                try store.database.write { db in
                    try check?(db)
                    let first = try PersistentStore.currentToken(db) + 1
                    let resolution = try resolveConflicts(of: objects, in: db, policy: policy)
                    let counterFailures = counterFailures(of: objects, stored: resolution.storedValues)
                    if !counterFailures.isEmpty { throw ValidationError(failures: counterFailures) }
                    let keys = try writeChanges(of: objects, to: db, temporaryKeys: false, leavingOut: resolution.storeKeys)
                    try extraWrite?(db)
                    try store.pruneHistoryIfNeeded(db)
                    // Recorded before the commit, so that no follower can read the save first.
                    localSave = store.recordLocalSave(from: first, through: try PersistentStore.currentToken(db), by: self)
                    return WrittenChanges(permanentKeys: keys, resolution: resolution, localSave: localSave)
                }
            }
        } catch {
            if let localSave { store.forgetLocalSave(localSave) }
            throw error
        }
    }

    /// After the commit: the saved objects hold what the store holds (inserted ones under
    /// their permanent IDs), and the context has no unsaved changes left.
    private func takeWhatTheStoreHolds(_ objects: Set<ManagedObject>, after transaction: WrittenChanges) -> SavedChanges {
        var result = SavedChanges(localSave: transaction.localSave)
        let resolution = transaction.resolution
        for object in objects {
            if resolution.vanished.contains(object) {
                forget(object)
                result.foundElsewhere.deleted.insert(object.objectID)
                continue
            }
            if object.isDeleted {
                // Unregistered once observers heard of the delete: they may still look at it.
                result.deletedObjects.append(object)
                result.saved.deleted.insert(object.objectID)
                object.changes = [:]
                object.changeBases = [:]
                continue
            }
            let changes = object.changes.mapValues { value -> StoredValue in
                if case .object(let id?) = value, let pk = transaction.permanentKeys[id] {
                    return .object(ObjectID(entityName: id.entityName, primaryKey: pk))
                }
                return value
            }
            if object.isInserted {
                takePermanentID(of: object, primaryKey: transaction.permanentKeys[object.objectID]!, written: changes)
                result.saved.inserted.insert(object.objectID)
            } else {
                let storeKeys = resolution.storeKeys[object] ?? []
                var written = changes.filter { !storeKeys.contains($0.key) }
                // A counter holds what the store holds once the save added to it.
                for key in written.keys {
                    if let sum = resolution.storedValues[object].flatMap({ counterSum(of: object, key: key, stored: $0) }) { written[key] = .attribute(sum) }
                }
                if !written.isEmpty { result.saved.updated[object.objectID] = Set(written.keys) }
                let elsewhere = takeStoredValues(of: object, changes: changes, written: written, stored: resolution.storedValues[object])
                if !elsewhere.isEmpty { result.foundElsewhere.updated[object.objectID] = elsewhere }
            }
            object.changes = [:]
            object.changeBases = [:]
        }
        changedObjects = []
        toldChangedObjects = []
        return result
    }

    /// An inserted object takes the permanent ID of its row, and `changes` (the row as
    /// written) become its saved values.
    private func takePermanentID(of object: ManagedObject, primaryKey: Int64, written changes: [String: StoredValue]) {
        let permanentID = ObjectID(entityName: object.entity.name, primaryKey: primaryKey)
        registry[object.objectID] = nil
        object.temporaryObjectID = object.objectID
        permanentIDs[object.objectID] = permanentID
        object.objectID = permanentID
        registry[permanentID] = object
        object.isInserted = false
        // The row as written: a to-one never set is stored as NULL (else the next
        // save's conflict check would take it for a change made elsewhere).
        var committed = changes
        for relationship in object.entity.relationships
        where committed[relationship.name] == nil && model.storesForeignKey(relationship, of: object.entity) {
            committed[relationship.name] = .object(nil)
        }
        object.committed = committed
    }

    /// An updated object's saved values become the row as the save leaves it: `stored` (its
    /// row before the write, when the conflict check read it) with `written` (its `changes`
    /// less the keys the store's values won) on top. Returns the keys whose value differs
    /// from what the context showed: changed elsewhere.
    private func takeStoredValues(of object: ManagedObject, changes: [String: StoredValue], written: [String: StoredValue],
                                  stored: [String: StoredValue]?) -> Set<String> {
        guard let stored else {
            object.committed?.merge(changes) { $1 }
            return []
        }
        let shown = object.committed.map { $0.merging(changes) { $1 } }
        let now = stored.merging(written) { $1 }
        let elsewhere = now.keys.filter { key in shown.map { $0[key] != now[key] } ?? !written.keys.contains(key) }
        object.committed = now
        return Set(elsewhere)
    }

    /// Tells observers of a save, in this order: ``ContextEvent/didSave(_:)`` first, so
    /// that objects known by temporary IDs take their permanent ones; then the changes they
    /// were not told yet, by the IDs they keep; then what the save found changed elsewhere.
    /// Other contexts of the store merge it all.
    private func tellObservers(_ result: SavedChanges) {
        post(.didSave(result.saved))
        let unprocessedChanges = takeUnprocessedChanges()
        if !unprocessedChanges.isEmpty { post(.objectsDidChange(unprocessedChanges)) }
        for object in result.deletedObjects {
            registry[object.objectID] = nil
            object.managedObjectContext = nil
        }
        if !result.foundElsewhere.isEmpty { post(.objectsDidChange(result.foundElsewhere)) }
        var merged = result.saved
        for (id, keys) in result.foundElsewhere.updated { merged.updated[id, default: []].formUnion(keys) }
        merged.deleted.formUnion(result.foundElsewhere.deleted)
        if let localSave = result.localSave { store.publishLocalSave(localSave, changes: merged) }
    }
}
