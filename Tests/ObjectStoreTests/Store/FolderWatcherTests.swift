import Foundation
import GRDB
@testable import ObjectStore
import Synchronization
import TestSupport
import XCTest

final class FolderWatcherTests: XCTestCase {
    /// A store's watch wakes for writes to its own files only: another store in the same
    /// folder, written 50 times, brings this process no event, while one write of the store
    /// does; and a store file deleted and made again is watched again.
    func testOnlyWritesOfTheStoresOwnFilesWakeIt() throws {
        let watcher = try XCTUnwrap(FolderWatcher.shared, "inotify is available here")
        let folder = try temporaryFolder(self)
        let mine = folder.appendingPathComponent("mine.sqlite"), other = folder.appendingPathComponent("other.sqlite")
        let openWAL = { (url: URL) throws -> DatabaseQueue in
            let queue = try DatabaseQueue(path: url.path)
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA journal_mode=WAL")
                try db.execute(sql: "CREATE TABLE IF NOT EXISTS t (x)")
            }
            return queue
        }
        var mineDB: DatabaseQueue? = try openWAL(mine)
        let otherDB = try openWAL(other)
        let told = Mutex(0)
        let token = try XCTUnwrap(watcher.watch(mine) { told.withLock { $0 += 1 } })
        defer { token.cancel() }
        let before = watcher.eventCount(inFolderOf: mine)
        for value in 0..<50 { try otherDB.write { try $0.execute(sql: "INSERT INTO t VALUES (?)", arguments: [value]) } }
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(watcher.eventCount(inFolderOf: mine), before, "another store's writes bring no event")
        XCTAssertEqual(told.withLock { $0 }, 0)

        try mineDB!.write { try $0.execute(sql: "INSERT INTO t VALUES (1)") }
        XCTAssertTrue(waitUntil({ told.withLock { $0 } > 0 }), "a write of the store's own WAL is told")

        // Deleted (every connection closed) and made again by another program.
        mineDB = nil
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: mine.path + suffix) }
        mineDB = try openWAL(mine)
        XCTAssertTrue(waitUntil({ told.withLock { $0 } > 1 }), "the new file is told")
        Thread.sleep(forTimeInterval: 0.2)
        let afterRemake = told.withLock { $0 }
        try mineDB!.write { try $0.execute(sql: "INSERT INTO t VALUES (2)") }
        XCTAssertTrue(waitUntil({ told.withLock { $0 } > afterRemake }), "the new file's writes are told")
    }

    /// A big commit of this process (a transaction whose pages fit its cache, as a join's
    /// page does) writes its WAL page by page at its end, each write an event; the feed
    /// drops them all (the commit's end tells of it), so the watcher reads none while the
    /// commit writes: the kernel merges them into one, read after. A write of another
    /// program right after is still told, and so is another store's in the same folder.
    func testABigCommitOfThisProcessIsAFewEventsNotOneAWrite() throws {
        let watcher = try XCTUnwrap(FolderWatcher.shared, "inotify is available here")
        let folder = try temporaryFolder(self)
        let url = folder.appendingPathComponent("store.sqlite")
        let store = try PersistentStore(url: url, model: Fixtures.worldCupModel())
        let delivered = Mutex(0)
        let token = try store.observeChanges(on: DispatchQueue(label: "subscriber")) { _ in delivered.withLock { $0 += 1 } }
        defer { token.cancel() }
        let otherURL = folder.appendingPathComponent("other.sqlite")
        let other = try DatabaseQueue(path: otherURL.path)
        try other.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode=WAL")
            try db.execute(sql: "CREATE TABLE t (x)")
        }
        let otherTold = Mutex(0)
        let otherWatch = try XCTUnwrap(watcher.watch(otherURL) { otherTold.withLock { $0 += 1 } })
        defer { otherWatch.cancel() }
        Thread.sleep(forTimeInterval: 0.3)

        let before = watcher.eventCount(inFolderOf: url)
        try store.database.write { db in
            try db.execute(sql: "PRAGMA cache_size = -65536")
            let insert = try db.makeStatement(sql: #"INSERT INTO "Team" ("teamName", "qualifyingZone", "wins") VALUES (?, ?, ?)"#)
            for index in 0..<30_000 { try insert.execute(arguments: ["Team \(index) with a long name to fill pages", "Zone \(index % 7)", index]) }
        }
        XCTAssertTrue(waitUntil({ delivered.withLock { $0 } > 0 }), "the commit is told")
        Thread.sleep(forTimeInterval: 0.3)
        let walPages = (try FileManager.default.attributesOfItem(atPath: url.path + "-wal")[.size] as? Int ?? 0) / 4096
        XCTAssertGreaterThan(walPages, 300, "the commit wrote hundreds of pages, each an event")
        let events = watcher.eventCount(inFolderOf: url) - before
        XCTAssertLessThanOrEqual(events, 4, "the commit's writes were read as a few events, not one a write (\(walPages) pages)")

        // Another program's write of this store and of another store in the folder: told.
        let told = delivered.withLock { $0 }
        let program = try DatabaseQueue(path: url.path)
        try program.write { try $0.execute(sql: #"UPDATE "Team" SET wins = -1 WHERE Z_PK = 1"#) }
        XCTAssertTrue(waitUntil({ delivered.withLock { $0 } > told }), "another program's commit is told")
        try other.write { try $0.execute(sql: "INSERT INTO t VALUES (1)") }
        XCTAssertTrue(waitUntil({ otherTold.withLock { $0 } > 0 }), "another store's write is told")
    }
}
