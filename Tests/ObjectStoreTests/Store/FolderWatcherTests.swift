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
}
