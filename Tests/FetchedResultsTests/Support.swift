import FetchedResults
import Foundation
import ObjectStore
import XCTest
@_exported import TestSupport


/// Records the batches a controller delivers.
final class BatchRecorder<Result: ManagedObject>: FetchedResultsControllerDelegate {
    var batches: [ChangeBatch] = []
    var calls: [String] = []

    func controllerWillChangeContent(_ controller: FetchedResultsController<Result>) { calls.append("will") }
    func controller(_ controller: FetchedResultsController<Result>, didChange section: SectionChange) {
        calls.append("section \(section.type) \(section.index)")
    }
    func controller(_ controller: FetchedResultsController<Result>, didChange object: Result, at indexPath: IndexPath?,
                    for type: ChangeType, newIndexPath: IndexPath?) {
        calls.append("object \(type)")
    }
    func controllerDidChangeContent(_ controller: FetchedResultsController<Result>) { calls.append("did") }
    func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith batch: ChangeBatch) {
        batches.append(batch)
    }
}

/// A controller under a property test: its batches, its sections when last checked, and
/// a fresh fetch of the same request to compare with.
final class Watched {
    let name: String
    let controller: FetchedResultsController<ManagedObject>
    let recorder = BatchRecorder<ManagedObject>()
    var previous: [SectionSnapshot]
    let fresh: () throws -> [SectionSnapshot]

    init(_ name: String, _ make: @escaping () -> FetchedResultsController<ManagedObject>) throws {
        self.name = name
        controller = make()
        fresh = {
            let fresh = make()
            try fresh.performFetch()
            return fresh.snapshot
        }
        controller.delegate = recorder
        try controller.performFetch()
        previous = controller.snapshot
    }
}

/// Fails for each move of `batch` that could have been an update (the batch stays valid and
/// ends the same): a needless move is a defect (a list animates a row that stayed).
func assertEveryMoveIsNeeded(_ batch: ChangeBatch, from old: [SectionSnapshot], _ label: String, file: StaticString = #filePath, line: UInt = #line) {
    guard let expected = try? batch.applied(to: old) else { return }
    for (i, change) in batch.objectChanges.enumerated() where change.type == .move {
        var asUpdate = batch
        asUpdate.objectChanges[i].type = .update
        if let result = try? asUpdate.applied(to: old), result == expected {
            XCTFail("\(label): \(change) should be an update", file: file, line: line)
        }
    }
}

/// Runs the main queue until `condition` holds (merges of other contexts arrive there).
func drainMainQueue(until condition: () -> Bool = { false }, timeout: TimeInterval = 5) {
    let deadline = Date().addingTimeInterval(timeout)
    repeat {
        RunLoop.main.run(until: Date().addingTimeInterval(0.005))
    } while !condition() && Date() < deadline
}

/// Players in clubs: sections by zone, sorts by score and across the club relationship.
enum League {
    static func model() throws -> Model {
        try Model(entities: [
            EntityDescription(
                name: "Club",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "rank", type: .integer, defaultValue: .integer(0)),
                ],
                relationships: [RelationshipDescription(name: "players", destinationEntity: "Player", inverseName: "club", isToMany: true)]),
            EntityDescription(
                name: "Player",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "zone", type: .string, isOptional: true),
                    AttributeDescription(name: "score", type: .integer, defaultValue: .integer(0)),
                    AttributeDescription(name: "active", type: .bool, defaultValue: .bool(true)),
                ],
                relationships: [RelationshipDescription(name: "club", destinationEntity: "Club", inverseName: "players")]),
        ])
    }

    /// Inserts clubs "Club 0", "Club 1", ... ranked 0, 1, ... (unsaved).
    static func insertClubs(_ count: Int, into context: ObjectContext) throws -> [ManagedObject] {
        try (0..<count).map { i in
            let club = try context.insert(entityName: "Club")
            try club.setValue("Club \(i)", forKey: "name")
            try club.setValue(i, forKey: "rank")
            return club
        }
    }
}
