import Foundation
import GRDB
import ObjectStore
import PostgresNIO
@testable import Sharing
import TestSupport
import XCTest

/// Staying small (#29): the tombstones and global IDs of deleted objects are forgotten once
/// no change can need them, on the desktops and on the server, and never sooner.
final class TombstoneTests: XCTestCase {
    func testTheTombstonesAndGlobalIDsOfDeletedObjectsAreForgottenAndTheLiveOnesKept() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database)
            let b = try SharedStore(folder.appendingPathComponent("b.sqlite"), database: database)
            for name in ["Attic", "Garden", "Home", "Work"] { try a.insertBoard(name) }
            try await a.session.synchronize()
            try await eventually("B takes the boards") { try b.boardNames() == ["Attic", "Garden", "Home", "Work"] }
            _ = try sqlite3(a.url, "DELETE FROM Board WHERE name IN ('Attic', 'Garden')")
            try await a.session.synchronize()
            try await eventually("B takes the deletes") { try b.boardNames() == ["Home", "Work"] }
            // A round or two later on each desktop (the one that pulled the deletes, the one that pushed them).
            for store in [a, b] {
                try await eventually("\(store.url.lastPathComponent) forgets its tombstones") {
                    try await store.session.synchronize()
                    return try sharingRows(of: store) == SharingRows(bases: 2, tombstones: 0, globalIDs: 2)
                }
            }
            XCTAssertEqual(try a.contents(), try b.contents())
            let server = try await database.contents()
            XCTAssertEqual(server, try a.contents(), "the live objects keep their global IDs and bases")
            await a.stop()
            await b.stop()
        }
    }

    /// A desktop that takes more deletes than one transaction forgets the tombstones of
    /// (`tombstonesPerTransaction`, 50,000 by default) forgets them all, a few transactions a
    /// round, without waiting for other wake-ups: it used to forget one batch at each pull
    /// that found nothing more, and kept 2 million rows after a million deletes.
    func testManyTombstonesAreAllForgottenInBatchesWithoutAnotherWakeUp() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let store = try PersistentStore(url: folder.appendingPathComponent("b.sqlite"), model: BoardModel.model)
            var sharing = PostgresSharing(database.configuration)
            sharing.tombstonesPerTransaction = 10
            // No wake-up but the server's notices and the test's one synchronize().
            sharing.safetyInterval = .seconds(600)
            let session = try store.share(through: sharing)
            try await session.synchronize()
            try await database.withConnection { connection in
                try await ServerTestDatabase.execute(#"""
                    INSERT INTO "Board" ("Z_ID", name) SELECT gen_random_uuid(), 'Board ' || i FROM generate_series(1, 200) i
                    """#, on: connection)
            }
            let counts = { () throws -> (boards: Int, tombstones: Int, ids: Int) in
                try store.database.read { db in
                    (try Int.fetchOne(db, sql: "SELECT count(*) FROM Board")!,
                     try Int.fetchOne(db, sql: "SELECT count(*) FROM Z_SHARED_BASE WHERE \"row\" IS NULL")!,
                     try Int.fetchOne(db, sql: "SELECT count(*) FROM Z_GLOBAL_ID")!)
                }
            }
            try await eventually("the desktop takes the 200 boards") { try await session.synchronize(); return try counts().boards == 200 }
            try await database.withConnection { connection in
                try await ServerTestDatabase.execute(#"DELETE FROM "Board""#, on: connection)
            }
            try await eventually("the desktop takes the deletes") { try await session.synchronize(); return try counts().boards == 0 }
            try await eventually("the desktop forgets all 200 tombstones and global IDs by itself", timeout: .seconds(20)) {
                let now = try counts()
                return now.tombstones == 0 && now.ids == 0
            }
            await session.stop()
        }
    }

    /// A change written before a delete, by a transaction with a higher ID than the delete's,
    /// arrives after it: the tombstone stops it, and is kept until it has arrived.
    func testATombstoneIsKeptUntilAnOlderChangeThatComesAfterItsDeleteHasArrived() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let b = try SharedStore(folder.appendingPathComponent("b.sqlite"), database: database)
            try await b.session.synchronize()
            let id = UUID()
            let board = "'\(id.uuidString.lowercased())'"
            try await database.withConnection { connection in
                try await ServerTestDatabase.execute(#"INSERT INTO "Board" ("Z_ID", name) VALUES (\#(board), 'Attic')"#, on: connection)
            }
            try await eventually("B takes the board") { try await b.session.synchronize(); return try b.boardNames() == ["Attic"] }

            try await database.withConnection { deleter in
                try await database.withConnection { holder in
                    try await database.withConnection { renamer in
                        // The delete takes its transaction ID first; a transaction that stays
                        // open takes the next; the rename takes a later one, and commits first.
                        try await Self.begin(takingATransactionID: deleter)
                        try await Self.begin(takingATransactionID: holder)
                        try await ServerTestDatabase.execute("BEGIN", on: renamer)
                        try await ServerTestDatabase.execute(#"UPDATE "Board" SET name = 'Late' WHERE "Z_ID" = \#(board)"#, on: renamer)
                        try await ServerTestDatabase.execute("COMMIT", on: renamer)
                        try await ServerTestDatabase.execute(#"DELETE FROM "Board" WHERE "Z_ID" = \#(board)"#, on: deleter)
                        try await ServerTestDatabase.execute("COMMIT", on: deleter)
                    }
                    // B pulls the delete (below the open transaction), not the rename (above it).
                    try await eventually("B takes the delete") { try await b.session.synchronize(); return try b.boardNames() == [] }
                    for _ in 0..<3 { try await b.session.synchronize() }
                    XCTAssertEqual(try sharingRows(of: b).tombstones, 1, "kept: the rename has not arrived yet")
                    try await ServerTestDatabase.execute("COMMIT", on: holder)
                }
            }
            try await eventually("B forgets the tombstone once the rename arrived") {
                try await b.session.synchronize()
                return try sharingRows(of: b) == SharingRows(bases: 0, tombstones: 0, globalIDs: 0)
            }
            XCTAssertEqual(try b.boardNames(), [], "the rename, older than the delete, did not bring the board back")
            await b.stop()
        }
    }

    /// The log and the server's deletes pruned while desktop B is away and desktop C holds
    /// tombstones (it took the deletes while a transaction stays open on the server): B resyncs, deletes what was deleted and sends nothing back; an object
    /// inserted again under a forgotten delete's global ID starts above every delete the
    /// server forgot, so C takes it over its tombstone, and so does B.
    func testADesktopAwayAcrossAPruneResyncsAndAnObjectInsertedAgainReachesEveryDesktop() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database)
            let b = try SharedStore(folder.appendingPathComponent("b.sqlite"), database: database)
            var c = try SharedStore(folder.appendingPathComponent("c.sqlite"), database: database)
            for name in ["Attic", "Garden", "Home", "Work"] { try a.insertBoard(name) }
            try await a.session.synchronize()
            let ids = Dictionary(uniqueKeysWithValues: try await database.contents().map { ($0.value["name"], $0.key) })
            let attic = try XCTUnwrap(ids[.string("Attic")]), garden = try XCTUnwrap(ids[.string("Garden")])
            // Renamed twice before its delete, so that its delete is at version 4.
            _ = try sqlite3(a.url, "UPDATE Board SET name = 'Loft' WHERE name = 'Attic'")
            try await a.session.synchronize()
            _ = try sqlite3(a.url, "UPDATE Board SET name = 'Garret' WHERE name = 'Loft'")
            try await a.session.synchronize()
            for desktop in [b, c] {
                try await eventually("\(desktop.url.lastPathComponent) takes the renames") { try desktop.boardNames() == ["Garden", "Garret", "Home", "Work"] }
                await desktop.stop()
            }

            _ = try sqlite3(a.url, "DELETE FROM Board WHERE name IN ('Garret', 'Garden')")
            try await a.session.synchronize()
            try await database.withConnection { holder in
                // A transaction left open once the deletes committed, and a later one that
                // ends: C takes the deletes, but may not forget its tombstones while the first
                // is open (a change older than a delete may come after it in the log, in a
                // transaction above the oldest one still running that ended before the delete).
                try await Self.begin(takingATransactionID: holder)
                try await database.withConnection { connection in _ = try await ServerTestDatabase.number("SELECT pg_current_xact_id()::text::bigint", on: connection) }
                c = try SharedStore(c.url, database: database)
                try await eventually("C takes the deletes") { try await c.session.synchronize(); return try c.boardNames() == ["Home", "Work"] }
                try await database.withConnection { connection in
                    let log = ServerChangeLog(model: BoardModel.model)
                    try await eventually("the log is pruned of every change", timeout: .seconds(30)) {
                        try await log.prune(keepingLast: 0, on: connection, logger: ServerTestDatabase.logger)
                        return try await ServerTestDatabase.number("SELECT count(*) FROM \"Z_CHANGES\"", on: connection) == 0
                    }
                    let deletes = try await ServerTestDatabase.number("SELECT count(*) FROM \"Z_DELETED\"", on: connection)
                    XCTAssertEqual(deletes, 0, "the server forgot the deletes at the prune")
                    let floor = try await ServerTestDatabase.number("SELECT value::bigint FROM \"Z_SHARING\" WHERE key = 'deletedFloor'", on: connection)
                    XCTAssertEqual(floor, 4, "the highest version of a delete forgotten")
                    let row = "'\(attic.uuidString.lowercased())'"
                    try await ServerTestDatabase.execute(#"INSERT INTO "Board" ("Z_ID", name) VALUES (\#(row), 'Attic again')"#, on: connection)
                    let version = try await ServerTestDatabase.number(#"SELECT "Z_VERSION" FROM "Board" WHERE "Z_ID" = \#(row)"#, on: connection)
                    XCTAssertEqual(version, 5, "above the forgotten delete's version, 4, which C's tombstone holds")
                }
                for _ in 0..<3 { try await c.session.synchronize() }
                XCTAssertEqual(try sharingRows(of: c).tombstones, 2, "C keeps its tombstones while a transaction older than the insert is open")
                try await ServerTestDatabase.execute("COMMIT", on: holder)
            }

            let back = try SharedStore(b.url, database: database)
            let everyone = [a, back, c]
            try await eventually("every desktop takes the board inserted again") {
                for desktop in everyone { try await desktop.session.synchronize() }
                return try everyone.allSatisfy { try $0.boardNames() == ["Attic again", "Home", "Work"] }
            }
            XCTAssertTrue(back.seenStates.contains(.resyncing), "B resynced: \(back.seenStates)")
            let server = try await database.contents()
            XCTAssertNil(server[garden], "B did not send the deleted Garden back")
            XCTAssertEqual(server[attic]?["name"], .string("Attic again"), "under its global ID")
            for desktop in everyone {
                XCTAssertEqual(try desktop.contents(), server, desktop.url.lastPathComponent)
                try await eventually("\(desktop.url.lastPathComponent) forgets its tombstones") {
                    try await desktop.session.synchronize()
                    return try sharingRows(of: desktop) == SharingRows(bases: 3, tombstones: 0, globalIDs: 3)
                }
                await desktop.stop()
            }
        }
    }

    /// The changes a desktop pulls are recorded in its history (controllers follow them
    /// there): it is kept to the store's limit as they come, as a save keeps it, but for
    /// the desktop's own changes not pushed yet.
    func testADesktopFollowingManyChangesKeepsItsHistoryToItsLimitAndStillPushesItsOwn() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let b = try SharedStore(folder.appendingPathComponent("b.sqlite"), database: database)
            b.store.historyLimit = 100
            try await b.session.synchronize()
            try b.insertBoard("Mine")
            try await database.withConnection { connection in
                for batch in 0..<8 {
                    try await ServerTestDatabase.execute(#"""
                        INSERT INTO "Board" ("Z_ID", name) SELECT gen_random_uuid(), 'Board \#(batch)-' || i FROM generate_series(1, 100) i
                        """#, on: connection)
                }
            }
            try await eventually("B takes the 800 boards") {
                try await b.session.synchronize()
                return try b.boardNames().count == 801
            }
            let history = try sqlite3(b.url, "SELECT count(*) FROM Z_HISTORY").trimmingCharacters(in: .whitespacesAndNewlines)
            XCTAssertLessThanOrEqual(Int(history) ?? .max, 150, "the history holds at most its limit and half as much again, not the 801 changes")
            let server = try await database.contents()
            XCTAssertEqual(server.count, 801)
            XCTAssertTrue(server.values.contains { $0["name"] == .string("Mine") }, "B's own board went out")
            await b.stop()
        }
    }

    /// A desktop's saves prune its history, but not the changes it has not pushed yet, which
    /// its next push reads to know which objects to send (else it compares every object of
    /// the store with its base); past ten times its limit they are pruned too, and the push
    /// compares every object. Nothing is lost either way.
    func testSavesKeepTheChangesNotPushedInTheHistoryUpToTenTimesItsLimit() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let b = try SharedStore(folder.appendingPathComponent("b.sqlite"), database: database)
            b.store.historyLimit = 50
            try await b.session.synchronize()
            await b.stop()
            let pushed = try await b.store.database.read { db in try SharingState.pushedThrough(in: db) }
            let notPushed = { () throws -> Int? in
                try b.store.database.read { db in try? b.store.objectsWritten(since: pushed, in: db).objects.count }
            }
            for index in 0..<300 { try b.insertBoard("Offline \(index)") }
            XCTAssertEqual(try notPushed(), 300, "the 300 boards saved since the last push are all in the history")
            for index in 300..<700 { try b.insertBoard("Offline \(index)") }
            XCTAssertNil(try notPushed(), "past ten times the limit, the history is pruned")
            let history = try sqlite3(b.url, "SELECT count(*) FROM Z_HISTORY").trimmingCharacters(in: .whitespacesAndNewlines)
            XCTAssertLessThanOrEqual(Int(history) ?? .max, 500 + 25, "ten times the limit, and the slack of a save's check")
            let again = try b.store.share(through: PostgresSharing(database.configuration))
            try await again.synchronize()
            let server = try await database.contents()
            XCTAssertEqual(server.count, 700, "every board went out")
            await again.stop()
        }
    }

    private struct SharingRows: Equatable {
        var bases: Int
        var tombstones: Int
        var globalIDs: Int
    }

    private func sharingRows(of store: SharedStore) throws -> SharingRows {
        try store.store.database.read { db in
            SharingRows(bases: try Int.fetchOne(db, sql: "SELECT count(*) FROM Z_SHARED_BASE")!,
                        tombstones: try Int.fetchOne(db, sql: "SELECT count(*) FROM Z_SHARED_BASE WHERE \"row\" IS NULL")!,
                        globalIDs: try Int.fetchOne(db, sql: "SELECT count(*) FROM Z_GLOBAL_ID")!)
        }
    }

    /// Begins a transaction on `connection` that holds a transaction ID (the oldest one
    /// running, until it ends), and returns the ID.
    @discardableResult
    private static func begin(takingATransactionID connection: PostgresConnection) async throws -> Int64? {
        try await ServerTestDatabase.execute("BEGIN", on: connection)
        return try await ServerTestDatabase.number("SELECT pg_current_xact_id()::text::bigint", on: connection)
    }
}
