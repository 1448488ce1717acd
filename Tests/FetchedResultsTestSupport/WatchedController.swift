import FetchedResults
import ObjectStore
import XCTest

/// A controller under test: the batches it delivers, its sections when last checked, and a
/// fresh fetch of the same request to compare with.
public final class WatchedController {
    public let name: String
    public let controller: FetchedResultsController<ManagedObject>
    public let recorder = BatchRecorder<ManagedObject>()
    /// The sections when last checked.
    public private(set) var previous: [SectionSnapshot]
    private let make: () -> FetchedResultsController<ManagedObject>

    /// Fetches with a controller `make` returns.
    public init(_ name: String, _ make: @escaping () -> FetchedResultsController<ManagedObject>) throws {
        self.name = name
        self.make = make
        controller = make()
        controller.delegate = recorder
        try controller.performFetch()
        previous = controller.snapshot
    }

    /// Fetches `request` in `context`.
    public convenience init(_ name: String, _ request: FetchRequest<ManagedObject>, in context: ObjectContext,
                            sectionNameKeyPath: String? = nil) throws {
        try self.init(name) { FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: sectionNameKeyPath) }
    }

    /// What a new controller of the same kind fetches now.
    public func fresh() throws -> [SectionSnapshot] { try freshSnapshot(make) }

    /// The batches since the last check, applied in turn to ``previous`` (objects saved
    /// for the first time are renamed by the batches themselves).
    public func replayed() throws -> [SectionSnapshot] {
        try recorder.batches.reduce(previous) { try $1.applied(to: $0) }
    }

    /// The next check starts from the sections now.
    public func checkpoint() {
        previous = controller.snapshot
        recorder.batches = []
    }

    /// Checks the batches since the last check: each one is valid on the sections before it,
    /// names no needless move and only changes `isAllowed` lets through, and together they
    /// lead to the controller's sections, which equal a fresh fetch. Returns false after a
    /// failure (a run stops there: later steps would only repeat it), else starts the next check.
    public func checkBatches(_ label: String, allowing isAllowed: (ObjectChange) -> Bool = { _ in true },
                             file: StaticString = #filePath, line: UInt = #line) throws -> Bool {
        let current = controller.snapshot
        var state = previous
        for batch in recorder.batches {
            let old = state
            do {
                state = try batch.applied(to: old)
            } catch {
                XCTFail("\(label): invalid batch: \(error)\n\(batch)\nold: \(old)", file: file, line: line)
                return false
            }
            assertEveryMoveIsNeeded(batch, from: old, label, file: file, line: line)
            assertObjectsAreFollowed(through: batch, from: old, to: state, label, file: file, line: line)
            for change in batch.objectChanges where !isAllowed(change) {
                XCTFail("\(label): \(change) names an object that was not edited\nbatch: \(batch)\nold: \(old)\nnew: \(current)", file: file, line: line)
                return false
            }
        }
        XCTAssertEqual(state, current, "\(label): batches do not lead to the sections", file: file, line: line)
        let fresh = try fresh()
        XCTAssertEqual(current, fresh, "\(label): differs from a fresh fetch", file: file, line: line)
        guard state == current, current == fresh else { return false }
        checkpoint()
        return true
    }
}

/// The sections a new controller `make` returns fetches now.
public func freshSnapshot<Result>(_ make: () -> FetchedResultsController<Result>) throws -> [SectionSnapshot] {
    let fresh = make()
    try fresh.performFetch()
    return fresh.snapshot
}

/// Fails for each object of `old` (up to about 200, spread through it) that
/// `ChangeBatch.indexPath(of:from:)` does not carry to where `batch` puts it in `new`
/// (nil when gone): what a list's selection follows.
public func assertObjectsAreFollowed(through batch: ChangeBatch, from old: [SectionSnapshot], to new: [SectionSnapshot], _ label: String,
                                     file: StaticString = #filePath, line: UInt = #line) {
    guard batch.reload == nil, batch.renamedObjectIDs.isEmpty else { return }
    var after: [ObjectID: IndexPath] = [:]
    for (s, section) in new.enumerated() {
        for (i, id) in section.objectIDs.enumerated() { after[id] = IndexPath(item: i, section: s) }
    }
    let count = old.reduce(0) { $0 + $1.objectIDs.count }
    let stride = max(1, count / 200)
    var n = 0
    for (s, section) in old.enumerated() {
        for (i, id) in section.objectIDs.enumerated() {
            defer { n += 1 }
            guard n % stride == 0 else { continue }
            let followed = batch.indexPath(of: id, from: IndexPath(item: i, section: s))
            if followed != after[id] {
                XCTFail("\(label): \(id) at \(IndexPath(item: i, section: s)) followed to \(String(describing: followed)), not \(String(describing: after[id]))\nbatch: \(batch)", file: file, line: line)
                return
            }
        }
    }
}

/// Fails for each move of `batch` that could have been an update (the batch stays valid and
/// ends the same): a needless move is a defect (a list animates a row that stayed).
public func assertEveryMoveIsNeeded(_ batch: ChangeBatch, from old: [SectionSnapshot], _ label: String,
                                    file: StaticString = #filePath, line: UInt = #line) {
    guard let expected = try? batch.applied(to: old) else { return }
    for (i, change) in batch.objectChanges.enumerated() where change.type == .move {
        var asUpdate = batch
        asUpdate.objectChanges[i].type = .update
        if let result = try? asUpdate.applied(to: old), result == expected {
            XCTFail("\(label): \(change) should be an update", file: file, line: line)
        }
    }
}
