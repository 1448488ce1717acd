import Foundation
import ObjectStore

/// How a controller reports a change to its delegate.
public enum ChangeReporting: Sendable, Hashable {
    /// Will-change, one call per section and object change, did-change (Core Data's
    /// classic callbacks), then the whole ``ChangeBatch``.
    case changes
    /// The whole ``ChangeBatch`` only, without the per-change calls: no object is loaded to
    /// be passed to them, so a chunk of thousands of new rows costs no objects until a list
    /// shows them (about 20 ms a chunk, and a context holding every imported object, before).
    case batches
    /// One ``FetchedSnapshot`` of the new sections, with the updated objects to reload.
    case snapshot
    /// One `CollectionDifference` of object IDs; for a controller without sections.
    case difference
}

/// The new state of a controller's sections after a change: section names and object IDs,
/// and the objects that changed in place and need to be shown again.
public struct FetchedSnapshot: Sendable, Hashable {
    public var sections: [SectionSnapshot]
    public var reloadedObjectIDs: Set<ObjectID>
}

/// Told by a ``FetchedResultsController`` when its results change. Every method has a
/// default that does nothing; implement the ones your list needs.
///
/// Calls come on the context's queue, after the context processed its changes (an edit at
/// the end of its event-loop turn, a save, a rollback, or another context's merged save).
/// Every batch names objects by the IDs they have when it is delivered: the first save of an
/// object the list knew by a temporary ID is itself reported (``ChangeBatch/renamedObjectIDs``),
/// and a save that is refused reports nothing. See `Docs/DataFlow.md`.
public protocol FetchedResultsControllerDelegate<Result>: AnyObject {
    associatedtype Result: ManagedObject

    func controllerWillChangeContent(_ controller: FetchedResultsController<Result>)
    func controller(_ controller: FetchedResultsController<Result>, didChange section: SectionChange)
    func controller(_ controller: FetchedResultsController<Result>, didChange object: Result, at indexPath: IndexPath?,
                    for type: ChangeType, newIndexPath: IndexPath?)
    func controllerDidChangeContent(_ controller: FetchedResultsController<Result>)
    /// The whole batch, after the per-change calls (``ChangeReporting/changes``).
    func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith batch: ChangeBatch)
    /// With ``ChangeReporting/snapshot``.
    func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith snapshot: FetchedSnapshot)
    /// With ``ChangeReporting/difference``.
    func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith difference: CollectionDifference<ObjectID>)
    /// The index title of a section; nil for the controller's default (the name's first letter, capitalized).
    func controller(_ controller: FetchedResultsController<Result>, sectionIndexTitleForSectionName sectionName: String) -> String?
}

extension FetchedResultsControllerDelegate {
    public func controllerWillChangeContent(_ controller: FetchedResultsController<Result>) {}
    public func controller(_ controller: FetchedResultsController<Result>, didChange section: SectionChange) {}
    public func controller(_ controller: FetchedResultsController<Result>, didChange object: Result, at indexPath: IndexPath?,
                           for type: ChangeType, newIndexPath: IndexPath?) {}
    public func controllerDidChangeContent(_ controller: FetchedResultsController<Result>) {}
    public func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith batch: ChangeBatch) {}
    public func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith snapshot: FetchedSnapshot) {}
    public func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith difference: CollectionDifference<ObjectID>) {}
    public func controller(_ controller: FetchedResultsController<Result>, sectionIndexTitleForSectionName sectionName: String) -> String? { nil }
}

/// The errors a controller throws for a request it cannot serve, with how to fix it.
public struct FetchedResultsError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
