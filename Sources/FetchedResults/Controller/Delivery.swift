import Foundation
import ObjectStore

extension FetchedResultsController {
    /// Tells the delegate how `old` became `new`. `changedKeys`, when known, holds every
    /// object that may have moved: the others kept their order.
    func report(from old: [Section], to new: [Section], updated: Set<ObjectID>, changedKeys: Set<Int64>? = nil) {
        if let batch = knownChangesBatch(from: old, to: new, changedKeys: changedKeys) {
            layout = new
            return deliver(batch, from: old)
        }
        let oldSnapshot = snapshot
        layout = new
        let batch = ChangeBatch.difference(from: oldSnapshot, to: snapshot, updated: updated)
        deliver(batch, from: old)
    }

    /// Tells the delegate (and the ``changeBatches`` subscribers) about `batch`, which turned
    /// the sections `old` into the current ones.
    func deliver(_ batch: ChangeBatch, from old: [Section]) {
        guard !batch.isEmpty else { return }
        positions.follow(batch)
        subscribers.yield(batch)
        guard let delegate else { return }
        switch changeReporting {
        case .changes where batch.sectionChanges.isEmpty && batch.objectChanges.isEmpty:
            // Renames only: nothing for the classic callbacks to say.
            delegate.controller(self, didChangeContentWith: batch)
        case .changes:
            delegate.controllerWillChangeContent(self)
            for change in batch.sectionChanges {
                delegate.controller(self, didChange: change)
                // Core Data's: a deleted section as it was, the others as they are now.
                let index = change.type == .insert || change.type == .update ? change.newIndex ?? change.index : change.index
                let info = change.type == .delete ? SectionInfo(controller: self, index: change.index, frozen: old[change.index])
                    : SectionInfo(controller: self, index: change.newIndex ?? change.index, frozen: layout[change.newIndex ?? change.index])
                delegate.controller(self, didChange: info, atSectionIndex: index, for: change.type)
            }
            for change in batch.objectChanges {
                guard let object = try? managedObjectContext.object(with: change.objectID) as? Result else { continue }
                delegate.controller(self, didChange: object, at: change.indexPath, for: change.type, newIndexPath: change.newIndexPath)
                delegate.controller(self, didChange: object as Any, at: change.indexPath, for: change.type, newIndexPath: change.newIndexPath)
            }
            delegate.controllerDidChangeContent(self)
            delegate.controller(self, didChangeContentWith: batch)
        case .batches:
            delegate.controller(self, didChangeContentWith: batch)
        case .snapshot:
            guard let delegate = delegate as? any FetchedResultsSnapshotDelegate<Result> else { return }
            let reloaded = Set(batch.objectChanges.filter { $0.type == .update || $0.type == .move }.map(\.objectID))
            delegate.controller(self, didChangeContentWith: FetchedSnapshot(sections: snapshot, reloadedObjectIDs: reloaded))
        case .difference:
            guard let delegate = delegate as? any FetchedResultsDifferenceDelegate<Result> else { return }
            // Offsets in the list of all objects, sections one after another.
            let before = old.flatMap(\.keys).map { ObjectID(entityName: entityName, rowKey: $0) }
            let after = layout.flatMap(\.keys).map { ObjectID(entityName: entityName, rowKey: $0) }
            delegate.controller(self, didChangeContentWith: after.difference(from: before).inferringMoves())
        }
    }

    /// The reporting mode a delegate that sets none gets, from what it conforms to.
    var automaticReporting: ChangeReporting {
        let snapshots = delegate is any FetchedResultsSnapshotDelegate<Result>
        let differences = delegate is any FetchedResultsDifferenceDelegate<Result>
        if snapshots && !differences { return .snapshot }
        if differences && !snapshots { return .difference }
        return .changes
    }

    /// Warns when the reporting mode set calls a method the delegate does not have.
    func checkWiring() {
        guard let delegate, let explicitReporting else { return }
        let name = String(describing: type(of: delegate))
        switch explicitReporting {
        case .snapshot where !(delegate is any FetchedResultsSnapshotDelegate<Result>):
            FetchedResultsDiagnostics.warn("changeReporting is .snapshot, but \(name) is no FetchedResultsSnapshotDelegate: it would never be told of a change; conform it to FetchedResultsSnapshotDelegate")
        case .difference where !(delegate is any FetchedResultsDifferenceDelegate<Result>):
            FetchedResultsDiagnostics.warn("changeReporting is .difference, but \(name) is no FetchedResultsDifferenceDelegate: it would never be told of a change; conform it to FetchedResultsDifferenceDelegate")
        default:
            break
        }
    }

    /// Tells the delegate that a change could not be followed.
    func fail(_ error: any Error) {
        delegate?.controller(self, didFailWith: error)
    }
}
