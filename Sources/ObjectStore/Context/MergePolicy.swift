import GRDB

/// What a save does when an object it updates was changed elsewhere since its edit began:
/// by another process, the `sqlite3` shell, or a context of another store on the same file.
///
/// Conflicts are found field by field, like Core Data's merge-by-property policies. The
/// object remembers, for each key it has an unsaved change for, the saved value the change
/// started from. A save reads the current rows of the objects it updates in its write
/// transaction, before writing, and a field conflicts when the store holds a value that is
/// neither that starting value nor the edited value. A field changed elsewhere that was not
/// edited here is no conflict (a save writes only the changed columns, so that change
/// stays), nor are both sides setting the same value. A row deleted elsewhere while the
/// object has edits is a conflict under every policy.
///
/// Inserted objects have nothing to conflict with; deleted objects are deleted whatever
/// happened to their rows.
///
/// ```swift
/// do {
///     try context.save()                         // the context's policy: .error by default
/// } catch let error as MergeConflictError {
///     // Offer to reload or to overwrite:
///     for conflict in error.conflicts {
///         context.refresh(try context.object(with: conflict.objectID), mergeChanges: false)
///     }
///     // or: try context.save(mergePolicy: .editWins)
/// }
/// ```
///
/// ## Topics
/// - ``error``
/// - ``storeWins``
/// - ``editWins``
public enum MergePolicy: Sendable, Hashable {
    /// Saves nothing when a field conflicts or a row is gone: the save throws
    /// ``MergeConflictError`` naming every object and field, and every unsaved change
    /// stays. Core Data's `NSErrorMergePolicy`. The default.
    case error
    /// Conflicting fields take the store's values (their edits are dropped) and the other
    /// edits are saved; an object whose row was deleted is let go, as when a delete is
    /// merged. Core Data's `NSMergeByPropertyStoreTrumpMergePolicy`.
    case storeWins
    /// The edits are written over the store's values. A row deleted elsewhere still fails
    /// the save (``MergeConflictError``): an edit cannot bring it back. Core Data's
    /// `NSMergeByPropertyObjectTrumpMergePolicy`.
    case editWins
}

extension ObjectContext {
    /// What a save does about the rows of the objects it updates, found in its write
    /// transaction before it writes.
    struct ConflictResolution {
        /// The updated objects' rows as they are in the store before the save writes.
        var storedValues: [ManagedObject: [String: StoredValue]] = [:]
        /// Keys whose edits are dropped for the store's values (``MergePolicy/storeWins``).
        var storeKeys: [ManagedObject: Set<String>] = [:]
        /// Updated objects whose rows are gone, let go by ``MergePolicy/storeWins``.
        var vanished: Set<ManagedObject> = []
    }

    /// Reads the rows of the updated objects among `objects` in `db` (one query per entity,
    /// on cached statements), finds the conflicts, and applies `policy`: throws
    /// ``MergeConflictError`` for those it does not settle.
    func resolveConflicts(of objects: Set<ManagedObject>, in db: Database, policy: MergePolicy) throws -> ConflictResolution {
        var resolution = ConflictResolution()
        let updated = objects.filter { !$0.isInserted && !$0.isDeleted && !$0.changes.isEmpty }
        guard !updated.isEmpty else { return resolution }
        var conflicts: [(object: ManagedObject, conflict: MergeConflict)] = []
        for group in Dictionary(grouping: updated, by: \.entity.name).values {
            let entity = group[0].entity
            let columns = columns(of: entity)
            var rowValues: [Int64: [String: StoredValue]] = [:]
            for row in try rows(of: entity, keys: group.map(\.objectID.sqlKey), in: db) {
                rowValues[row[0]] = storedValues(of: row, columns: columns)
            }
            for object in group {
                guard let stored = rowValues[object.objectID.sqlKey] else {
                    conflicts.append((object, MergeConflict(objectID: object.objectID, kind: .deleted)))
                    continue
                }
                resolution.storedValues[object] = stored
                let fields = conflictingFields(of: object, stored: stored)
                if !fields.isEmpty {
                    conflicts.append((object, MergeConflict(objectID: object.objectID, kind: .fieldsChanged(fields))))
                }
            }
        }
        conflicts.sort { $0.object.objectID < $1.object.objectID }
        switch policy {
        case .error:
            if !conflicts.isEmpty { throw MergeConflictError(conflicts: conflicts.map(\.conflict)) }
        case .editWins:
            let deleted = conflicts.map(\.conflict).filter(\.isDeleted)
            if !deleted.isEmpty { throw MergeConflictError(conflicts: deleted) }
        case .storeWins:
            for (object, conflict) in conflicts {
                if conflict.isDeleted {
                    resolution.vanished.insert(object)
                } else {
                    resolution.storeKeys[object] = Set(conflict.fields.map(\.key))
                }
            }
        }
        return resolution
    }

    /// The edited keys whose stored value is neither the one the edit started from nor the
    /// edited one. A counter is never one: its change adds to whatever the store holds.
    private func conflictingFields(of object: ManagedObject, stored: [String: StoredValue]) -> [MergeConflict.Field] {
        var fields: [MergeConflict.Field] = []
        for (key, edited) in object.changes.sorted(by: { $0.key < $1.key }) where counterDelta(of: object, key: key) == nil {
            guard let base = object.changeBases[key], let store = stored[key], store != base,
                  store != asStored(edited, of: object.entity, key: key) else { continue }
            fields.append(MergeConflict.Field(key: key, baseValue: base.fieldValue, storeValue: store.fieldValue, editedValue: edited.fieldValue))
        }
        return fields
    }

    /// `value` as it reads back from SQLite once written (a date to its stored precision),
    /// so that an edit equal to what another process wrote is no conflict.
    private func asStored(_ value: StoredValue, of entity: EntityDescription, key: String) -> StoredValue {
        guard case .attribute(let attributeValue) = value, let attribute = entity.attribute(named: key) else { return value }
        return .attribute(Value(databaseValue: attributeValue.databaseValue, type: attribute.type))
    }
}

extension StoredValue {
    var fieldValue: MergeConflict.FieldValue {
        switch self {
        case .attribute(let value): return .attribute(value)
        case .object(let id): return .object(id)
        }
    }
}
