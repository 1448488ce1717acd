import Foundation
import GRDB
import ObjectStore
import XCTest

/// The change history the store's triggers record, and contexts following it.
final class HistoryTests: XCTestCase {
    /// Another SQLite client on the same file: no ObjectStore, no contexts.
    private func otherClient(_ store: PersistentStore) throws -> DatabaseQueue {
        try DatabaseQueue(path: XCTUnwrap(store.url).path)
    }

    private func key(_ team: String, _ db: DatabaseQueue) throws -> Int64 {
        try db.read { try Int64.fetchOne($0, sql: "SELECT Z_PK FROM Team WHERE teamName = ?", arguments: [team])! }
    }

    /// A store of the World Cup teams and a context following it, its events recorded; Ghana
    /// and Chile's ID.
    private func followingWorldCup() throws -> (store: PersistentStore, context: ObjectContext, ghana: WorldCup.Team, chile: ObjectID,
                                                 recorder: EventRecorder, following: ObservationToken) {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        let context = ObjectContext(store: store)
        let teams = try Fixtures.insertTeams(into: context)
        let ghana = teams.first { $0.teamName == "Ghana" }!
        let chile = teams.first { $0.teamName == "Chile" }!.objectID
        return (store, context, ghana, chile, EventRecorder(context), try context.followStore(interval: .milliseconds(50)))
    }

    func testEveryWriteOfAnyClientIsRecordedWithAnIncreasingToken() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        XCTAssertEqual(try store.currentHistoryToken(), 0)
        try Fixtures.insertTeams(into: ObjectContext(store: store))
        let afterInsert = try store.currentHistoryToken()
        XCTAssertEqual(afterInsert, Int64(Fixtures.worldCupTeams.count))

        let other = try otherClient(store)
        let ghana = try key("Ghana", other), chile = try key("Chile", other)
        try other.write { db in
            try db.execute(sql: "UPDATE Team SET wins = 3 WHERE Z_PK = ?", arguments: [ghana])
            try db.execute(sql: "DELETE FROM Team WHERE Z_PK = ?", arguments: [chile])
            try db.execute(sql: "INSERT INTO Team (teamName, qualifyingZone, wins) VALUES ('Atlantis', 'Oceania', 0)")
            try db.execute(sql: "INSERT INTO Team (teamName, qualifyingZone, wins) VALUES ('Lemuria', 'Oceania', 0)")
            try db.execute(sql: "UPDATE Team SET wins = 1 WHERE teamName = 'Atlantis'")
            try db.execute(sql: "DELETE FROM Team WHERE teamName = 'Lemuria'")
        }
        let (changes, token) = try store.changes(since: afterInsert)
        XCTAssertEqual(token, afterInsert + 6)
        XCTAssertEqual(Set(changes.updated.keys), [ObjectID(entityName: "Team", rowKey: ghana)])
        XCTAssertEqual(changes.updated.values.first, ["wins"], "the column the update changed")
        XCTAssertEqual(changes.deleted, [ObjectID(entityName: "Team", rowKey: chile)])
        XCTAssertEqual(changes.inserted.count, 1, "an insert then an update is an insert; an insert then a delete is nothing")
        XCTAssertEqual(try store.changes(since: token).changes, ObjectChanges())
        XCTAssertEqual(try store.generation(), token, "the generation counts the same writes")
    }

    /// Each update of another client records the columns whose value it changed (`IS NOT`):
    /// a list that reads none of them knows its rows stayed where they were.
    func testAnUpdateRecordsTheColumnsItChanged() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        try Fixtures.insertTeams(into: ObjectContext(store: store))
        let other = try otherClient(store)
        let ghana = try key("Ghana", other), chile = try key("Chile", other), brazil = try key("Brazil", other)
        let team = { ObjectID(entityName: "Team", rowKey: $0) }
        func changed(_ sql: String) throws -> [ObjectID: Set<String>] {
            let token = try store.currentHistoryToken()
            try other.write { try $0.execute(sql: sql) }
            return try store.changes(since: token).changes.updated
        }
        XCTAssertEqual(try changed("UPDATE Team SET wins = wins + 1, imageName = 'ghana' WHERE Z_PK = \(ghana)"), [team(ghana): ["wins", "imageName"]])
        XCTAssertEqual(try changed("UPDATE Team SET teamName = teamName, imageName = NULL WHERE Z_PK = \(chile)"), [team(chile): ["imageName"]],
                       "a value set to what it was is no change; NULL to a value and back are")
        XCTAssertEqual(try changed("UPDATE Team SET imageName = imageName WHERE Z_PK = \(chile)"), [team(chile): []], "updated, nothing changed")
        XCTAssertEqual(try changed("UPDATE Team SET wins = 9 WHERE Z_PK = \(brazil); UPDATE Team SET qualifyingZone = 'Mars' WHERE Z_PK = \(brazil)"),
                       [team(brazil): ["wins", "qualifyingZone"]], "two updates of one row: the columns of both")
    }

    func testAReaderBehindThePrunedHistoryGetsAGap() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        try Fixtures.insertTeams(into: ObjectContext(store: store))
        let current = try store.currentHistoryToken()
        try store.pruneHistory(keepingLast: 2)
        XCTAssertEqual(try store.changes(since: current - 2).changes.inserted.count, 2)
        XCTAssertThrowsError(try store.changes(since: current - 3)) { error in
            XCTAssertEqual((error as? HistoryGap)?.token, current - 3)
            XCTAssertEqual((error as? HistoryGap)?.prunedThrough, current - 2)
        }
        try store.pruneHistory(through: current)
        XCTAssertEqual(try store.currentHistoryToken(), current, "tokens keep growing after everything was pruned")
        XCTAssertEqual(try store.changes(since: current).newToken, current)
        XCTAssertThrowsError(try store.changes(since: 0))
        try otherClient(store).write { try $0.execute(sql: "UPDATE Team SET wins = 1") }
        XCTAssertEqual(try store.changes(since: current).changes.updated.count, Fixtures.worldCupTeams.count)
    }

    func testAFileMadeBeforeTheHistoryGetsIt() throws {
        let url = try temporaryFolder(self).appendingPathComponent("old.sqlite")
        var before: Int64 = 0
        do {
            let store = try PersistentStore(url: url, model: Fixtures.worldCupModel())
            try Fixtures.insertTeams(into: ObjectContext(store: store))
            // What a file of the earlier version held: triggers bumping the generation only.
            try store.database.write { db in
                try db.execute(sql: "DROP TABLE Z_HISTORY")
                try db.execute(sql: "DELETE FROM sqlite_sequence WHERE name = 'Z_HISTORY'")
                try db.execute(sql: "DROP TABLE Z_ENTITY")
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier IN ('change history', 'history-only triggers', 'numbered history')")
                try db.execute(sql: "UPDATE Z_METADATA SET value = 40 WHERE key = 'generation'")
                before = 40
                for event in ["insert", "update", "delete"] {
                    try db.execute(sql: "DROP TRIGGER Z_Team_\(event)")
                    try db.execute(sql: "CREATE TRIGGER Z_Team_\(event) AFTER \(event.uppercased()) ON Team BEGIN UPDATE Z_METADATA SET value = value + 1 WHERE key = 'generation'; END")
                }
            }
        }
        let store = try PersistentStore(url: url, model: Fixtures.worldCupModel())
        let token = try store.currentHistoryToken()
        let generation = try store.generation()
        XCTAssertEqual(generation, before, "the generation counted so far goes on (a section cache made before stays valid)")
        try otherClient(store).write { try $0.execute(sql: "UPDATE Team SET wins = 2 WHERE teamName = 'Ghana'") }
        XCTAssertEqual(try store.changes(since: token).changes.updated.count, 1)
        XCTAssertEqual(try store.generation(), generation + 1)
        try otherClient(store).write { try $0.execute(sql: "UPDATE Team SET wins = 3") }
        XCTAssertEqual(try store.generation(), generation + 1 + Int64(Fixtures.worldCupTeams.count), "one a row")
        let triggers = try store.database.read { try String.fetchAll($0, sql: "SELECT sql FROM sqlite_master WHERE type = 'trigger'") }
        XCTAssertFalse(triggers.contains { $0.contains("Z_METADATA") }, "the triggers write the history only: \(triggers)")
    }

    func testAFollowingContextMergesOtherClientsWritesButNotItsOwn() throws {
        let (store, context, ghana, chile, recorder, following) = try followingWorldCup()

        let other = try otherClient(store)
        try other.write { try $0.execute(sql: "UPDATE Team SET wins = 4 WHERE teamName = 'Ghana'") }
        waitUntil { !recorder.objectsDidChange.isEmpty }
        XCTAssertEqual(recorder.objectsDidChange.map { Set($0.updated.keys) }, [[ghana.objectID]])
        XCTAssertEqual(ghana.wins, 4, "the updated object was refreshed")

        recorder.reset()
        ghana.wins = 5
        try context.save()
        // A save of another context on the same store object arrives by broadcast, not twice.
        let sibling = ObjectContext(store: store)
        let siblingRecorder = EventRecorder(sibling)
        let siblingFollowing = try sibling.followStore(interval: .milliseconds(50))
        ghana.wins = 6
        try context.save()
        try other.write { try $0.execute(sql: "DELETE FROM Team WHERE teamName = 'Chile'") }
        waitUntil { recorder.objectsDidChange.count >= 3 && siblingRecorder.objectsDidChange.count >= 2 }
        RunLoop.main.run(until: Date().addingTimeInterval(0.3))
        let edit = ObjectChanges(updated: [ghana.objectID: ["wins"]])
        XCTAssertEqual(recorder.objectsDidChange, [edit, edit, ObjectChanges(deleted: [chile])], "its own saves are not merged back: only its two edits and the delete")
        XCTAssertEqual(siblingRecorder.objectsDidChange, [edit, ObjectChanges(deleted: [chile])], "the other context's save came by broadcast only")
        withExtendedLifetime((following, siblingFollowing)) {}
    }

    func testAFollowerBehindThePrunedHistoryStillSeesEveryChange() throws {
        let (store, context, ghana, chile, recorder, following) = try followingWorldCup()
        // Another process changes rows and prunes all history before the follower looks.
        let writer = try PersistentStore(url: XCTUnwrap(store.url), model: Fixtures.worldCupModel())
        try writer.database.write { db in
            try db.execute(sql: "DELETE FROM Team WHERE teamName = 'Chile'")
            try db.execute(sql: "UPDATE Team SET wins = 9 WHERE teamName = 'Ghana'")
            try db.execute(sql: "INSERT INTO Team (teamName, qualifyingZone, wins) VALUES ('Atlantis', 'Oceania', 0)")
        }
        try writer.pruneHistory(keepingLast: 0)
        waitUntil { !recorder.objectsDidChange.isEmpty }
        let merged = try XCTUnwrap(recorder.objectsDidChange.first)
        XCTAssertEqual(merged.deleted, [chile])
        XCTAssertTrue(merged.updated.keys.contains(ghana.objectID))
        XCTAssertTrue(merged.invalidatedAllObjects, "the inserted row is not listed: whoever shows results fetches again")
        XCTAssertEqual(ghana.wins, 9)
        withExtendedLifetime((context, following)) {}
    }

    /// Another process's page of thousands of rows is read from the history on a reader of
    /// the store, not on the context's queue (a window's main loop), and told as one change
    /// naming every object; a save of this store's own contexts before it still comes first,
    /// from its record; a short change is read at once; a page whose history was pruned
    /// before the reader got to it is still seen whole.
    func testALongPageWrittenElsewhereIsReadOffTheContextsQueue() throws {
        let (store, context, ghana, chile, recorder, following) = try followingWorldCup()
        let sibling = ObjectContext(store: store)
        let siblingGhana = try XCTUnwrap(sibling.existingObject(with: ghana.objectID))
        let writer = try PersistentStore(url: XCTUnwrap(store.url), model: Fixtures.worldCupModel())
        func page(_ count: Int, from first: Int) throws -> Set<ObjectID> {
            try writer.database.write { db in
                for i in first..<first + count {
                    try db.execute(sql: "INSERT INTO Team (teamName, qualifyingZone, wins) VALUES (?, 'Oceania', 0)", arguments: ["Isle \(i)"])
                }
                let keys = try Int64.fetchAll(db, sql: "SELECT Z_PK FROM Team WHERE teamName LIKE 'Isle %' ORDER BY Z_PK DESC LIMIT ?", arguments: [count])
                return Set(keys.map { ObjectID(entityName: "Team", rowKey: $0) })
            }
        }
        let reads = context.historyReads

        // The sibling's save, then the page, then an update and a delete, before the main queue turns.
        try siblingGhana.setValue(3, forKey: "wins")
        try sibling.save()
        let inserted = try page(2_000, from: 0)
        try writer.database.write { db in
            try db.execute(sql: "UPDATE Team SET wins = 7 WHERE teamName = 'Ghana'")
            try db.execute(sql: "DELETE FROM Team WHERE teamName = 'Chile'")
        }
        XCTAssertTrue(waitUntil { recorder.objectsDidChange.count >= 2 })
        XCTAssertEqual(recorder.objectsDidChange.first?.updated.keys.first, ghana.objectID, "the sibling's save first, from its record")
        XCTAssertEqual(recorder.objectsDidChange.count, 2)
        let merged = try XCTUnwrap(recorder.objectsDidChange.last)
        XCTAssertEqual(merged.inserted, inserted, "every row of the page")
        XCTAssertEqual(Set(merged.updated.keys), [ghana.objectID])
        XCTAssertEqual(merged.deleted, [chile])
        XCTAssertFalse(merged.invalidatedAllObjects)
        XCTAssertEqual(ghana.wins, 7, "the updated object was refreshed")
        XCTAssertEqual(context.historyReads.readAhead, reads.readAhead + 1, "the page was read on a reader")
        XCTAssertEqual(context.historyReads.onQueue, reads.onQueue, "and not on the context's queue")
        XCTAssertEqual(context.mergedHistoryToken, try store.currentHistoryToken())

        // A short change: read at once on the queue.
        recorder.reset()
        try writer.database.write { try $0.execute(sql: "UPDATE Team SET wins = 8 WHERE teamName = 'Ghana'") }
        XCTAssertTrue(waitUntil { !recorder.objectsDidChange.isEmpty })
        XCTAssertEqual(recorder.objectsDidChange.map { Set($0.updated.keys) }, [[ghana.objectID]])
        XCTAssertEqual(context.historyReads.onQueue, reads.onQueue + 1)
        XCTAssertEqual(context.historyReads.readAhead, reads.readAhead + 1)

        // A page pruned from the history before anyone read it: seen whole all the same.
        recorder.reset()
        _ = try page(1_000, from: 2_000)
        try writer.pruneHistory(keepingLast: 0)
        XCTAssertTrue(waitUntil { !recorder.objectsDidChange.isEmpty })
        XCTAssertTrue(try XCTUnwrap(recorder.objectsDidChange.first).invalidatedAllObjects, "whoever shows results fetches again")
        XCTAssertTrue(waitUntil { context.mergedHistoryToken == (try? store.currentHistoryToken()) })
        RunLoop.main.run(until: Date().addingTimeInterval(0.2))
        XCTAssertEqual(recorder.objectsDidChange.count, 1, "told once")
        withExtendedLifetime(following) {}
    }
}
