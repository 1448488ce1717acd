import Foundation
import GRDB
import ObjectStore
import XCTest

/// Another connection writing the store at the same time (another process, the `sqlite3`
/// shell): a save waits for it, and one that cannot get the lock keeps every change.
final class ConcurrentWriterTests: XCTestCase {
    /// A store with the World Cup teams, and its file.
    private func makeStore(busyTimeout: TimeInterval = PersistentStore.defaultBusyTimeout) throws -> (PersistentStore, URL) {
        let url = try temporaryFolder(self).appendingPathComponent("teams.sqlite")
        try Fixtures.insertTeams(into: ObjectContext(store: PersistentStore(url: url, model: Fixtures.worldCupModel())))
        return (try PersistentStore(url: url, model: Fixtures.worldCupModel(), busyTimeout: busyTimeout), url)
    }

    /// Holds the write lock of the file at `url` on a connection of its own (as the `sqlite3`
    /// shell does inside `BEGIN IMMEDIATE`) for `seconds`, changing Ghana's wins to 9; returns
    /// once the lock is taken. The returned expectation is fulfilled after the commit.
    private func holdWriteLock(of url: URL, for seconds: TimeInterval) throws -> XCTestExpectation {
        let taken = DispatchSemaphore(value: 0)
        let committed = expectation(description: "the other writer committed")
        let other = try DatabaseQueue(path: url.path)
        Thread.detachNewThread {
            try! other.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                try db.execute(sql: "UPDATE Team SET wins = 9 WHERE teamName = 'Ghana'")
                taken.signal()
                Thread.sleep(forTimeInterval: seconds)
                try db.execute(sql: "COMMIT")
            }
            committed.fulfill()
        }
        taken.wait()
        return committed
    }

    private func team(_ name: String, in context: ObjectContext) throws -> Team {
        try XCTUnwrap(context.fetch(FetchRequest<Team>(predicate: FetchPredicate(format: "teamName == %@", name))).first)
    }

    func testASaveWaitsForAnotherWritersTransactionToEnd() throws {
        let (store, url) = try makeStore()
        let context = ObjectContext(store: store)
        try team("Brazil", in: context).wins += 1
        let committed = try holdWriteLock(of: url, for: 0.5)
        try context.save()  // before the busy timeout: failed at once ("database is locked")
        wait(for: [committed], timeout: 10)
        let reopened = ObjectContext(store: try PersistentStore(url: url, model: Fixtures.worldCupModel()))
        XCTAssertEqual(try team("Brazil", in: reopened).wins, 1)
        XCTAssertEqual(try team("Ghana", in: reopened).wins, 9, "the other writer's change is kept too")
    }

    func testASaveThatCannotGetTheLockKeepsEveryChangeForTheNextSave() throws {
        let (store, url) = try makeStore(busyTimeout: 0.2)
        let context = ObjectContext(store: store)
        let brazil = try team("Brazil", in: context)
        brazil.wins += 2
        let inserted = try context.insert(Team.self)
        inserted.teamName = "Atlantis"
        inserted.qualifyingZone = "Oceania"
        let committed = try holdWriteLock(of: url, for: 1.5)
        XCTAssertThrowsError(try context.save()) { error in
            let storeError = error as? StoreError
            XCTAssertEqual(storeError?.kind, .busy, "\(error)")
            XCTAssertTrue(storeError?.message.contains("every change is kept") == true, "\(error)")
            XCTAssertTrue(storeError?.message.contains("0.2 s") == true, "names the timeout: \(error)")
        }
        XCTAssertTrue(context.hasChanges)
        XCTAssertEqual(brazil.wins, 2)
        XCTAssertTrue(inserted.isInserted)
        wait(for: [committed], timeout: 10)
        try context.save()
        let reopened = ObjectContext(store: try PersistentStore(url: url, model: Fixtures.worldCupModel()))
        XCTAssertEqual(try team("Brazil", in: reopened).wins, 2)
        XCTAssertEqual(try team("Atlantis", in: reopened).qualifyingZone, "Oceania")
        XCTAssertEqual(try team("Ghana", in: reopened).wins, 9)
    }

    func testOpeningWaitsForAnotherWriterToo() throws {
        let (_, url) = try makeStore()
        let committed = try holdWriteLock(of: url, for: 0.5)
        var newModel = Fixtures.team
        newModel.attributes.append(AttributeDescription(name: "coach", type: .string, isOptional: true))
        // Migrating needs the write lock: it waits, then migrates.
        let store = try PersistentStore(url: url, model: try Model(entities: [newModel]))
        wait(for: [committed], timeout: 10)
        XCTAssertEqual(try ObjectContext(store: store).count(for: FetchRequest<Team>()), Fixtures.worldCupTeams.count)
    }
}
