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
}
