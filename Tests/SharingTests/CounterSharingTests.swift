import Foundation
import GRDB
import PostgresNIO
import ObjectStore
@testable import Sharing
import TestSupport
import XCTest

/// Counters shared through the server: taps on one object from several desktops add up,
/// offline taps too, no conflict is ever recorded for a counter, and a push whose end a
/// desktop lost adds nothing twice.
final class CounterSharingTests: XCTestCase {
    /// Boards with a tap counter.
    static let model = try! Model(entities: [
        EntityDescription(name: "Board", attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "taps", type: .integer, defaultValue: .integer(0), minValue: .integer(0), merge: .add),
        ]),
    ])

    private func tap(_ desktop: SharedStore, _ count: Int = 1) throws {
        try Self.tap(desktop.store, count)
    }

    /// `count` taps on the board Home of `store`, each saved.
    private static func tap(_ store: PersistentStore, _ count: Int, board name: String = "Home") throws {
        let context = ObjectContext(store: store, queue: DispatchQueue(label: "taps"))
        try context.performAndWait {
            let board = try XCTUnwrap(context.fetch(FetchRequest<ManagedObject>(entityName: "Board", predicate: try FetchPredicate(format: "name == %@", name))).first)
            for _ in 0..<count {
                try board.setValue((board.attributeValue(forKey: "taps").integer ?? 0) + 1, forKey: "taps")
                try context.save()
            }
        }
    }

    private func taps(_ desktop: SharedStore) throws -> Int {
        try desktop.store.database.read { db in try Int.fetchOne(db, sql: "SELECT taps FROM Board WHERE name = 'Home'") ?? -1 }
    }

    private func serverTaps(_ database: ServerTestDatabase) async throws -> Int {
        try await database.withConnection { connection in
            for try await taps in try await connection.query(#"SELECT taps FROM "Board" WHERE name = 'Home'"#, logger: ServerTestDatabase.logger).decode(Int.self) { return taps }
            return -1
        }
    }

    /// Two desktops with a board each has.
    private func twoDesktops(_ database: ServerTestDatabase, in folder: URL) async throws -> (SharedStore, SharedStore) {
        let a = try SharedStore(folder.appendingPathComponent("a.sqlite"), database: database, model: Self.model)
        try a.insertBoard("Home")
        try await a.session.synchronize()
        let b = try SharedStore(folder.appendingPathComponent("b.sqlite"), database: database, model: Self.model)
        try await b.session.synchronize()
        XCTAssertEqual(try taps(b), 0)
        return (a, b)
    }

    /// Two desktops tapping one board at once, 60 taps each (each a save, pushed as it
    /// comes): both end with 120 and no conflict. Before counters, both desktops often
    /// wrote the same new value and about half the taps were lost without a word.
    func testTwoDesktopsTappingOneBoardAtOnceBothCountEveryTap() async throws {
        try await ServerTestDatabase.with { database in
            let (a, b) = try await twoDesktops(database, in: try temporaryFolder(self))
            let stores = [a.store, b.store]
            DispatchQueue.concurrentPerform(iterations: 2) { i in
                do { try Self.tap(stores[i], 60) } catch { XCTFail("desktop \(i): \(error)") }
            }
            try await a.session.synchronize()
            try await b.session.synchronize()
            try await a.session.synchronize()
            let server = try await serverTaps(database)
            XCTAssertEqual(server, 120)
            XCTAssertEqual(try taps(a), 120)
            XCTAssertEqual(try taps(b), 120)
            XCTAssertEqual(try a.session.conflicts(), [])
            XCTAssertEqual(try b.session.conflicts(), [])
            await a.stop()
            await b.stop()
        }
    }

    /// Two processes sharing one store file (the viewer and a script): each runs a sharing
    /// session, and both tap. Their rounds take turns (a lock beside the store), and every
    /// tap counts once, on the server and on the other desktop.
    func testTwoSessionsOnOneStoreFileTappingAtOnceCountEveryTapOnce() async throws {
        try await ServerTestDatabase.with { database in
            let folder = try temporaryFolder(self)
            let (a, b) = try await twoDesktops(database, in: folder)
            // A second handle on A's file, as another process has: its own pool, its own
            // session.
            let a2 = try SharedStore(a.url, database: database, model: Self.model)
            let stores = [a.store, a2.store, b.store]
            DispatchQueue.concurrentPerform(iterations: 3) { i in
                do { try Self.tap(stores[i], 40) } catch { XCTFail("store \(i): \(error)") }
            }
            try await eventually("every store and the server hold all 120 taps", timeout: .seconds(30)) {
                for session in [a.session, a2.session, b.session] { _ = try? await session.synchronize() }
                return try await self.serverTaps(database) == 120 && self.taps(a) == 120 && self.taps(b) == 120
            }
            XCTAssertEqual(try a.session.conflicts() + b.session.conflicts(), [])
            await a2.stop()
            await a.stop()
            await b.stop()
        }
    }

    /// The lock that makes rounds on one store file take turns: a second holder waits until
    /// the first releases it.
    func testARoundWaitsForAnotherRoundOnTheSameStoreFile() async throws {
        let url = try temporaryFolder(self).appendingPathComponent("s.sqlite")
        let acquired = await RoundLock(store: url).acquire()
        let first = try XCTUnwrap(acquired)
        let taken = Flag()
        let second = Task {
            let held = await RoundLock(store: url).acquire()
            taken.set()
            return held
        }
        try await Task.sleep(for: .milliseconds(300))
        XCTAssertFalse(taken.isSet, "the second waits while the first holds it")
        first.release()
        let held = await second.value
        XCTAssertNotNil(held, "taken once the first let go")
        held?.release()
        let inMemory = await RoundLock(store: nil).acquire()
        XCTAssertNil(inMemory, "a store in memory has no file to lock")
    }

    /// Taps made on both desktops while the server is stopped add up once it is back.
    func testOfflineTapsOnBothDesktopsAddUpOnReconnect() async throws {
        try await ServerTestDatabase.with { database in
            let (a, b) = try await twoDesktops(database, in: try temporaryFolder(self))
            try ServerTestDatabase.server("stop")
            var restarted = false
            defer { if !restarted { try? ServerTestDatabase.server("start") } }
            try tap(a, 3)
            try tap(b, 4)
            try ServerTestDatabase.server("start")
            restarted = true
            try await eventually("both desktops take every tap", timeout: .seconds(40)) {
                _ = try? await a.session.synchronize()
                _ = try? await b.session.synchronize()
                return try self.taps(a) == 7 && self.taps(b) == 7
            }
            let server = try await serverTaps(database)
            XCTAssertEqual(server, 7)
            XCTAssertEqual(try a.session.conflicts() + b.session.conflicts(), [])
            await a.stop()
            await b.stop()
        }
    }

    /// A desktop killed after recording a push of its taps: before sending it (the push
    /// then goes with the next session), or after the server committed it but before the
    /// store took its end (the next session finds it in the log, or sends it again and the
    /// server adds nothing twice). Either way the taps count once.
    func testAPushWhoseEndWasLostAddsItsTapsOnce() async throws {
        for (case_, serverHasIt, sentTwice) in [("killed before sending", false, false), ("killed after the server's commit", true, false),
                                                ("sent again by another process after the server's commit", true, true)] {
            try await ServerTestDatabase.with { database in
                let folder = try temporaryFolder(self)
                let (a, b) = try await twoDesktops(database, in: folder)
                await a.stop()
                try tap(b, 2)
                try await b.session.synchronize()
                // A, not sharing now, taps 3 times; then half of a push: recorded in flight,
                // and sent to the server or not, its end never taken.
                try tap(a, 3)
                let outbox = Outbox(store: a.store, limits: SharingLimits())
                let inFlight = try await a.store.database.write { db -> SharingState.PushInFlight in
                    let operations = try outbox.pending(in: db)
                    XCTAssertEqual(operations.first?.counterDeltas, ["taps": .integer(3)], case_)
                    let inFlight = SharingState.PushInFlight(operations)
                    try SharingState.setPushInFlight(inFlight, in: db)
                    return inFlight
                }
                if serverHasIt {
                    let operations = try await a.store.database.write { db in try outbox.pending(in: db) }
                    XCTAssertEqual(operations, [], "\(case_): the taps are the push's in flight, not sent twice")
                    try await database.withConnection { connection in
                        let writer = ServerWriter(model: Self.model, policy: .error, logger: ServerTestDatabase.logger)
                        let recorded = try await a.store.database.read { db in
                            try inFlight.deltas.keys.map { id in
                                let entity = Self.model.entity(named: "Board")!
                                let base = try SharingState.base(of: id, entity: entity, model: Self.model, in: db)!.values!
                                return Outbox.Operation(entity: entity, id: id, kind: .update, values: base, changedKeys: [], base: base,
                                                        counterDeltas: inFlight.deltas(of: id, entity: entity))
                            }
                        }
                        _ = try await connection.withTransaction(logger: ServerTestDatabase.logger) { connection in
                            try await writer.push(recorded, identity: inFlight.id, on: connection)
                        }
                        if sentTwice {
                            // Another process of A's store sends it again meanwhile: nothing twice.
                            _ = try await connection.withTransaction(logger: ServerTestDatabase.logger) { connection in
                                try await writer.push(recorded, identity: inFlight.id, on: connection)
                            }
                        }
                    }
                    let server = try await serverTaps(database)
                    XCTAssertEqual(server, 5, case_)
                }
                let again = try SharedStore(a.url, database: database, model: Self.model)
                try await again.session.synchronize()
                try await b.session.synchronize()
                let server = try await serverTaps(database)
                XCTAssertEqual(server, 5, "\(case_): 2 taps of B's and 3 of A's, once")
                XCTAssertEqual(try taps(again), 5, case_)
                XCTAssertEqual(try taps(b), 5, case_)
                let left = try await again.store.database.read { db in try SharingState.pushInFlight(in: db) }
                XCTAssertNil(left, "\(case_): the push is no longer in flight")
                await again.stop()
                await b.stop()
            }
        }
    }
}

extension Value {
    var integer: Int? { if case .integer(let v) = self { Int(v) } else { nil } }
}

extension Outbox.Operation: Equatable {
    public static func == (a: Self, b: Self) -> Bool { a.id == b.id && a.changedKeys == b.changedKeys && a.counterDeltas == b.counterDeltas }
}
