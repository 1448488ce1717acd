import Foundation
import ObjectStore
import Synchronization

/// How a controller reports a change to its delegate.
///
/// Chosen from what the delegate conforms to unless set: ``snapshot`` for a
/// ``FetchedResultsSnapshotDelegate``, ``difference`` for a ``FetchedResultsDifferenceDelegate``,
/// else ``changes``.
public enum ChangeReporting: Sendable, Hashable {
    /// Will-change, one call per section and object change, did-change (Core Data's
    /// classic callbacks), then the whole ``ChangeBatch``.
    case changes
    /// The whole ``ChangeBatch`` only, without the per-change calls: no object is loaded to
    /// be passed to them, so a chunk of thousands of new rows costs no objects until a list
    /// shows them (about 20 ms a chunk, and a context holding every imported object, before).
    case batches
    /// One ``FetchedSnapshot`` of the new sections, with the updated objects to reload, to a
    /// ``FetchedResultsSnapshotDelegate``.
    case snapshot
    /// One `CollectionDifference` of object IDs, to a ``FetchedResultsDifferenceDelegate``;
    /// for a controller without sections.
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
///
/// Code written for Core Data's delegate works as it is, with its types renamed: the object
/// callback taking `anObject: Any` and the section callback taking a ``SectionInfo`` and
/// `atSectionIndex:` are called, as are the typed ones. For a snapshot or a difference instead
/// of per-change calls, conform to ``FetchedResultsSnapshotDelegate`` or
/// ``FetchedResultsDifferenceDelegate``: the controller reports that way by itself.
public protocol FetchedResultsControllerDelegate<Result>: AnyObject {
    associatedtype Result: ManagedObject

    func controllerWillChangeContent(_ controller: FetchedResultsController<Result>)
    func controller(_ controller: FetchedResultsController<Result>, didChange section: SectionChange)
    /// Core Data's section callback: `sectionInfo` is the section as it was (a delete) or as
    /// it is now (an insert, a move, a rename); `sectionIndex` is the old index of a delete or
    /// move, the new index of an insert or update.
    func controller(_ controller: FetchedResultsController<Result>, didChange sectionInfo: SectionInfo<Result>,
                    atSectionIndex sectionIndex: Int, for type: ChangeType)
    func controller(_ controller: FetchedResultsController<Result>, didChange object: Result, at indexPath: IndexPath?,
                    for type: ChangeType, newIndexPath: IndexPath?)
    /// Core Data's object callback, with the object as `Any`.
    func controller(_ controller: FetchedResultsController<Result>, didChange anObject: Any, at indexPath: IndexPath?,
                    for type: ChangeType, newIndexPath: IndexPath?)
    func controllerDidChangeContent(_ controller: FetchedResultsController<Result>)
    /// The whole batch, after the per-change calls (``ChangeReporting/changes``), or alone
    /// (``ChangeReporting/batches``).
    func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith batch: ChangeBatch)
    /// The controller could not follow a change: fetching the results again failed (the
    /// store went away, another program changed its schema). The results stay as they were
    /// last reported; ``FetchedResultsController/performFetch()`` again once the cause is gone.
    func controller(_ controller: FetchedResultsController<Result>, didFailWith error: any Error)
    /// The index title of a section; nil for the controller's default (the name's first letter, capitalized).
    func controller(_ controller: FetchedResultsController<Result>, sectionIndexTitleForSectionName sectionName: String) -> String?
}

extension FetchedResultsControllerDelegate {
    public func controllerWillChangeContent(_ controller: FetchedResultsController<Result>) {}
    public func controller(_ controller: FetchedResultsController<Result>, didChange section: SectionChange) {}
    public func controller(_ controller: FetchedResultsController<Result>, didChange sectionInfo: SectionInfo<Result>,
                           atSectionIndex sectionIndex: Int, for type: ChangeType) {}
    public func controller(_ controller: FetchedResultsController<Result>, didChange object: Result, at indexPath: IndexPath?,
                           for type: ChangeType, newIndexPath: IndexPath?) {}
    public func controller(_ controller: FetchedResultsController<Result>, didChange anObject: Any, at indexPath: IndexPath?,
                           for type: ChangeType, newIndexPath: IndexPath?) {}
    public func controllerDidChangeContent(_ controller: FetchedResultsController<Result>) {}
    public func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith batch: ChangeBatch) {}
    public func controller(_ controller: FetchedResultsController<Result>, didFailWith error: any Error) {
        FetchedResultsDiagnostics.warn("the controller of \(controller.fetchRequest.entityName) could not follow a change and shows its last results: \(error); implement controller(_:didFailWith:) to handle it")
    }
    public func controller(_ controller: FetchedResultsController<Result>, sectionIndexTitleForSectionName sectionName: String) -> String? { nil }
}

/// A delegate told of each change as one ``FetchedSnapshot`` of the new sections (Core
/// Data's snapshot callback). The controller reports that way by itself
/// (``ChangeReporting/snapshot``).
public protocol FetchedResultsSnapshotDelegate<Result>: FetchedResultsControllerDelegate {
    func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith snapshot: FetchedSnapshot)
}

/// A delegate told of each change as one `CollectionDifference` of object IDs (Core Data's
/// difference callback), for a controller without sections. The controller reports that way
/// by itself (``ChangeReporting/difference``).
public protocol FetchedResultsDifferenceDelegate<Result>: FetchedResultsControllerDelegate {
    func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith difference: CollectionDifference<ObjectID>)
}

/// The errors a controller throws for a request it cannot serve, with how to fix it.
public struct FetchedResultsError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Where a controller says that it is used in a way that cannot work (a reporting mode its
/// delegate does not implement, a failure nobody handles): standard error by default.
public enum FetchedResultsDiagnostics {
    private static let handler = Mutex<@Sendable (String) -> Void>({ message in
        FileHandle.standardError.write(Data("FetchedResults warning: \(message)\n".utf8))
    })

    /// Receives every warning; set it to send them to your log (or to a test).
    public static var warningHandler: @Sendable (String) -> Void {
        get { handler.withLock { $0 } }
        set { handler.withLock { $0 = newValue } }
    }

    static func warn(_ message: String) {
        warningHandler(message)
    }
}
