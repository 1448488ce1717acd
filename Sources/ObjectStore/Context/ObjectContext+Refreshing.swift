import Dispatch
import Foundation
import GRDB

/// Rolling back and refreshing (saving is in ObjectContext+Save.swift).
extension ObjectContext {
    /// Discards every unsaved change: inserted objects go, deleted ones come back, updated
    /// ones get their saved values. Observers are told of what they had been told of; changes
    /// they never heard of (made in this event-loop turn) go without a word.
    public func rollback() {
        preconditionOnQueue()
        // Inserts and deletes observers were never told of are undone without a word (a
        // refused save then rolled back shows nothing, not rows in and out again).
        let untold = unprocessed
        unprocessed = UnprocessedChanges()
        var reverted = ObjectChanges()
        var discarded: [ManagedObject] = []
        for object in changedObjects {
            if object.isInserted {
                object.isDeleted = true
                if !untold.inserted.contains(object) { reverted.deleted.insert(object.objectID) }
                discarded.append(object)
            } else {
                if object.isDeleted && !untold.deleted.contains(object) {
                    reverted.inserted.insert(object.objectID)
                } else if !object.changes.isEmpty && toldChangedObjects.contains(object) {
                    reverted.updated[object.objectID] = Set(object.changes.keys)
                }
                object.isDeleted = false
            }
            object.changes = [:]
            object.changeBases = [:]
        }
        changedObjects = []
        toldChangedObjects = []
        // Observers may still look at the discarded objects while they are told.
        if !reverted.isEmpty { post(.objectsDidChange(reverted)) }
        for object in discarded {
            registry[object.objectID] = nil
            object.managedObjectContext = nil
        }
    }

    /// Reloads `object`'s saved values on next access. With `mergeChanges` its unsaved
    /// changes stay on top (and a save still checks them against the values they started
    /// from, see ``MergePolicy``); without, they are discarded.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        assertOnQueue()
        guard object.managedObjectContext === self, !object.isInserted else { return }
        object.committed = nil
        if !mergeChanges && !object.changes.isEmpty {
            object.changes = [:]
            object.changeBases = [:]
            if !object.isDeleted { changedObjects.remove(object) }
        }
    }

    /// Reloads the saved values of every registered object on next access, keeping unsaved
    /// changes on top (Core Data's `refreshAllObjects()`): after a refused save, or to see
    /// what other writers saved. Inserted objects are left as they are.
    public func refreshAllObjects() {
        assertOnQueue()
        for object in registry.objects where !object.isInserted { refresh(object, mergeChanges: true) }
    }
}
