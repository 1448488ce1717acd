import Dispatch
import Foundation
import GRDB

extension ObjectContext {
    // MARK: Merging

    /// Brings another context's save into this one: updated objects reload their saved
    /// values (keeping unsaved changes made here, which a save still checks against the
    /// values they started from), deleted objects are forgotten. Observers then get
    /// ``ContextEvent/objectsDidChange(_:)`` with the merged changes, so lists showing this
    /// context follow the other context's save.
    ///
    /// An unsaved change here that points a to-one relationship at an object deleted
    /// elsewhere is cleared (as the delete's nullify would have): saving it would write a key
    /// no row has. Those objects come in the notification as updated.
    public func mergeChanges(fromContextDidSave changes: ObjectChanges) {
        processPendingChanges()
        var merged = changes
        for id in changes.deleted {
            guard let object = registry[id] else { continue }
            forget(object)
        }
        if !changes.deleted.isEmpty {
            for object in changedObjects where !object.isDeleted {
                for (key, value) in object.changes {
                    guard case .object(let target?) = value, changes.deleted.contains(target) else { continue }
                    object.changes[key] = .object(nil)
                    merged.updated[object.objectID, default: []].insert(key)
                }
            }
        }
        for id in changes.updated.keys {
            if let object = registry[id] { object.committed = nil }
        }
        // An insert of a row this context already holds: another program replaced it
        // (`INSERT OR REPLACE`, whose implicit delete fires no trigger). Its values are new.
        for id in changes.inserted {
            guard let object = registry[id], !object.isInserted else { continue }
            object.committed = nil
            merged.updated[id] = Set(Schema.columns(of: object.entity, in: model).map(\.name))
        }
        isMergingChanges = true
        defer { isMergingChanges = false }
        post(.objectsDidChange(merged))
    }

    /// Lets go of an object whose row was deleted elsewhere, with its unsaved changes.
    func forget(_ object: ManagedObject) {
        registry[object.objectID] = nil
        object.isDeleted = true
        object.changes = [:]
        object.changeBases = [:]
        changedObjects.remove(object)
        object.managedObjectContext = nil
    }
}
