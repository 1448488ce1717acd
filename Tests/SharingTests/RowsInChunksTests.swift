import Foundation
import GRDB
import ObjectStore
@testable import Sharing
import TestSupport
import XCTest

/// The statements that write and read many rows at once (a pulled page's rows and bases, a
/// join's inserts): every row written once with its own values, whatever the count and the
/// chunk size, and values bound in order.
final class RowsInChunksTests: XCTestCase {
    func testChunksAreFullThenPowersOfTwoAndCoverEveryRow() {
        XCTAssertEqual(Database.chunkSizes(of: 237, limit: 100), [100, 100, 32, 4, 1])
        XCTAssertEqual(Database.chunkSizes(of: 0, limit: 100), [])
        XCTAssertEqual(Database.chunkSizes(of: 64, limit: 100), [64])
        for limit in [1, 3, 100, 200, 300] {
            var sizes: Set<Int> = []
            for count in 0...1_000 {
                let chunks = Database.chunkSizes(of: count, limit: limit)
                XCTAssertEqual(chunks.reduce(0, +), count, "\(count) rows, \(limit) a statement")
                XCTAssertTrue(chunks.allSatisfy { $0 <= limit && $0 > 0 }, "\(chunks)")
                XCTAssertEqual(chunks, chunks.sorted(by: >), "largest first")
                sizes.formUnion(chunks)
            }
            // One statement text for each size, kept compiled: a few, whatever the counts.
            XCTAssertLessThanOrEqual(sizes.count, limit.bitWidth - limit.leadingZeroBitCount + 1, "\(sizes.sorted())")
        }
    }

    /// Generated counts and chunk sizes: rows inserted, then some of them updated, then all
    /// read back by key, padded chunks and all, against what a row-by-row loop would leave.
    func testRowsInsertedUpdatedAndReadInChunksAreEachRowsOwn() throws {
        let seed = SeededGenerator.seed()
        print("RowsInChunksTests seed \(seed) (SEED=\(seed) replays it)")
        var generator = SeededGenerator(seed: seed)
        let queue = try DatabaseQueue(path: try temporaryFolder(self).appendingPathComponent("chunks.sqlite").path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (Z_PK INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, size INTEGER, data BLOB)")
        }
        var expected: [Int64: (name: String, size: Int64?, data: Data?)] = [:]
        for round in 0..<25 {
            let count = Int.random(in: 0...700, using: &generator)
            let limit = [1, 7, 100, 300].randomElement(using: &generator)!
            var rows: [(name: String, size: Int64?, data: Data?)] = []
            for n in 0..<count {
                let size: Int64? = Bool.random(using: &generator) ? Int64(n) : nil
                let data: Data? = n % 3 == 0 ? Data([UInt8(n % 256), 0, 1]) : nil
                rows.append((name: "r\(round)-\(n)", size: size, data: data))
            }
            var keys: [Int64] = []
            try queue.write { db in
                try db.insertRows(rows, into: "t", columns: ["name", "size", "data"], rowsPerStatement: limit, values: { (row: (name: String, size: Int64?, data: Data?), values: inout [DatabaseValue]) in
                    values += [row.name.databaseValue, row.size.databaseValue, row.data.databaseValue]
                }, inserted: { n in
                    XCTAssertEqual(db.changesCount, n)
                    let last = db.lastInsertedRowID
                    keys += (last - Int64(n) + 1)...last
                })
            }
            XCTAssertEqual(keys.count, count)
            for (key, row) in zip(keys, rows) { expected[key] = row }
            // Some rows of every round so far get new names and sizes, each its own.
            let all = expected.keys.sorted()
            let changed = all.filter { _ in Int.random(in: 0..<4, using: &generator) == 0 }
            let updates = changed.map { (key: $0, name: "u\(round)-\($0)", size: Int64.random(in: -5...5, using: &generator)) }
            try queue.write { db in
                try db.updateRows(updates, of: "t", columns: ["name", "size"], rowsPerStatement: limit) { update, values in
                    values += [update.key.databaseValue, update.name.databaseValue, update.size.databaseValue]
                }
            }
            for update in updates { expected[update.key]!.name = update.name; expected[update.key]!.size = update.size }
            // Read back by key, each asked once (as the callers do), in chunks of which the
            // last is padded with repeats, with two keys that no row has.
            let asked = (all + [-1, 1_000_000]).shuffled(using: &generator)
            var read: [Int64: Int] = [:]
            try queue.read { db in
                try db.forEachRow(matching: asked, leading: ["%"], sql: { "SELECT Z_PK, name, size, data FROM t WHERE name LIKE ? AND Z_PK IN (\($0))" }) { row in
                    let key: Int64 = row[0]
                    read[key, default: 0] += 1
                    let name: String = row[1], size: Int64? = row[2], data: Data? = row[3]
                    XCTAssertEqual(name, expected[key]?.name, "row \(key), seed \(seed)")
                    XCTAssertEqual(size, expected[key]?.size, "row \(key), seed \(seed)")
                    XCTAssertEqual(data, expected[key]?.data, "row \(key), seed \(seed)")
                }
            }
            XCTAssertEqual(read.count, expected.count, "every row read, seed \(seed)")
            XCTAssertTrue(read.values.allSatisfy { $0 == 1 }, "each row once, seed \(seed)")
        }
        let stored = try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
        XCTAssertEqual(stored, expected.count)
    }

    /// Values bound by hand must be as many as the statement's parameters: too few or too
    /// many is an error before anything runs, never a NULL or a value dropped.
    func testAStatementGivenTheWrongNumberOfValuesRunsNothing() throws {
        let queue = try DatabaseQueue(path: try temporaryFolder(self).appendingPathComponent("count.sqlite").path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (a TEXT, b TEXT)")
            let statement = try db.cachedStatement(sql: "INSERT INTO t (a, b) VALUES (?, ?)")
            XCTAssertThrowsError(try statement.execute(binding: ["x".databaseValue])) { error in
                XCTAssertTrue("\(error)".contains("1 values for a statement of 2 parameters"), "\(error)")
            }
            XCTAssertThrowsError(try statement.execute(binding: ["x", "y", "z"].map(\.databaseValue)))
            try statement.execute(binding: ["x", "y"].map(\.databaseValue))
            // A statement run again with new values takes those, not the last run's.
            try statement.execute(binding: ["p".databaseValue, .null])
        }
        let rows = try queue.read { db in try Row.fetchAll(db, sql: "SELECT a, b FROM t ORDER BY rowid") }
        XCTAssertEqual(rows.map { [$0[0] as String?, $0[1] as String?] }, [["x", "y"], ["p", nil]])
    }

    /// A push's end sets the bases of the rows the server holds as sent, but never over a
    /// newer one (a pull in between took a later version): generated stored versions and
    /// pushed versions, older, equal, newer and missing, against what a read-then-write
    /// would leave.
    func testBasesSetAfterAPushNeverReplaceANewerOne() throws {
        let seed = SeededGenerator.seed()
        print("RowsInChunksTests seed \(seed) (SEED=\(seed) replays it)")
        var generator = SeededGenerator(seed: seed)
        let queue = try DatabaseQueue(path: try temporaryFolder(self).appendingPathComponent("bases.sqlite").path)
        try queue.write { db in try SharingState.install(db) }
        var expected: [UUID: (version: Int64, json: String?)] = [:]
        for round in 0..<10 {
            let ids = expected.keys.sorted { $0.uuidString < $1.uuidString } + (0..<Int.random(in: 0...300, using: &generator)).map { _ in UUID() }
            let pushed = ids.filter { _ in Bool.random(using: &generator) }.map { id in
                let stored = expected[id]?.version ?? 0
                let version = max(1, stored + Int64.random(in: -2...2, using: &generator))
                return (id: id, entity: "Team", base: SharingState.Base(version: version, values: ["teamName": .string("r\(round) v\(version)")]))
            }
            try queue.write { db in try SharingState.setBases(pushed, keepingNewer: true, in: db) }
            for base in pushed where (expected[base.id]?.version ?? .min) < base.base.version {
                expected[base.id] = (base.base.version, base.base.storedJSON)
            }
            let stored = try queue.read { db in try SharingState.storedBases(of: Array(expected.keys) + [UUID()], in: db) }
            XCTAssertEqual(stored.count, expected.count, "seed \(seed)")
            for (id, base) in expected {
                XCTAssertEqual(stored[id]?.version, base.version, "seed \(seed)")
                XCTAssertEqual(stored[id]?.json, base.json, "seed \(seed)")
            }
        }
    }
}
