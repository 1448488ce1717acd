import FetchedResults
import Foundation
import ObjectStore
import XCTest

/// The controller is the only channel of change a list needs: every batch, in every
/// reporting mode, names objects by the IDs they keep (a first save's rename is part of a
/// batch), and a save that is refused tells the list nothing.
final class ChangeContractTests: XCTestCase {
    private typealias Team = WorldCup.Team

    private func worldCup(_ reporting: ChangeReporting = .batches, sections: Bool = true) throws -> (ObjectContext, FetchedResultsController<Team>, ChangeLog<Team>) {
        let (_, context) = try WorldCup.open(in: temporaryFolder(self))
        let controller = sections ? WorldCup.controller(context)
            : FetchedResultsController(fetchRequest: WorldCup.request(), managedObjectContext: context)
        controller.changeReporting = reporting
        let log = ChangeLog<Team>()
        controller.delegate = log
        try controller.performFetch()
        return (context, controller, log)
    }

    func testAnObjectInsertedAndSavedInOneGoComesWithItsPermanentID() throws {
        let (context, controller, log) = try worldCup()
        let before = controller.snapshot
        let atlantis = try WorldCup.insert("Atlantis", "Oceania", into: context)
        try context.save()
        XCTAssertEqual(log.batches.count, 1)
        let inserted = try XCTUnwrap(log.batches.first?.objectChanges.first { $0.type == .insert })
        XCTAssertFalse(inserted.objectID.isTemporaryID, "\(inserted)")
        XCTAssertEqual(inserted.objectID, atlantis.objectID)
        XCTAssertEqual(log.batches[0].renamedObjectIDs, [:])
        XCTAssertEqual(try log.batches[0].applied(to: before), controller.snapshot)
    }

    func testAnUnsavedObjectTheListShowsIsRenamedByTheBatchOfItsFirstSave() throws {
        let (context, controller, log) = try worldCup()
        let before = controller.snapshot
        let atlantis = try WorldCup.insert("Atlantis", "Africa", wins: 9, into: context)
        context.processPendingChanges()  // the end of the event-loop turn: the list shows it unsaved
        let temporary = atlantis.objectID
        XCTAssertTrue(temporary.isTemporaryID)
        XCTAssertEqual(controller.snapshot[0].objectIDs.first, temporary)
        try context.save()
        XCTAssertEqual(log.batches.count, 2)
        XCTAssertEqual(log.batches[1], ChangeBatch(renamedObjectIDs: [temporary: atlantis.objectID]))
        var state = before
        for batch in log.batches { state = try batch.applied(to: state) }
        XCTAssertEqual(state, controller.snapshot, "a list following the batches alone ends with the permanent IDs")
        XCTAssertEqual(state[0].objectIDs.first, atlantis.objectID)
    }

    func testTheDifferenceModeReportsTheRenameToo() throws {
        let (context, controller, log) = try worldCup(.difference, sections: false)
        var mirror = controller.snapshot.flatMap(\.objectIDs)
        let atlantis = try WorldCup.insert("Atlantis", "Africa", wins: 9, into: context)
        context.processPendingChanges()
        try context.save()
        atlantis.wins = 10
        try context.save()
        XCTAssertEqual(log.differences.count, 3)
        for difference in log.differences { mirror = try XCTUnwrap(mirror.applying(difference)) }
        XCTAssertEqual(mirror, controller.snapshot.flatMap(\.objectIDs))
        XCTAssertTrue(mirror.contains(atlantis.objectID))
        XCTAssertFalse(mirror.contains { $0.isTemporaryID }, "a client mirroring IDs keeps no temporary one")
    }

    func testTheSnapshotModeNamesSavedObjectsByTheirPermanentIDs() throws {
        let (context, controller, log) = try worldCup(.snapshot)
        let atlantis = try WorldCup.insert("Atlantis", "Africa", wins: 9, into: context)
        context.processPendingChanges()
        XCTAssertEqual(controller.snapshot[0].objectIDs.first, atlantis.objectID)
        try context.save()
        let last = try XCTUnwrap(log.snapshots.last, "\(log.calls) \(log.batches)")
        XCTAssertEqual(last.sections[0].objectIDs.first, atlantis.objectID)
        XCTAssertFalse(atlantis.objectID.isTemporaryID)
    }

    func testARefusedSaveTellsTheListNothing() throws {
        for reporting in [ChangeReporting.changes, .batches, .snapshot, .difference] {
            let (context, controller, log) = try worldCup(reporting, sections: reporting != .difference)
            let before = controller.snapshot
            let ghana = try WorldCup.team("Ghana", in: context)
            try WorldCup.insert("", "Oceania", into: context)  // a name is required
            ghana.wins = 7
            XCTAssertThrowsError(try context.save(), "\(reporting)")
            context.rollback()
            RunLoop.main.run(until: Date().addingTimeInterval(0.05))
            XCTAssertEqual(log.calls, [], "\(reporting): no rows in, then out")
            XCTAssertEqual(log.batches, [], "\(reporting)")
            XCTAssertEqual(log.snapshots, [], "\(reporting)")
            XCTAssertEqual(log.differences.filter { !$0.isEmpty }, [], "\(reporting)")
            XCTAssertEqual(controller.snapshot, before, "\(reporting)")
        }
    }
}
