import FetchedResults
import ObjectStore

/// Records the batches a controller delivers. A plain delegate: the controller reports to it
/// with ``ChangeReporting/changes``, its per-change calls included.
public final class BatchRecorder<Result: ManagedObject>: FetchedResultsControllerDelegate {
    public var batches: [ChangeBatch] = []

    public init() {}

    public func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith batch: ChangeBatch) {
        batches.append(batch)
    }
}
