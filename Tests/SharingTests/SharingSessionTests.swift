import Foundation
import GRDB
import PostgresNIO
import ObjectStore
@testable import Sharing
import TestSupport
import XCTest

final class SharingSessionTests: XCTestCase {
    private func boards(_ names: [String]) -> (ObjectContext) throws -> Void {
        { context in
            for name in names {
                let board = try context.insert(entityName: "Board")
                try board.setValue(name, forKey: "name")
                let card = try context.insert(entityName: "Card")
                try card.setValue("first of \(name)", forKey: "title")
                try card.setValue(0, forKey: "count")
                try card.setValue(false, forKey: "done")
                try card.setValue(board, forKey: "board")
            }
        }
    }

    func testTwoStoresExchangeInsertsUpdatesDeletesAndRelationships() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database)
            let b = try SharedStore(folder.appendingPathComponent("b.sqlite"), database: database)
            try await a.session.synchronize()
            try await b.session.synchronize()

            let context = a.context()
            try context.performAndWait {
                try boards(["Home", "Work"])(context)
                try context.save()
            }
            try await a.session.synchronize()
            try await eventually("B takes A's boards") { try b.boardNames() == ["Home", "Work"] }
            XCTAssertEqual(try a.contents(), try b.contents())
            var server = try await database.contents()
            XCTAssertEqual(server, try a.contents())
            // The card's board is B's own row for the same board.
            let boardOfCard = try await b.store.database.read { db in
                try String.fetchOne(db, sql: "SELECT Board.name FROM Card JOIN Board ON Card.board = Board.Z_PK WHERE Card.title = 'first of Work'")
            }
            XCTAssertEqual(boardOfCard, "Work")

            // An update on B, by another writer on the file (the sqlite3 shell).
            _ = try sqlite3(b.url, "UPDATE Board SET name = 'Garden' WHERE name = 'Home'")
            try await eventually("A takes B's rename") { try a.boardNames() == ["Garden", "Work"] }
            // A delete on A.
            try context.performAndWait {
                let work = try context.fetch(FetchRequest<ManagedObject>(entityName: "Board", predicate: try FetchPredicate(format: "name == 'Work'")))[0]
                try context.delete(work)
                try context.save()
            }
            try await eventually("B takes A's delete") { try b.boardNames() == ["Garden"] }
            try await a.session.synchronize()
            try await b.session.synchronize()
            XCTAssertEqual(try a.contents(), try b.contents())
            server = try await database.contents()
            XCTAssertEqual(server, try b.contents())
            XCTAssertEqual(try a.session.conflicts(), [])
            await a.stop()
            await b.stop()
        }
    }

    /// A board deleted on a desktop, then inserted again on the server under its global ID
    /// (with SQL, as a restore from a backup would): its version goes on from the delete's,
    /// so that both desktops take it back instead of skipping it as older than the delete.
    func testAnObjectInsertedAgainUnderADeletedGlobalIDComesBackOnEveryDesktop() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database)
            let b = try SharedStore(folder.appendingPathComponent("b.sqlite"), database: database)
            try a.insertBoard("Attic")
            try await a.session.synchronize()
            try await eventually("B takes the board") { try b.boardNames() == ["Attic"] }
            // Renamed twice, so that its delete is at version 4.
            _ = try sqlite3(a.url, "UPDATE Board SET name = 'Loft'")
            try await a.session.synchronize()
            _ = try sqlite3(a.url, "UPDATE Board SET name = 'Garret'")
            try await a.session.synchronize()
            let onServer = try await database.contents()
            let id = try XCTUnwrap(onServer.keys.first)
            _ = try sqlite3(a.url, "DELETE FROM Board")
            try await a.session.synchronize()
            try await eventually("B takes the delete") { try b.boardNames() == [] }

            try await database.withConnection { connection in
                try await ServerTestDatabase.execute(#"INSERT INTO "Board" ("Z_ID", name) VALUES ('\#(id.uuidString.lowercased())', 'Attic again')"#, on: connection)
                let rows = try await connection.query(#"SELECT "Z_VERSION" FROM "Board""#, logger: ServerTestDatabase.logger)
                for try await version in rows.decode(Int64.self) { XCTAssertEqual(version, 5, "above the delete's version, 4") }
            }
            try await a.session.synchronize()
            try await b.session.synchronize()
            try await eventually("both desktops take it back") { try a.boardNames() == ["Attic again"] && b.boardNames() == ["Attic again"] }
            XCTAssertEqual(try a.contents(), try b.contents())
            XCTAssertEqual(try a.contents().keys.first, id, "under its global ID")
            await a.stop()
            await b.stop()
        }
    }

    func testASeededStoreJoiningADatabaseWithDataTakesItsObjectsInsteadOfAddingItsSeed() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database, seed: boards(["Home", "Work"]))
            try await a.session.synchronize()
            var server = try await database.contents()
            XCTAssertEqual(server.count, 4, "the first store seeds the empty database")
            let b = try SharedStore(folder.appendingPathComponent("b.sqlite"), database: database, seed: boards(["Home", "Work"]))
            try await b.session.synchronize()
            XCTAssertEqual(try b.boardNames(), ["Home", "Work"], "no duplicated seed")
            server = try await database.contents()
            XCTAssertEqual(server.count, 4)
            XCTAssertEqual(try b.contents(), try a.contents())

            // A store with data of its own keeps it, and pushes it beside the server's.
            let url = folder.appendingPathComponent("c.sqlite")
            do {
                let store = try PersistentStore(url: url, model: BoardModel.model)
                let context = ObjectContext(store: store, queue: DispatchQueue(label: "c"))
                try context.performAndWait {
                    try boards(["Mine"])(context)
                    try context.save()
                }
            }
            let c = try SharedStore(url, database: database)
            try await c.session.synchronize()
            XCTAssertEqual(try c.boardNames(), ["Home", "Mine", "Work"])
            try await eventually("A takes C's board") { try a.boardNames() == ["Home", "Mine", "Work"] }
            await a.stop()
            await b.stop()
            await c.stop()
        }
    }

    func testConflictingEditsOfOneFieldKeepTheFirstCommittedAndAreReportedOtherFieldsMerge() async throws {
        try await ServerTestDatabase.with { database in
            let (a, b) = try await twoDesktops(on: database)
            await a.stop()
            await b.stop()

            // Both edit the card while neither shares: the title on both, the count on A, done on B.
            _ = try sqlite3(a.url, "UPDATE Card SET title = 'from A', count = 7")
            _ = try sqlite3(b.url, "UPDATE Card SET title = 'from B', done = 1")
            let a2 = try SharedStore(a.url, database: database)
            try await a2.session.synchronize()
            let b2 = try SharedStore(b.url, database: database)
            try await b2.session.synchronize()
            try await a2.session.synchronize()
            let card = { (store: SharedStore) in
                try store.store.database.read { (db: Database) in try Row.fetchOne(db, sql: "SELECT title, count, done FROM Card")! }
            }
            for store in [a2, b2] {
                let row = try card(store)
                XCTAssertEqual(row[0] as String, "from A", "the first committed title stays")
                XCTAssertEqual(row[1] as Int64, 7, "A's count merged")
                XCTAssertEqual(row[2] as Bool, true, "B's done merged")
            }
            let conflicts = try b2.session.conflicts()
            XCTAssertEqual(conflicts.map(\.keys), [["title"]])
            XCTAssertEqual(conflicts.first?.resolution, .tookServer)
            XCTAssertTrue(conflicts.first?.details.contains("from B") ?? false, "the lost edit is named: \(conflicts)")
            XCTAssertEqual(try a2.session.conflicts(), [])
            let server = try await database.contents()
            XCTAssertEqual(server, try a2.contents())
            XCTAssertEqual(try a2.contents(), try b2.contents())
            await a2.stop()
            await b2.stop()
        }
    }

    func testEditsMadeWhileTheServerIsDownGoOutWhenItIsBackAndConflictsAreReported() async throws {
        try await ServerTestDatabase.with { database in
            let (a, b) = try await twoDesktops(on: database)

            try ServerTestDatabase.server("stop")
            var restarted = false
            defer { if !restarted { try? ServerTestDatabase.server("start") } }
            _ = try sqlite3(a.url, "UPDATE Card SET title = 'from A offline', count = 3")
            _ = try sqlite3(b.url, "UPDATE Card SET title = 'from B offline', done = 1")
            _ = try sqlite3(b.url, "INSERT INTO Board (name) VALUES ('Made offline')")
            // A round cut mid-query may stall in postgres-nio until the engine's 20 s
            // watchdog gives it up (Docs/Sharing.md): offline may take that long to show.
            try await eventually("A says it is offline with one change waiting", timeout: .seconds(30)) {
                if case .offline = a.session.status.state { return a.session.status.pendingChanges == 1 }
                return false
            }
            try await eventually("B says it is offline with two changes waiting", timeout: .seconds(30)) {
                if case .offline = b.session.status.state { return b.session.status.pendingChanges == 2 }
                return false
            }
            XCTAssertTrue(a.session.status.description.hasPrefix("offline, 1 pending"), a.session.status.description)

            try ServerTestDatabase.server("start")
            restarted = true
            for store in [a, b] {
                try await eventually("\(store.url.lastPathComponent) reconnects and pushes", timeout: .seconds(20)) {
                    store.session.status.state == .connected && store.session.status.pendingChanges == 0
                }
            }
            try await a.session.synchronize()
            try await b.session.synchronize()
            try await a.session.synchronize()
            XCTAssertEqual(try a.contents(), try b.contents(), "both converge")
            let server = try await database.contents()
            XCTAssertEqual(server, try a.contents())
            XCTAssertEqual(try a.boardNames(), ["Home", "Made offline"])
            let card = try a.store.database.read { (db: Database) in try Row.fetchOne(db, sql: "SELECT title, count, done FROM Card")! }
            XCTAssertEqual(card[1] as Int64, 3, "A's count went out")
            XCTAssertEqual(card[2] as Bool, true, "B's done went out")
            // One title won, the first pushed; the other desktop reports its lost edit.
            let conflicts = try a.session.conflicts() + b.session.conflicts()
            XCTAssertEqual(conflicts.map(\.keys), [["title"]], "\(conflicts)")
            // The desktop that reports it is the one whose edit was not kept.
            let lost = try a.session.conflicts().isEmpty ? "from B offline" : "from A offline"
            XCTAssertNotEqual(card[0] as String, lost, "the reported edit is the one not kept")
            XCTAssertTrue(conflicts.first?.details.contains("which set \"\(lost)\"") ?? false, "the lost value is named: \(conflicts)")
        }
    }

    /// The server stops answering in the middle of a round, its connections still open
    /// (their server processes frozen with SIGSTOP): the round is given up after the
    /// engine's 20 s without progress, and the change goes out over a new connection while
    /// the old ones stay frozen.
    func testARoundTheServerStopsAnsweringIsGivenUpAndItsChangeGoesOutOnANewConnection() async throws {
        try await ServerTestDatabase.with { database in
            let (a, _) = try await twoDesktops(on: database)
            let frozen = try await database.backendProcesses()
            XCTAssertGreaterThanOrEqual(frozen.count, 2, "a connection a desktop at least")
            for pid in frozen { kill(pid, SIGSTOP) }
            defer { for pid in frozen { kill(pid, SIGCONT) } }
            let started = ContinuousClock.now
            _ = try sqlite3(a.url, "UPDATE Card SET title = 'sent while the server was frozen'")
            try await eventually("the change reaches the server", timeout: .seconds(60)) {
                let titles = try await database.contents().values.compactMap { $0["title"] }
                return titles.contains(.string("sent while the server was frozen"))
            }
            XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .seconds(15), "after the round was given up, not before")
            try await eventually("A says it is connected with nothing waiting", timeout: .seconds(20)) {
                a.session.status.state == .connected && a.session.status.pendingChanges == 0
            }
        }
    }

    /// A desktop stopped while the server does not answer its round (its connections
    /// frozen): `stop()` returns once the watchdog gives the round up, not never.
    func testStoppingADesktopWhoseRoundTheServerDoesNotAnswerEnds() async throws {
        try await ServerTestDatabase.with { database in
            let (a, _) = try await twoDesktops(on: database)
            let frozen = try await database.backendProcesses()
            for pid in frozen { kill(pid, SIGSTOP) }
            defer { for pid in frozen { kill(pid, SIGCONT) } }
            _ = try sqlite3(a.url, "UPDATE Card SET title = 'made before stopping'")
            // The round the change wakes sends its pull, and waits.
            try await Task.sleep(for: .seconds(2))
            let stopped = Stopped()
            let session = a.session
            Task {
                await session.stop()
                stopped.set()
            }
            try await eventually("stop() returns", timeout: .seconds(40)) { stopped.value }
        }
    }

    func testADesktopAwayLongerThanTheServerKeepsItsLogResyncsVisiblyAndKeepsItsOwnEdits() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database, seed: boards(["Home", "Work", "Garden"]))
            try await a.session.synchronize()
            let b = try SharedStore(folder.appendingPathComponent("b.sqlite"), database: database)
            try await b.session.synchronize()
            await b.stop()

            // While B is away: A renames, deletes and inserts, and the log is pruned of all of it.
            _ = try sqlite3(a.url, "UPDATE Board SET name = 'Office' WHERE name = 'Work'")
            _ = try sqlite3(a.url, "DELETE FROM Card WHERE title = 'first of Garden'; DELETE FROM Board WHERE name = 'Garden'")
            _ = try sqlite3(a.url, "INSERT INTO Board (name) VALUES ('Attic')")
            try await a.session.synchronize()
            // Pruned of every change: a prune keeps the changes of transactions that ended
            // after the oldest one still open on the server (any database's), so it is tried
            // again until none is left. A change B still needs kept would be pulled, not resynced.
            var pruned = 0
            try await eventually("the server's log is pruned of A's changes", timeout: .seconds(30)) {
                try await database.withConnection { connection in
                    pruned += try await ServerChangeLog(model: BoardModel.model).prune(keepingLast: 0, on: connection, logger: ServerTestDatabase.logger)
                    let rows = try await connection.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(ServerNames.quoted(ServerNames.changeLog))"),
                                                          logger: ServerTestDatabase.logger)
                    for try await left in rows.decode(Int.self) { return left == 0 }
                    return false
                }
            }
            XCTAssertGreaterThan(pruned, 0)
            // B edits a card of a board that stays, offline from the server's point of view.
            _ = try sqlite3(b.url, "UPDATE Card SET count = 9 WHERE title = 'first of Home'")

            let b2 = try SharedStore(b.url, database: database)
            try await b2.session.synchronize()
            try await a.session.synchronize()
            await b2.stop()
            let seen = b2.seenStates
            XCTAssertTrue(seen.contains(.resyncing), "the resync shows: \(seen)")
            XCTAssertEqual(try b2.boardNames(), ["Attic", "Home", "Office"])
            XCTAssertEqual(try b2.contents(), try a.contents())
            let server = try await database.contents()
            XCTAssertEqual(server, try b2.contents())
            let count = try sqlite3(a.url, "SELECT count FROM Card WHERE title = 'first of Home'")
            XCTAssertEqual(count.trimmingCharacters(in: .whitespacesAndNewlines), "9", "B's edit made while away went out after the resync")
            await a.stop()
        }
    }

    /// Desktop A, seeded with the board "Home", and desktop B, which joined after it: both
    /// synchronized once.
    /// One `synchronize()` takes every change committed before it, page after page (3,000
    /// changes in six transactions: 2,500 inserts, then 500 of them deleted; pages of at
    /// least 1,000), and the tombstones of its deletes are forgotten by its end.
    func testOneSynchronizeTakesEveryChangeCommittedBeforeItPageByPage() async throws {
        try await ServerTestDatabase.with { database in
            let b = try SharedStore(try temporaryFolder(self).appendingPathComponent("b.sqlite"), database: database)
            try await b.session.synchronize()
            try await database.withConnection { connection in
                for batch in 0..<5 {
                    try await ServerTestDatabase.execute(#"""
                        INSERT INTO "Board" ("Z_ID", name) SELECT gen_random_uuid(), 'Board \#(batch)-' || lpad(i::text, 3, '0') FROM generate_series(1, 500) i
                        """#, on: connection)
                }
                try await ServerTestDatabase.execute(#"DELETE FROM "Board" WHERE name LIKE 'Board 4-%'"#, on: connection)
            }
            try await b.session.synchronize()
            XCTAssertEqual(try b.boardNames().count, 2_000, "every insert and delete committed before the call")
            XCTAssertEqual(try sqlite3(b.url, "SELECT count(*) FROM Z_SHARED_BASE WHERE \"row\" IS NULL").trimmingCharacters(in: .whitespacesAndNewlines), "0",
                           "the 500 tombstones are forgotten: no transaction was left open")
            await b.stop()
        }
    }

    private func twoDesktops(on database: ServerTestDatabase) async throws -> (SharedStore, SharedStore) {
        let folder = try temporaryFolder(self)
        let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database, seed: boards(["Home"]))
        try await a.session.synchronize()
        let b = try SharedStore(folder.appendingPathComponent("b.sqlite"), database: database)
        try await b.session.synchronize()
        return (a, b)
    }
}

/// Whether a `stop()` called on another task returned.
private final class Stopped: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false

    var value: Bool { lock.withLock { stopped } }
    func set() { lock.withLock { stopped = true } }
}
