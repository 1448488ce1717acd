import Foundation
import ObjectStore

/// A saved edit that Undo reverts: enough to put the store back as it was.
enum UndoEntry {
    /// Give an object these attribute values again (a check button, an edit), and the
    /// objects its to-one relationships named, by ID (an edit that moved it to another list);
    /// and add these amounts to its counters (a tap's undo adds -1: what others added
    /// meanwhile stays).
    case restore(ObjectID, [String: Any?], adding: [String: Value] = [:])
    /// Delete an object that was added.
    case remove(ObjectID)
    /// Insert a deleted object again (under a new ID).
    case reinsert(DeletedObject)
    /// Insert deleted objects again (rows deleted together).
    case reinsertAll([DeletedObject])

    /// Puts the store back as it was, in `context`, unsaved; returns the object it brought
    /// back or changed (nil for one it removed). Objects inserted again are added to
    /// `reinserted` with the IDs they had, for the entries below that name them.
    func revert(in context: ObjectContext, reinserted: inout [(old: ObjectID, object: ManagedObject)]) throws -> ManagedObject? {
        switch self {
        case .restore(let id, let values, let deltas):
            let object = try context.existingObject(with: id)
            for (key, value) in values {
                let restored: Any? = try (value as? ObjectID).map { try context.existingObject(with: $0) } ?? value
                try object.setValue(restored, forKey: key)
            }
            for (key, delta) in deltas {
                try object.setValue(object.attributeValue(forKey: key).adding(delta).anyValue, forKey: key)
            }
            return object
        case .remove(let id):
            try context.delete(try context.existingObject(with: id))
            return nil
        case .reinsert(let deleted):
            return try deleted.insert(into: context, reinserted: &reinserted)
        case .reinsertAll(let deleted):
            return try deleted.map { try $0.insert(into: context, reinserted: &reinserted) }.first
        }
    }

    /// This entry with the objects of `renames` named by their new IDs: an object deleted
    /// and brought back by Undo has a new ID, and the entries made before its delete name
    /// the old one.
    func renaming(_ renames: [ObjectID: ObjectID]) -> UndoEntry {
        let renamed = { (id: ObjectID) in renames[id] ?? id }
        switch self {
        case .restore(let id, let values, let deltas):
            return .restore(renamed(id), values.mapValues { value in (value as? ObjectID).map(renamed) ?? value }, adding: deltas)
        case .remove(let id):
            return .remove(renamed(id))
        case .reinsert(let deleted):
            return .reinsert(deleted.renaming(renames))
        case .reinsertAll(let deleted):
            return .reinsertAll(deleted.map { $0.renaming(renames) })
        }
    }

    /// This entry, once the edit it undoes changed `object` (not saved yet): a counter among
    /// its values is undone by taking away what the edit adds, not by setting the old value,
    /// which would take away what others added meanwhile too.
    func counting(changesOf object: ManagedObject) -> UndoEntry {
        guard case .restore(let id, var values, var deltas) = self else { return self }
        for key in values.keys {
            guard let added = object.unsavedCounterChange(forKey: key) else { continue }
            values[key] = nil
            deltas[key] = Value.integer(0).subtracting(added)
        }
        return .restore(id, values, adding: deltas)
    }

    /// The values of `keys` (attributes, or to-one relationships) that `object` has now, to restore later.
    static func restoring(_ keys: [String], of object: ManagedObject) -> UndoEntry {
        .restore(object.objectID, Dictionary(uniqueKeysWithValues: keys.map { key -> (String, Any?) in
            guard object.entity.relationship(named: key) != nil else { return (key, object.attributeValue(forKey: key).anyValue) }
            return (key, (object.relatedObjects(forKey: key).first as? ManagedObject)?.objectID)
        }))
    }

    /// An object as it was before it was deleted: its attributes, the objects its to-one
    /// relationships named, and the objects its delete rules deleted with it (a to-do
    /// list's items).
    struct DeletedObject {
        /// The ID it had.
        var objectID: ObjectID
        var entityName: String
        var attributes: [String: Any?]
        /// To-one relationships to objects that stay, by ID.
        var related: [String: ObjectID]
        /// To-one relationships whose objects were deleted with it (cascade).
        var cascaded: [String: DeletedObject]
        /// To-many relationships whose objects were deleted with it (cascade), each with
        /// the relationship back to it.
        var cascadedMany: [String: (inverse: String, objects: [DeletedObject])]

        /// `object` as it is now; `parentKey` is the relationship back to the object it is
        /// deleted with, which ``insert(into:reinserted:)`` sets by inserting it there.
        init(_ object: ManagedObject, parentKey: String? = nil) {
            objectID = object.objectID
            entityName = object.entity.name
            attributes = Dictionary(uniqueKeysWithValues: object.entity.attributes.map { ($0.name, object.attributeValue(forKey: $0.name).anyValue) })
            related = [:]
            cascaded = [:]
            cascadedMany = [:]
            for relationship in object.entity.relationships where relationship.isToMany && relationship.deleteRule == .cascade {
                let inverse = relationship.inverseName
                let objects = object.relatedObjects(forKey: relationship.name).compactMap { $0 as? ManagedObject }
                cascadedMany[relationship.name] = (inverse, objects.map { DeletedObject($0, parentKey: inverse) })
            }
            for relationship in object.entity.relationships where !relationship.isToMany && relationship.name != parentKey {
                guard let target = object.relatedObjects(forKey: relationship.name).first as? ManagedObject else { continue }
                if relationship.deleteRule == .cascade {
                    cascaded[relationship.name] = DeletedObject(target, parentKey: relationship.inverseName)
                } else {
                    related[relationship.name] = target.objectID
                }
            }
        }

        /// Inserts the object (and what was deleted with it) into `context`, unsaved, adding
        /// each to `reinserted` with the ID it had.
        func insert(into context: ObjectContext, reinserted: inout [(old: ObjectID, object: ManagedObject)]) throws -> ManagedObject {
            let object = try context.insert(entityName: entityName)
            reinserted.append((objectID, object))
            for (key, value) in attributes { try object.setValue(value, forKey: key) }
            for (key, id) in related { try object.setValue(try context.existingObject(with: id), forKey: key) }
            for (key, deleted) in cascaded { try object.setValue(try deleted.insert(into: context, reinserted: &reinserted), forKey: key) }
            for (inverse, objects) in cascadedMany.values {
                for deleted in objects { try deleted.insert(into: context, reinserted: &reinserted).setValue(object, forKey: inverse) }
            }
            return object
        }

        /// This deleted object with the objects of `renames` named by their new IDs.
        func renaming(_ renames: [ObjectID: ObjectID]) -> DeletedObject {
            var copy = self
            copy.related = related.mapValues { renames[$0] ?? $0 }
            copy.cascaded = cascaded.mapValues { $0.renaming(renames) }
            copy.cascadedMany = cascadedMany.mapValues { ($0.inverse, $0.objects.map { $0.renaming(renames) }) }
            return copy
        }
    }
}
