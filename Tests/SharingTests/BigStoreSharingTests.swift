import Foundation
import GRDB
import ObjectStore
import PostgresNIO
@testable import Sharing
import TestSupport
import XCTest

/// A big store's first push (every object), and a join of a big database, go piece by
/// piece: what moved before a failure, or before the process was killed, stays and
/// counts; the next round goes on from there, nothing is sent twice, and the status says
/// how far it got.
final class BigStoreSharingTests: XCTestCase {
    private var executable: URL { builtExecutable("fetched-results", besides: BigStoreSharingTests.self) }

    /// A desktop far behind other desktops' changes sends its own edit while it catches
    /// up, not after taking them all (in the firehose, the writers' own saves waited behind
    /// the others' backlog): a round pulls a few pages (`pullPagesPerRound`), pushes, and the
    /// next round takes more. A `synchronize()` still returns with every change taken.
    func testADesktopFarBehindSendsItsOwnEditWhileItCatchesUp() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let store = try PersistentStore(url: folder.appendingPathComponent("b.sqlite"), model: BoardModel.model)
            var sharing = PostgresSharing(database.configuration)
            // Pages of 50 changes, two a round: the 3,000 changes below take 30 rounds.
            sharing.pullPageSize = 50
            sharing.pullPagesPerRound = 2
            let first = try store.share(through: sharing)
            try await first.synchronize()
            await first.stop()
            // While it is away, other desktops write 3,000 boards, 100 a transaction, and it
            // saves one of its own.
            try await database.withConnection { connection in
                for start in stride(from: 0, to: 3000, by: 100) {
                    try await ServerTestDatabase.execute("""
                        INSERT INTO "Board" ("Z_ID", name) SELECT gen_random_uuid(), 'Board ' || i FROM generate_series(\(start), \(start + 99)) i
                        """, on: connection)
                }
            }
            let context = ObjectContext(store: store, queue: DispatchQueue(label: "b"))
            try context.performAndWait {
                try context.insert(entityName: "Board").setValue("Mine", forKey: "name")
                try context.save()
            }
            let localBoards = { try store.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Board")! } }
            // Back: its board reaches the server while it holds few of the others'.
            let session = try store.share(through: sharing)
            let othersWhenSent = try await database.withConnection { connection -> Int in
                let deadline = ContinuousClock.now + .seconds(30)
                while ContinuousClock.now < deadline {
                    let rows = try await connection.query(#"SELECT count(*) FROM "Board" WHERE name = 'Mine'"#, logger: ServerTestDatabase.logger)
                    for try await count in rows.decode(Int.self) where count == 1 { return try localBoards() - 1 }
                    try await Task.sleep(for: .milliseconds(2))
                }
                throw EventuallyTimedOut(what: "the desktop's own board on the server")
            }
            XCTAssertLessThan(othersWhenSent, 1000, "the desktop's board reached the server when it held \(othersWhenSent) of the others' 3,000")
            try await session.synchronize()
            XCTAssertEqual(try localBoards(), 3001, "synchronize() returned with every board taken")
            await session.stop()
        }
    }

    /// A store does not read its own pushes back from the log: their rows are in it, taken
    /// from the pushes themselves (the seed of an empty database, then the pushes of the
    /// rest). A trigger on the server writes each of its 12,000 boards into the log as a
    /// newer version of another name, which a pull would take; the store keeps its names,
    /// its cursor ends at the log's last change, and a board another desktop writes still
    /// arrives.
    func testAStoreDoesNotReadItsOwnPushesBackButTakesOthersChanges() async throws {
        try await ServerTestDatabase.with { database in
            try await database.withConnection { connection in
                try await ServerSchema(model: BoardModel.model).create(on: connection, logger: ServerTestDatabase.logger)
                try await ServerTestDatabase.execute(#"""
                    CREATE FUNCTION misreport() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        IF NEW."row" ->> 'name' LIKE 'Board %' THEN
                            NEW.version := NEW.version + 1;
                            NEW."row" := jsonb_set(NEW."row", '{name}', '"Read back"');
                        END IF;
                        RETURN NEW;
                    END $$
                    """#, on: connection)
                try await ServerTestDatabase.execute(#"CREATE TRIGGER misreport BEFORE INSERT ON "Z_CHANGES" FOR EACH ROW EXECUTE FUNCTION misreport()"#,
                                                     on: connection)
            }
            let store = try PersistentStore(url: try temporaryFolder(self).appendingPathComponent("own.sqlite"), model: BoardModel.model)
            try await store.database.write { db in
                for number in 0..<12_000 { try db.execute(sql: "INSERT INTO Board (name) VALUES (?)", arguments: ["Board \(number)"]) }
            }
            let session = try store.share(through: PostgresSharing(database.configuration))
            try await session.synchronize()
            let shared = try await serverCount(database)
            XCTAssertEqual(shared, 12_000)
            try await database.withConnection { connection in
                try await ServerTestDatabase.execute(#"INSERT INTO "Board" ("Z_ID", name) VALUES (gen_random_uuid(), 'From another desktop')"#, on: connection)
            }
            try await session.synchronize()
            try await session.synchronize()
            let names = try await store.database.read { db in try String.fetchAll(db, sql: "SELECT name FROM Board") }
            XCTAssertEqual(names.count, 12_001)
            XCTAssertTrue(names.contains("From another desktop"))
            XCTAssertFalse(names.contains("Read back"), "its own pushes were read back")
            let (cursor, taken) = try await store.database.read { db in (try SharingState.cursor(in: db), try SharingState.takenPushes(in: db)) }
            let last = try await database.values(of: #"SELECT txid::text || ':' || seq FROM "Z_CHANGES" ORDER BY txid DESC, seq DESC LIMIT 1"#)
            XCTAssertEqual(cursor?.description, last.first)
            XCTAssertEqual(taken, [], "the transactions passed are forgotten")
            await session.stop()
        }
    }

    /// A store's first push holds more changes than the server's log keeps (its limit set
    /// to 100 here): 12,000 boards, more than the seed's first pass, so that most go in the
    /// round's push, after its pull. The engine prunes the log in a round that sent nothing
    /// and pulled everything, once its cursor passed its own push: before, the round that
    /// pushed pruned at its end, the log lost changes after the store's own cursor, and the
    /// next round resynced, taking every object back from the server's tables.
    func testAPushBiggerThanTheLogKeepsDoesNotMakeTheStoreResync() async throws {
        try await ServerTestDatabase.with { database in
            let store = try PersistentStore(url: try temporaryFolder(self).appendingPathComponent("big.sqlite"), model: BoardModel.model)
            try await store.database.write { db in
                for number in 0..<12_000 { try db.execute(sql: "INSERT INTO Board (name) VALUES (?)", arguments: ["Board \(number)"]) }
            }
            var sharing = PostgresSharing(database.configuration)
            sharing.logLimit = 100
            let session = try store.share(through: sharing)
            let updates = session.statusUpdates()
            let seen = Task { var states: [SharingStatus.State] = []; for await status in updates { states.append(status.state) }; return states }
            try await session.synchronize()
            try await session.synchronize()
            try await session.synchronize()
            let shared = try await serverCount(database)
            XCTAssertEqual(shared, 12_000)
            let logged = try await database.values(of: #"SELECT count(*)::text FROM "Z_CHANGES""#)
            XCTAssertEqual(logged, ["100"], "the log was pruned to its limit")
            await session.stop()
            let states = await seen.value
            XCTAssertFalse(states.contains(.resyncing), "the store resynced after its own push: \(states)")
        }
    }

    /// The server refuses the 7,001st board of 12,000 (a trigger of the test's): the pieces
    /// before it stay on the server, with their bases in the store; the status said how far
    /// the push got. Once the server takes boards again, the push goes on, ends equal, and
    /// the server's log holds one change an object.
    func testAPushFailingHalfwayKeepsThePiecesBeforeAndGoesOnFromThem() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let url = folder.appendingPathComponent("big.sqlite")
            let boards = 12_000
            let store = try PersistentStore(url: url, model: BoardModel.model)
            try await store.database.write { db in
                for number in 0..<boards { try db.execute(sql: "INSERT INTO Board (name) VALUES (?)", arguments: ["Board \(number)"]) }
            }
            try await database.withConnection { connection in
                try await ServerSchema(model: BoardModel.model).create(on: connection, logger: ServerTestDatabase.logger)
                try await ServerTestDatabase.execute("""
                    CREATE FUNCTION refuse_board() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                      IF (SELECT count(*) FROM "Board") >= 7000 THEN RAISE EXCEPTION 'the test refuses the 7,001st board'; END IF;
                      RETURN NEW;
                    END $$
                    """, on: connection)
                try await ServerTestDatabase.execute(#"CREATE TRIGGER refuse_board BEFORE INSERT ON "Board" FOR EACH ROW EXECUTE FUNCTION refuse_board()"#,
                                                     on: connection)
            }
            var sharing = PostgresSharing(database.configuration)
            sharing.reconnectDelay = .milliseconds(100)
            let session = try store.share(through: sharing)
            let transfers = Transfers()
            let updates = session.statusUpdates()
            Task { for await status in updates { if let transfer = status.transfer { transfers.append(transfer) } } }

            try await eventually("the push stops at the refused board", timeout: .seconds(60)) {
                if case .offline = session.status.state { return try await serverCount(database) > 0 } else { return false }
            }
            let kept = try await serverCount(database)
            XCTAssertGreaterThanOrEqual(kept, 5_000, "the pieces before the refusal stay on the server")
            XCTAssertLessThanOrEqual(kept, 7_000)
            let based = try await store.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Z_SHARED_BASE WHERE \"row\" IS NOT NULL") ?? 0 }
            XCTAssertEqual(based, kept, "the store took the end of each piece the server kept")
            XCTAssertGreaterThan(session.status.pendingChanges, 0)
            XCTAssertTrue(transfers.all.contains { $0.direction == .sending && $0.done >= 5_000 && $0.total == boards },
                          "the status said how far the push got: \(transfers.all.map(\.description))")

            try await database.withConnection { connection in
                try await ServerTestDatabase.execute("DROP TRIGGER refuse_board ON \"Board\"", on: connection)
            }
            try await eventually("every board reaches the server", timeout: .seconds(60)) {
                try await session.synchronize()
                return try await serverCount(database) == boards
            }
            XCTAssertEqual(session.status.pendingChanges, 0)
            XCTAssertNil(session.status.transfer, "no transfer is shown once the round ended")

            // Another desktop joins page by page, saying how far it got.
            let joiner = try PersistentStore(url: folder.appendingPathComponent("joiner.sqlite"), model: BoardModel.model)
            let joining = try joiner.share(through: sharing)
            let taken = Transfers()
            let joinUpdates = joining.statusUpdates()
            Task { for await status in joinUpdates { if let transfer = status.transfer { taken.append(transfer) } } }
            try await joining.synchronize()
            let joined = try await joiner.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Board") ?? 0 }
            XCTAssertEqual(joined, boards)
            XCTAssertTrue(taken.all.contains { $0.direction == .taking && $0.done < boards && $0.total == boards },
                          "the status said how far the join got: \(taken.all.map(\.description))")
            await joining.stop()
            try await database.withConnection { connection in
                let rows = try await connection.query(#"SELECT count(*), count(DISTINCT object) FROM "Z_CHANGES""#, logger: ServerTestDatabase.logger)
                for try await (changes, objects) in rows.decode((Int, Int).self) {
                    XCTAssertEqual(changes, boards, "one change an object: nothing was sent twice")
                    XCTAssertEqual(objects, boards)
                }
            }
            await session.stop()
        }
    }

    /// A desktop joins a database of 12,000 boards (three pages) while its person keeps
    /// adding boards: every board saved while the pages came, and after, reaches the
    /// server, which ends equal to the store. (A join once counted everything saved up to
    /// its end as pushed, and these saves never went out.)
    func testBoardsSavedWhileADesktopJoinsReachTheServer() async throws {
        try await ServerTestDatabase.with { database in
            try await database.withConnection { connection in
                try await ServerSchema(model: BoardModel.model).create(on: connection, logger: ServerTestDatabase.logger)
                try await ServerTestDatabase.execute(#"INSERT INTO "Board" ("Z_ID", name) SELECT gen_random_uuid(), 'Server board ' || n FROM generate_series(1, 12000) n"#,
                                                     on: connection)
            }
            let store = try PersistentStore(url: try temporaryFolder(self).appendingPathComponent("joiner.sqlite"), model: BoardModel.model)
            let session = try store.share(through: PostgresSharing(database.configuration))
            let updates = session.statusUpdates()
            // Saving begins once the first page is in (the seed, empty here, given up), and
            // goes on until the join is over and a little after.
            for await status in updates where status.transfer?.direction == .taking { break }
            var saved = 0
            let deadline = ContinuousClock.now + .seconds(60)
            while session.status.state != .connected || saved < 20, ContinuousClock.now < deadline {
                try await store.database.write { [saved] db in try db.execute(sql: "INSERT INTO Board (name) VALUES (?)", arguments: ["Local board \(saved)"]) }
                saved += 1
                try await Task.sleep(for: .milliseconds(5))
            }
            try await session.synchronize()
            let localBoards = try await store.database.read { db in try String.fetchAll(db, sql: "SELECT name FROM Board WHERE name LIKE 'Local board %'") }
            let serverBoards = try await database.values(of: #"SELECT name FROM "Board" WHERE name LIKE 'Local board %'"#)
            print("BigStoreSharingTests: \(saved) boards saved while joining and after")
            XCTAssertEqual(localBoards.count, saved)
            XCTAssertEqual(serverBoards.sorted(), localBoards.sorted(), "every board saved during the join reached the server")
            let serverTotal = try await serverCount(database)
            XCTAssertEqual(serverTotal, 12_000 + saved)
            XCTAssertEqual(session.status.pendingChanges, 0)
            await session.stop()
        }
    }

    /// A desktop joining a database of 30,000 boards takes them in pages of 5,000, each with
    /// a large page cache, and gives the cache back at the end: it does not keep 64 MiB for
    /// the small saves that follow, nor a WAL checkpointed only every 64 MiB. Each board's
    /// row is named by its own global ID and has its server row as its base (the rows go in
    /// a hundred a statement, their keys known from the statement's last).
    func testAJoinTakesABigDatabaseInPagesAndGivesItsPageCacheBack() async throws {
        try await ServerTestDatabase.with { database in
            try await database.withConnection { connection in
                try await ServerSchema(model: BoardModel.model).create(on: connection, logger: ServerTestDatabase.logger)
                try await ServerTestDatabase.execute(#"""
                    INSERT INTO "Board" ("Z_ID", name) SELECT gen_random_uuid(), 'Board ' || lpad(n::text, 5, '0') FROM generate_series(1, 30000) n
                    """#, on: connection)
            }
            let store = try PersistentStore(url: try temporaryFolder(self).appendingPathComponent("joiner.sqlite"), model: BoardModel.model)
            let cacheBefore = try await store.database.write { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") }
            XCTAssertNotEqual(cacheBefore, -Database.largeWriteCacheKiB)
            let checkpointBefore = try await store.database.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") }
            XCTAssertNotEqual(checkpointBefore, Database.largeWriteCheckpointPages)
            let session = try store.share(through: PostgresSharing(database.configuration))
            let taken = Transfers()
            let updates = session.statusUpdates()
            Task { for await status in updates { if let transfer = status.transfer { taken.append(transfer) } } }
            try await session.synchronize()
            let names = try await store.database.read { db in try String.fetchAll(db, sql: "SELECT name FROM Board ORDER BY name") }
            XCTAssertEqual(names.count, 30_000)
            XCTAssertEqual(names.first, "Board 00001")
            XCTAssertEqual(names.last, "Board 30000")
            let server = try await database.withConnection { connection in
                var rows: [UUID: String] = [:]
                for try await (id, name) in try await connection.query(#"SELECT "Z_ID", name FROM "Board""#, logger: ServerTestDatabase.logger).decode((UUID, String).self) {
                    rows[id] = name
                }
                return rows
            }
            let local = try await store.database.read { db in
                try Row.fetchAll(db, sql: """
                    SELECT g.id, b.name, s."row" FROM Board b JOIN \(GlobalIDs.table) g ON g.entity = 'Board' AND g.rowKey = b.Z_PK
                    JOIN \(SharingState.baseTable) s ON s.id = g.id
                    """).map { row -> (UUID?, String, String) in (UUID(bytes: row[0]), row[1], row[2]) }
            }
            XCTAssertEqual(local.count, 30_000, "every board has a global ID and a base")
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: local.map { ($0.0 ?? UUID(), $0.1) }), server, "each row is named by its own server row's ID")
            for (id, name, base) in local.prefix(50) + local.suffix(50) {
                XCTAssertEqual(base, RowImage.json(["name": .string(name)]), "the base of \(id?.uuidString ?? "?") is its server row")
            }
            // Reported at most every quarter second: some pages may go unreported.
            let done = taken.all.filter { $0.direction == .taking }.map(\.done)
            XCTAssertFalse(done.isEmpty, "the join said how far it got")
            XCTAssertTrue(done.allSatisfy { $0 % 5_000 == 0 && $0 <= 30_000 } && done == done.sorted(), "pages of 5,000: \(done)")
            let cacheAfter = try await store.database.write { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") }
            XCTAssertEqual(cacheAfter, cacheBefore, "the page cache is back to its size before the join")
            let checkpointAfter = try await store.database.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") }
            XCTAssertEqual(checkpointAfter, checkpointBefore, "the WAL is checkpointed as often as before the join")
            await session.stop()
        }
    }

    /// A join's and a resync's pages run as a batch job (`SCHED_BATCH`), so that they never
    /// preempt a window's main loop, and the thread is scheduled as before afterwards, when
    /// the write succeeds and when it fails.
    func testALargeWriteRunsAsABatchJobAndGivesTheThreadBack() throws {
        let SCHED_BATCH: Int32 = 3
        try DatabaseQueue().write { db in
            XCTAssertEqual(sched_getscheduler(0), SCHED_OTHER)
            let inside = try db.withLargeWriteCache { sched_getscheduler(0) }
            XCTAssertEqual(inside, SCHED_BATCH)
            XCTAssertEqual(sched_getscheduler(0), SCHED_OTHER)
            XCTAssertThrowsError(try db.withLargeWriteCache { () throws -> Void in throw CocoaError(.fileWriteUnknown) })
            XCTAssertEqual(sched_getscheduler(0), SCHED_OTHER)
        }
    }

    /// While a join's or a resync's pages are written, the WAL is checkpointed only once it
    /// holds `largeWriteCheckpointPages` pages, on the writer every save of the store goes
    /// through; afterwards as before, also when the pages' writing fails or is cancelled.
    func testLargeWritesSpaceTheirCheckpointsAndGiveTheWriterBack() async throws {
        let pool = try DatabasePool(path: try temporaryFolder(self).appendingPathComponent("large.sqlite").path)
        let autocheckpoint = { @Sendable () async throws -> Int? in
            try await pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") }
        }
        let before = try await autocheckpoint()
        XCTAssertEqual(before, 1_000, "SQLite's own")
        let inside = try await pool.withLargeWriteCheckpoints { try await autocheckpoint() }
        XCTAssertEqual(inside, Database.largeWriteCheckpointPages)
        let after = try await autocheckpoint()
        XCTAssertEqual(after, before)
        do {
            try await pool.withLargeWriteCheckpoints { () async throws -> Void in throw CocoaError(.fileWriteUnknown) }
            XCTFail("the error goes through")
        } catch {}
        let afterFailure = try await autocheckpoint()
        XCTAssertEqual(afterFailure, before)
        // A session stopped while it joins: its task is cancelled in the middle.
        let joining = Task { try await pool.withLargeWriteCheckpoints { try await Task.sleep(for: .seconds(60)) } }
        var waited = 0
        while try await autocheckpoint() != Database.largeWriteCheckpointPages, waited < 500 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        joining.cancel()
        let outcome = await joining.result
        XCTAssertThrowsError(try outcome.get(), "cancelled")
        let afterCancel = try await autocheckpoint()
        XCTAssertEqual(afterCancel, before)
    }

    /// A join's relationship may name an object of a later page: the IDs of the objects a
    /// relationship can name are read before the first page (of the other entities, only
    /// their count). Items 4,001 to 5,000, of the first page, name parents of the second.
    func testAJoinTakesRelationshipsToObjectsOfLaterPages() async throws {
        let model = try Model(entities: [EntityDescription(
            name: "Item", attributes: [AttributeDescription(name: "name", type: .string)],
            relationships: [RelationshipDescription(name: "parent", destinationEntity: "Item", inverseName: "children"),
                            RelationshipDescription(name: "children", destinationEntity: "Item", inverseName: "parent", isToMany: true)])])
        try await ServerTestDatabase.with { database in
            try await database.withConnection { connection in
                try await ServerSchema(model: model).create(on: connection, logger: ServerTestDatabase.logger)
                try await ServerTestDatabase.execute("""
                    WITH ids AS (SELECT n, gen_random_uuid() AS id FROM generate_series(1, 6000) n)
                    INSERT INTO "Item" ("Z_ID", name, parent)
                    SELECT a.id, 'Item ' || lpad(a.n::text, 4, '0'), b.id FROM ids a LEFT JOIN ids b ON b.n = a.n + 1000 ORDER BY a.n
                    """, on: connection)
            }
            let store = try PersistentStore(url: try temporaryFolder(self).appendingPathComponent("items.sqlite"), model: model)
            let session = try store.share(through: PostgresSharing(database.configuration))
            try await session.synchronize()
            let rows = try await store.database.read { db in
                try Row.fetchAll(db, sql: "SELECT i.name, p.name FROM Item i LEFT JOIN Item p ON p.Z_PK = i.parent ORDER BY i.name")
            }
            XCTAssertEqual(rows.count, 6_000)
            for (index, row) in rows.enumerated() {
                let parent = index + 1_001 <= 6_000 ? String(format: "Item %04d", index + 1_001) : nil
                XCTAssertEqual(row[1] as String?, parent, "the parent of \(row[0] as String)")
            }
            let rejected = try await store.database.read { db in try SharingState.rejectedChanges(in: db) }
            XCTAssertEqual(rejected.count, 0, "no change was refused: \(rejected.prefix(3))")
            await session.stop()
        }
    }

    /// A store of 20,032 World Cup teams shares with an empty database through
    /// `fetched-results apply`, killed (SIGKILL) at random moments and started again: the
    /// server's count never goes back, the last run ends with the server equal to the store,
    /// and the server's log holds one change a team.
    func testABigStoreKilledAtRandomMomentsWhileItSharesResumesAndEndsEqualToTheServer() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let url = folder.appendingPathComponent("big.sqlite")
            let desktop = ApplyProcess(store: url, executable: executable, errorFile: folder.appendingPathComponent("big.log"))
            // World Cup's 32 teams, then 20,000 more written as the sqlite3 shell would.
            try desktop.start()
            desktop.finish()
            try await DatabaseQueue(path: url.path).write { db in
                for number in 0..<20_000 {
                    try db.execute(sql: "INSERT INTO Team (teamName, qualifyingZone, wins) VALUES (?, ?, ?)",
                                   arguments: ["Team \(number)", ["Europe", "Africa", "Asia"][number % 3], number % 7])
                }
            }
            let counts = try await runKilledAtRandomMoments(desktop, sharing: database.url) { try await serverCount(database, entity: "Team") }
            print("BigStoreSharingTests: the server held \(counts) teams after each kill")
            XCTAssertEqual(counts, counts.sorted(), "what a killed run committed stays on the server")
            try desktop.start()
            desktop.finish()

            let local = try await localTeams(url)
            let server = try await serverTeams(database)
            XCTAssertEqual(local.count, 20_032)
            XCTAssertEqual(server.sorted(), local.sorted(), "the server holds exactly the store's teams")
            try await database.withConnection { connection in
                let rows = try await connection.query(#"SELECT count(*), count(DISTINCT object) FROM "Z_CHANGES""#, logger: ServerTestDatabase.logger)
                for try await (changes, objects) in rows.decode((Int, Int).self) {
                    XCTAssertEqual(changes, 20_032, "one change a team: nothing was sent twice")
                    XCTAssertEqual(objects, 20_032)
                }
            }
        }
    }

    /// A desktop joins a database of 20,032 teams (20,000 written on the server with SQL)
    /// through `fetched-results apply`, killed (SIGKILL) at random moments and started
    /// again: the last run ends with the store equal to the server, and sends nothing back.
    func testADesktopJoiningABigDatabaseKilledAtRandomMomentsResumesAndEndsEqualToTheServer() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let sharer = ApplyProcess(store: folder.appendingPathComponent("a.sqlite"), executable: executable,
                                      errorFile: folder.appendingPathComponent("a.log"))
            try sharer.start(sharing: database.url)
            sharer.finish()
            try await database.withConnection { connection in
                try await ServerTestDatabase.execute("""
                    INSERT INTO "Team" ("Z_ID", "teamName", "qualifyingZone", wins)
                    SELECT gen_random_uuid(), 'Team ' || n, (ARRAY['Europe', 'Africa', 'Asia'])[n % 3 + 1], n % 7 FROM generate_series(1, 20000) n
                    """, on: connection)
            }
            let joiner = ApplyProcess(store: folder.appendingPathComponent("b.sqlite"), executable: executable,
                                      errorFile: folder.appendingPathComponent("b.log"))
            let counts = try await runKilledAtRandomMoments(joiner, sharing: database.url) { try await localTeams(joiner.store).count }
            print("BigStoreSharingTests: the joining store held \(counts) teams after each kill")
            try joiner.start()
            joiner.finish()
            let server = try await serverTeams(database)
            XCTAssertEqual(server.count, 20_032)
            let local = try await localTeams(joiner.store)
            XCTAssertEqual(local.sorted(), server.sorted(), "the store holds exactly the server's teams")
            try await database.withConnection { connection in
                let rows = try await connection.query(#"SELECT count(*) FROM "Z_CHANGES""#, logger: ServerTestDatabase.logger)
                for try await changes in rows.decode(Int.self) { XCTAssertEqual(changes, 20_032, "the joining desktop sent nothing back") }
            }
        }
    }
}

/// Runs `process` four times (sharing through `url` the first), each killed with SIGKILL
/// after a random 0.3 to 3.3 s; returns what `count` says after each kill.
private func runKilledAtRandomMoments(_ process: ApplyProcess, sharing url: String, count: () async throws -> Int) async throws -> [Int] {
    // A write to a killed process's input must fail, not end the test process.
    signal(SIGPIPE, SIG_IGN)
    let seed = SeededGenerator.seed()
    print("BigStoreSharingTests seed \(seed) (SEED=\(seed) replays it)")
    var random = SeededGenerator(seed: seed)
    var counts: [Int] = []
    for run in 0..<4 {
        try process.start(sharing: run == 0 ? url : nil)
        try await Task.sleep(for: .milliseconds(300 + Int(random.next() % 3_000)))
        process.kill()
        counts.append(try await count())
    }
    return counts
}

/// Each team of a World Cup store as `name|zone|wins`.
private func localTeams(_ store: URL) async throws -> [String] {
    var configuration = Configuration()
    configuration.readonly = true
    return try await DatabaseQueue(path: store.path, configuration: configuration).read { db in
        try Row.fetchAll(db, sql: "SELECT teamName, qualifyingZone, wins FROM Team").map { "\($0[0] as String)|\($0[1] as String)|\($0[2] as Int)" }
    }
}

/// Each team of the server as `name|zone|wins`.
private func serverTeams(_ database: ServerTestDatabase) async throws -> [String] {
    try await database.withConnection { connection in
        var rows: [String] = []
        for try await (name, zone, wins) in try await connection.query(#"SELECT "teamName", "qualifyingZone", wins FROM "Team""#, logger: ServerTestDatabase.logger)
            .decode((String, String, Int).self) { rows.append("\(name)|\(zone)|\(wins)") }
        return rows
    }
}

/// How many rows the server's table of `entity` holds.
private func serverCount(_ database: ServerTestDatabase, entity: String = "Board") async throws -> Int {
    try await database.withConnection { connection in
        var count = 0
        for try await value in try await connection.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \"\(entity)\""), logger: ServerTestDatabase.logger).decode(Int.self) {
            count = value
        }
        return count
    }
}

/// The transfers a session's status showed, collected from any thread.
private final class Transfers: @unchecked Sendable {
    private let lock = NSLock()
    private var transfers: [SharingStatus.Transfer] = []
    var all: [SharingStatus.Transfer] { lock.withLock { transfers } }
    func append(_ transfer: SharingStatus.Transfer) { lock.withLock { transfers.append(transfer) } }
}
