import Foundation
import GRDB
import ObjectStore
import TestSupport
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

    func testANilLimitAndRetentionNeverPrune() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        store.historyLimit = nil
        store.historyRetention = nil
        let context = ObjectContext(store: store)
        let teams = try Fixtures.insertTeams(into: context)
        try noteLongAgo(store)
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

    /// A context that holds the store's changes back (a controller fetching its list again
    /// on a reader) while the process writes past the history limit (a sharing session's
    /// pages, written straight to the file and pruned as a save prunes) takes them in from
    /// the history when it lets go: every change listed, not "anything may have changed",
    /// which made a window compare a million rows on its main thread. Once let go, the
    /// history is pruned to its limit again; a hold never keeps more than ten times it.
    func testAContextHoldingTheStoresChangesKeepsTheirHistoryUntilItLetsGo() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        store.historyLimit = 4
        let teams = try Fixtures.insertTeams(into: ObjectContext(store: store))
        let reader = ObjectContext(store: store)
        _ = try reader.fetch(FetchRequest<Team>())
        let following = try reader.followStore(interval: .milliseconds(20))
        XCTAssertTrue(reader.takeStoreChanges(through: try store.currentHistoryToken()))
        let recorder = EventRecorder(reader)
        func write(_ count: Int) throws {
            for n in 0..<count {
                try store.database.write { db in
                    try db.execute(sql: "UPDATE Team SET wins = wins + 1 WHERE Z_PK = ?", arguments: [teams[n % teams.count].objectID.primaryKey])
                    try store.pruneHistoryIfNeeded(db)
                }
            }
        }

        reader.holdStoreChanges()
        try write(30)
        XCTAssertGreaterThanOrEqual(try historyCount(store), 30, "the held history stays")
        reader.releaseStoreChanges()
        XCTAssertTrue(waitUntil { reader.mergedHistoryToken == (try? store.currentHistoryToken()) })
        let merged = recorder.objectsDidChange
        XCTAssertFalse(merged.isEmpty)
        XCTAssertFalse(merged.contains { $0.invalidatedAllObjects }, "taken in from the history")
        XCTAssertEqual(Set(merged.flatMap(\.updated.keys)), Set(teams.prefix(30).map(\.objectID)))

        try write(1)
        XCTAssertLessThanOrEqual(try historyCount(store), 6, "pruned to its limit again once let go")

        // Held for more than ten times the limit: the history goes, and the context says
        // that anything may have changed.
        XCTAssertTrue(waitUntil { reader.mergedHistoryToken == (try? store.currentHistoryToken()) })
        reader.holdStoreChanges()
        try write(60)
        XCTAssertLessThanOrEqual(try historyCount(store), 46)
        reader.releaseStoreChanges()
        XCTAssertTrue(waitUntil { recorder.objectsDidChange.contains { $0.invalidatedAllObjects } })
        withExtendedLifetime(following) {}
    }

    // MARK: Pruning by age (historyRetention)

    /// Writes the file's time notes as if the newest change had been noted in 1970.
    private func noteLongAgo(_ store: PersistentStore) throws {
        try store.database.write { db in
            let token = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'Z_HISTORY'") ?? 0
            try db.execute(sql: "INSERT OR REPLACE INTO Z_METADATA (key, value) VALUES ('historyTimes', ?)", arguments: ["- - \(token) 0.0"])
        }
    }

    private func oldestToken(_ store: PersistentStore) throws -> Int64? {
        try store.database.read { try Int64.fetchOne($0, sql: "SELECT MIN(token) FROM Z_HISTORY") }
    }

    func testTheDefaultRetentionPrunesChangesAMinuteOld() throws {
        XCTAssertEqual(PersistentStore.defaultHistoryRetention, 60)
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        XCTAssertEqual(store.historyRetention, 60)
        let context = ObjectContext(store: store)
        let teams = try Fixtures.insertTeams(into: context)
        teams[0].wins = 1
        try context.save()
        XCTAssertEqual(try historyCount(store), teams.count + 1, "changes of a moment ago stay")
        try noteLongAgo(store)
        teams[1].wins = 1
        try context.save()
        XCTAssertEqual(try historyCount(store), 1, "the changes noted long ago went: only the new save's is left")
        XCTAssertThrowsError(try store.changes(since: 0)) { error in
            XCTAssertEqual((error as? HistoryGap)?.prunedThrough, Int64(teams.count + 1))
        }
        XCTAssertEqual(try store.changes(since: Int64(teams.count + 1)).changes.updated.keys.first, teams[1].objectID)
    }

    func testAStoreThatStopsWritingIsPrunedByTheFirstWriteARetentionLater() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        store.historyRetention = 1
        let context = ObjectContext(store: store)
        let started = Date()
        let teams = try Fixtures.insertTeams(into: context)
        for team in teams.prefix(5) {
            team.wins += 1
            try context.save()
        }
        if Date().timeIntervalSince(started) < 1 {
            XCTAssertEqual(try historyCount(store), teams.count + 5, "nothing is a retention old yet")
        }
        Thread.sleep(forTimeInterval: 1.2)
        teams[6].wins += 1
        try context.save()
        XCTAssertEqual(try historyCount(store), 1)
        XCTAssertEqual(try oldestToken(store), Int64(teams.count + 6))
    }

    /// Saves with random pauses between them, some longer than the retention: no save ever
    /// prunes a change younger than the retention (a follower that keeps up never gets a
    /// gap), and after a pause of at least the retention the next save leaves only its own
    /// changes. Then saves that never pause that long: they still prune (by the older note).
    func testPruningByAgeNeverTakesAYoungChange() throws {
        let seed = SeededGenerator.seed(fromEnvironment: "HISTORY_AGE_SEED")
        print("HistoryPruningTests: seed \(seed) (set HISTORY_AGE_SEED to run another)")
        var random = SeededGenerator(seed: seed)
        let retention = 0.2
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        store.historyRetention = retention
        let context = ObjectContext(store: store)
        let teams = try Fixtures.insertTeams(into: context)
        /// A step: one to three saves, the token before them, and when they started and ended.
        struct Step { var before: Int64, started: Date, ended: Date }
        var steps: [Step] = []
        func step(pause: Double, _ label: String) throws {
            Thread.sleep(forTimeInterval: pause)
            let before = try store.currentHistoryToken()
            let started = Date()
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                teams.randomElement(using: &random)!.wins += 1
                try context.save()
            }
            let ended = Date()
            let where_ = "seed \(seed) (HISTORY_AGE_SEED=\(seed)), \(label)"
            for earlier in steps where earlier.started > Date().addingTimeInterval(-retention) {
                XCTAssertNoThrow(try store.changes(since: earlier.before), "\(where_): a change younger than the retention was pruned")
            }
            if let last = steps.last, started.timeIntervalSince(last.ended) >= retention {
                XCTAssertEqual(try oldestToken(store), before + 1, "\(where_): after a pause of the retention only this step's changes are left")
            }
            steps.append(Step(before: before, started: started, ended: ended))
        }
        for index in 0..<80 {
            let long = Double.random(in: 0..<1, using: &random) < 0.15
            try step(pause: long ? Double.random(in: 0.2...0.3, using: &random) : Double.random(in: 0...0.05, using: &random), "step \(index)")
        }
        let steady = try store.currentHistoryToken()
        let start = Date()
        var index = 0
        while Date().timeIntervalSince(start) < 6 * retention {
            try step(pause: Double.random(in: 0...0.03, using: &random), "steady step \(index)")
            index += 1
        }
        XCTAssertGreaterThan(try XCTUnwrap(oldestToken(store)), steady, "seed \(seed): saves that never pause still prune what is old")
    }

    /// A sharing session's changes not pushed yet stay, however old.
    func testPruningByAgeKeepsWhatASharingSessionHasNotPushed() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        let context = ObjectContext(store: store)
        let teams = try Fixtures.insertTeams(into: context)
        let pushed = Int64(teams.count - 3)
        try store.database.write { db in try PersistentStore.keepHistory(after: pushed, in: db) }
        try noteLongAgo(store)
        teams[0].wins = 1
        try context.save()
        XCTAssertEqual(try oldestToken(store), pushed + 1, "pruned through what was pushed, no further")
        try store.database.write { db in try PersistentStore.keepHistory(after: nil, in: db) }
        try noteLongAgo(store)
        teams[1].wins = 1
        try context.save()
        XCTAssertEqual(try historyCount(store), 1)
    }

    /// Notes that do not read as notes (written by hand, or by a broken program) prune
    /// nothing by age and are written again by the next save.
    func testUnreadableTimeNotesPruneNothing() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        let context = ObjectContext(store: store)
        let teams = try Fixtures.insertTeams(into: context)
        for text in ["", "garbage", "1 2 3", "- - 18 nan", "- - 18 -inf", "x 0 y 0"] {
            try store.database.write { db in
                try db.execute(sql: "INSERT OR REPLACE INTO Z_METADATA (key, value) VALUES ('historyTimes', ?)", arguments: [text])
            }
            teams[0].wins += 1
            try context.save()
        }
        XCTAssertEqual(try historyCount(store), teams.count + 6)
        let notes = try store.database.read { try String.fetchOne($0, sql: "SELECT value FROM Z_METADATA WHERE key = 'historyTimes'") }
        let fields = try XCTUnwrap(notes).split(separator: " ")
        XCTAssertEqual(fields.count, 4)
        XCTAssertEqual(fields[2], "\(teams.count + 6)", "the newer note is the last save's token")
    }
}
