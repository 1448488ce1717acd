import Foundation
import XCTest

// What the tests of the command line read: the JSON lines a command prints, and its batches.

/// The sections of a printed line, as (name, count).
public func sectionCounts(_ line: [String: Any]) throws -> [(String, Int)] {
    try XCTUnwrap(line["sections"] as? [[String: Any]]).map { ($0["name"] as! String, $0["count"] as! Int) }
}

/// Applies a batch to rows standing for the old sections by the table-view batch rules
/// (deletes in old coordinates, inserts in new ones, a move from old to new, never two
/// operations on one row) and checks it gives the new sections.
public func checkBatch(_ changes: [[String: Any]], from old: [(String, Int)], to new: [(String, Int)], write: Int) throws {
    var rows = old.enumerated().map { section, entry in (0..<entry.1).map { "\(section).\($0)" } }
    var deletedSections = Set<Int>(), insertedSections: [Int: String] = [:]
    var touched = Set<[Int]>(), removed = Set<[Int]>(), inserted: [[Int]: String] = [:]
    for change in changes {
        let type = change["type"] as! String
        if change["kind"] as? String == "section" {
            if type == "delete" { deletedSections.insert(change["index"] as! Int) }
            else if type == "insert" { insertedSections[change["index"] as! Int] = change["name"] as? String }
            else { XCTFail("write \(write): unexpected section change \(change)") }
            continue
        }
        let from = change["from"] as? [Int], to = change["to"] as? [Int]
        if let from, type != "insert" {
            XCTAssertTrue(touched.insert(from).inserted, "write \(write): two operations on row \(from)")
            if type != "update" { removed.insert(from) }
            XCTAssertTrue(from[0] < rows.count && from[1] < rows[from[0]].count, "write \(write): \(from) is not an old row")
        }
        if type == "update" { continue }
        if type == "insert" || type == "move", let to {
            let row = type == "move" ? rows[from![0]][from![1]] : "new"
            XCTAssertNil(inserted.updateValue(row, forKey: to), "write \(write): two rows inserted at \(to)")
        }
    }
    for (section, items) in rows.enumerated() {
        rows[section] = items.enumerated().filter { !removed.contains([section, $0.offset]) }.map(\.element)
    }
    var names = old.map(\.0)
    for section in deletedSections.sorted(by: >) {
        rows.remove(at: section)
        names.remove(at: section)
    }
    for (section, name) in insertedSections.sorted(by: { $0.key < $1.key }) {
        rows.insert([], at: section)
        names.insert(name, at: section)
    }
    for (path, row) in inserted.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
        rows[path[0]].insert(row, at: path[1])
    }
    XCTAssertEqual(names, new.map(\.0), "write \(write): sections")
    XCTAssertEqual(rows.map(\.count), new.map(\.1), "write \(write): counts")
}

/// The lines a process writes, read as they come.
public final class LineReader: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = Data()

    public init(_ handle: FileHandle) {
        handle.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else { return }
            self.lock.withLock { self.buffer.append(data) }
        }
    }

    /// The first `count` complete lines as JSON objects, waiting up to 10 s for them.
    public func waitFor(_ count: Int) throws -> [[String: Any]] {
        let deadline = Date().addingTimeInterval(10)
        while true {
            let lines = lock.withLock { buffer.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).dropLast(buffer.last == UInt8(ascii: "\n") ? 0 : 1) }
            if lines.count >= count || Date() > deadline {
                let json = try lines.map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0)) as? [String: Any]) }
                XCTAssertGreaterThanOrEqual(json.count, count, "the watcher printed \(json.count) lines, not \(count), in 10 s")
                if json.count < count { throw CancellationError() }
                return json
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}
