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

/// Fetches `controller` and makes a new recorder its delegate: the recorder, and the sections
/// the delegate knows before any batch (what the recorded batches apply to).
public func recordingBatches<Result>(of controller: FetchedResultsController<Result>) throws
    -> (recorder: BatchRecorder<Result>, before: [SectionSnapshot]) {
    let recorder = BatchRecorder<Result>()
    controller.delegate = recorder
    try controller.performFetch()
    return (recorder, controller.snapshot)
}
