import Foundation
import GRDB
import ObjectStore
import XCTest

/// Saves keep the change history within ``PersistentStore/historyLimit``.
final class HistoryPruningTests: XCTestCase {
    private func historyCount(_ store: PersistentStore) throws -> Int {
        try store.database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM Z_HISTORY")! }
    }

    func testTheDefaultLimit() throws {
        let store = try PersistentStore.inMemory(model: Fixtures.worldCupModel())
        XCTAssertEqual(store.historyLimit, 10_000)
        XCTAssertEqual(PersistentStore.defaultHistoryLimit, 10_000)
    }

    func testSavesKeepTheHistoryWithinTheLimitAndHalfOfItAgain() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        store.historyLimit = 40
        let context = ObjectContext(store: store)
        let teams = try Fixtures.insertTeams(into: context)
        var counts: [Int] = []
        for tap in 0..<300 {
            teams[tap % teams.count].wins += 1
            try context.save()
            counts.append(try historyCount(store))
        }
        XCTAssertEqual(counts.max(), 60, "at most the limit and half of it again")
        XCTAssertEqual(counts.min(), 19, "pruning leaves the newest changes")
        let prunings = zip(counts, counts.dropFirst()).filter { $1 < $0 }
        XCTAssertEqual(prunings.count, 13, "most saves delete nothing: one in 21 prunes (at tokens 61, 82, ..., 313)")
        XCTAssertTrue(prunings.allSatisfy { $0.1 == 40 }, "down to the limit")
        let current = try store.currentHistoryToken()
        XCTAssertEqual(current, 318, "tokens go on growing")
        XCTAssertThrowsError(try store.changes(since: 0)) { error in
            XCTAssertEqual((error as? HistoryGap)?.token, 0)
        }
        let kept = Int64(try historyCount(store))
        XCTAssertEqual(try store.changes(since: current - kept).changes.updated.count, min(Int(kept), teams.count))
    }

    func testAReaderBehindAnAutomaticPruneGetsAGap() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        store.historyLimit = 5
        let context = ObjectContext(store: store)
        let teams = try Fixtures.insertTeams(into: context)   // 18 changes: pruned to 5 at once
        XCTAssertEqual(try historyCount(store), 5)
        XCTAssertThrowsError(try store.changes(since: 12)) { error in
            XCTAssertEqual((error as? HistoryGap)?.token, 12)
            XCTAssertEqual((error as? HistoryGap)?.prunedThrough, 13)
        }
        XCTAssertEqual(try store.changes(since: 13).changes.inserted.count, 5)
        teams[0].wins = 1
        try context.save()
        XCTAssertEqual(try store.changes(since: 13).changes.updated.count, 1)
    }

    func testOtherProcessesWritesArePrunedByTheNextSave() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        store.historyLimit = 100
        let context = ObjectContext(store: store)
        let teams = try Fixtures.insertTeams(into: context)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [try XCTUnwrap(store.url).path,
                             "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) "
                                 + "INSERT INTO Team (teamName, qualifyingZone, wins) SELECT 'Team ' || i, 'Oceania', 0 FROM n"]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertEqual(try historyCount(store), 518, "the shell records history and prunes nothing")
        teams[0].wins = 1
        try context.save()
        XCTAssertEqual(try historyCount(store), 100)
        XCTAssertEqual(try store.currentHistoryToken(), 519)
    }

    func testANilLimitNeverPrunes() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        store.historyLimit = nil
        let context = ObjectContext(store: store)
        let teams = try Fixtures.insertTeams(into: context)
        for tap in 0..<100 {
            teams[tap % teams.count].wins += 1
            try context.save()
        }
        XCTAssertEqual(try historyCount(store), 118)
        XCTAssertEqual(try store.changes(since: 0).changes.inserted.count, teams.count)
    }

    /// Another process saves enough for its history limit to prune past a following
    /// context's token: the follower compares the rows with what it holds, lets the deleted
    /// ones go, reloads the others and says that anything may have changed
    /// (`invalidatedAllObjects`), so that a fetch gives exactly the store's state.
    func testAFollowerBehindThePrunedPointEndsWithTheStoresState() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        let context = ObjectContext(store: store)
        try Fixtures.insertTeams(into: context)
        let reader = ObjectContext(store: store)
        let known = Set(try reader.fetch(FetchRequest<Team>()).map(\.objectID))
        let recorder = EventRecorder(reader)
        let before = try store.currentHistoryToken()
        let following = try reader.followStore(interval: .milliseconds(20))

        let writer = try PersistentStore(url: XCTUnwrap(store.url), model: Fixtures.worldCupModel())
        writer.historyLimit = 4
        let other = ObjectContext(store: writer)
        let teams = try other.fetch(FetchRequest<Team>(sortDescriptors: [FetchSortDescriptor(key: "teamName")]))
        for team in teams.prefix(6) { try other.delete(team) }
        for team in teams.dropFirst(6) { team.wins = team.teamName.count }
        for name in ["Atlantis", "Lemuria", "Mu"] {
            let team = try other.insert(Team.self)
            team.teamName = name
            team.qualifyingZone = "Oceania"
        }
        try other.save()  // 21 changes in one commit, pruned to the newest 4 in it
        XCTAssertThrowsError(try store.changes(since: before), "the follower's token is behind the pruned point") { error in
            XCTAssertTrue(error is HistoryGap)
        }

        waitUntil { !recorder.objectsDidChange.isEmpty }
        RunLoop.main.run(until: Date().addingTimeInterval(0.1))
        XCTAssertEqual(recorder.objectsDidChange.count, 1)
        let merged = try XCTUnwrap(recorder.objectsDidChange.first)
        XCTAssertTrue(merged.invalidatedAllObjects, "the follower cannot list what was inserted: it says to fetch again")
        XCTAssertEqual(merged.deleted, Set(teams.prefix(6).map(\.objectID)))
        XCTAssertEqual(Set(merged.updated.keys), known.subtracting(merged.deleted), "every held object that is still stored reloads")
        let rows = try DatabaseQueue(path: store.url!.path).read { db in
            try Row.fetchAll(db, sql: "SELECT Z_PK, teamName, qualifyingZone, imageName, wins FROM Team")
        }
        for row in rows {
            let team = try reader.object(with: ObjectID(entityName: "Team", rowKey: row["Z_PK"])) as! Team
            XCTAssertEqual(team.teamName, row["teamName"])
            XCTAssertEqual(team.wins, row["wins"], team.teamName)
            XCTAssertEqual(team.imageName, row["imageName"])
        }
        for team in teams.prefix(6) {
            XCTAssertFalse(reader.registeredObjects.contains { $0.objectID == team.objectID }, "\(team.objectID) was deleted: the reader let it go")
        }
        XCTAssertEqual(Set(try reader.fetch(FetchRequest<Team>()).map(\.objectID)),
                       Set(rows.map { ObjectID(entityName: "Team", rowKey: $0["Z_PK"]) }), "a fetch gives the store's rows")
        withExtendedLifetime(following) {}
    }
}
