import FetchedResults
import Foundation
import ObjectStore
import XCTest

/// Writes another program makes with SQL that the history triggers must still describe:
/// afterwards a following controller equals a fresh fetch.
final class OtherWritersTests: XCTestCase {
    typealias Team = WorldCup.Team

    private func follow(_ write: String, check: (FetchedResultsController<Team>) throws -> Void) throws {
        let (store, controller, recorder, before, following) = try WorldCup.followed(in: try temporaryFolder(self))
        defer { following.cancel() }
        // The objects are loaded (their rows shown): stale values would place them wrongly.
        let teams = controller.fetchedObjects ?? []
        XCTAssertEqual(teams.count, WorldCup.teams.count)
        try sqlite3(store.url!, write)
        let deadline = Date().addingTimeInterval(5)
        while recorder.batches.isEmpty && Date() < deadline { RunLoop.current.run(until: Date().addingTimeInterval(0.02)) }
        XCTAssertFalse(recorder.batches.isEmpty, "the write reached the controller")
        try WorldCup.assertBatchesLeadToAFreshFetch(recorder, from: before, controller: controller, store: store, write)
        try check(controller)
        withExtendedLifetime(teams) {}
    }

    func testInsertOrReplaceOfALoadedRowMovesItWhereItsNewValuesBelong() throws {
        try follow("INSERT OR REPLACE INTO Team (Z_PK, teamName, qualifyingZone, wins) SELECT Z_PK, teamName, 'Oceania', 7 FROM Team WHERE teamName = 'Ghana'") { controller in
            let oceania = controller.sections?.first { $0.name == "Oceania" }
            XCTAssertEqual(oceania?.objects.map(\.teamName), ["Ghana"], "the replaced row is where its new values put it")
        }
    }

    func testARowGivenAnotherKeyIsNoGhost() throws {
        try follow("UPDATE Team SET Z_PK = 9999 WHERE teamName = 'Japan'") { controller in
            let ids = controller.snapshot.flatMap(\.objectIDs)
            XCTAssertTrue(ids.contains { $0.rowKey == 9999 })
            XCTAssertEqual(ids.count, WorldCup.teams.count, "no ghost of the old key")
        }
    }

    /// Another program sets a column the list neither sorts, sections nor filters by (every
    /// team's image): the batch names each row updated where it is, and the list is neither
    /// searched nor fetched again; the rows show the new values.
    func testAnUpdateOfAColumnTheListDoesNotReadIsAnUpdateWhereEachRowIs() throws {
        let log = SQLLog()
        let (store, context) = try WorldCup.open(in: temporaryFolder(self), sqlLog: log)
        let controller = WorldCup.controller(context)
        let (recorder, before) = try recordingBatches(of: controller)
        let following = try context.followStore(interval: .seconds(3600))
        defer { following.cancel() }
        let teams = controller.fetchedObjects ?? []
        XCTAssertEqual(teams.compactMap(\.imageName), [], "loaded before the write")
        log.reset()
        try sqlite3(store.url!, "UPDATE Team SET imageName = 'new-' || teamName")
        let deadline = Date().addingTimeInterval(5)
        while recorder.batches.isEmpty && Date() < deadline { RunLoop.current.run(until: Date().addingTimeInterval(0.02)) }
        XCTAssertEqual(recorder.batches.count, 1)
        let changes = recorder.batches.first?.objectChanges ?? []
        XCTAssertEqual(changes.count, WorldCup.teams.count)
        XCTAssertTrue(changes.allSatisfy { $0.type == .update && $0.indexPath == $0.newIndexPath }, "\(changes)")
        XCTAssertEqual(recorder.batches.first?.sectionChanges, [])
        XCTAssertEqual(controller.counts.updatesInPlace, 1)
        XCTAssertFalse(log.statements.contains { $0.contains("\"Team\"") && $0.contains("ORDER BY") }, "no search and no fetch of the list: \(log.statements)")
        try WorldCup.assertBatchesLeadToAFreshFetch(recorder, from: before, controller: controller, store: store, "images set")
        XCTAssertEqual(controller.fetchedObjects?.map(\.imageName), controller.fetchedObjects?.map { "new-" + $0.teamName })
    }

    /// The same column changed with one the list sorts by, or read by the list's predicate:
    /// the rows are placed as any change is, and the batches lead to a fresh fetch.
    func testAnUpdateOfAColumnTheListReadsIsPlaced() throws {
        try follow("UPDATE Team SET imageName = 'new', wins = 40 WHERE teamName = 'Ghana'") { controller in
            XCTAssertEqual(controller.counts.updatesInPlace, 0)
            XCTAssertEqual(controller.sections?.first { $0.name == "Africa" }?.objects.first?.teamName, "Ghana", "most wins first")
        }
        let (store, context) = try WorldCup.open(in: temporaryFolder(self))
        let controller = WorldCup.controller(context, request: WorldCup.request(predicate: try FetchPredicate(format: "imageName != nil")))
        let (recorder, before) = try recordingBatches(of: controller)
        let following = try context.followStore(interval: .seconds(3600))
        defer { following.cancel() }
        XCTAssertEqual(controller.fetchedObjects?.count, 0)
        try sqlite3(store.url!, "UPDATE Team SET imageName = 'flag' WHERE teamName IN ('Ghana', 'Spain')")
        let deadline = Date().addingTimeInterval(5)
        while recorder.batches.isEmpty && Date() < deadline { RunLoop.current.run(until: Date().addingTimeInterval(0.02)) }
        XCTAssertEqual(controller.counts.updatesInPlace, 0, "the predicate reads the column")
        var state = before
        for batch in recorder.batches { state = try batch.applied(to: state) }
        XCTAssertEqual(state, controller.snapshot, "the batches lead to the controller's sections")
        let fresh = WorldCup.controller(ObjectContext(store: store), request: WorldCup.request(predicate: try FetchPredicate(format: "imageName != nil")))
        try fresh.performFetch()
        XCTAssertEqual(controller.snapshot, fresh.snapshot)
        XCTAssertEqual(controller.fetchedObjects?.map(\.teamName), ["Ghana", "Spain"])
    }
}
