import Foundation
import GRDB
@testable import ObjectStore
import XCTest

final class SortDescriptorTests: XCTestCase {
    private func item(_ key: Int64, _ name: String?, price: Double? = nil, owner: TestObject? = nil) -> TestObject {
        let item = TestObject(entity: "Item", key: key, values: [
            "title": .string(""), "name": name.map(Value.string) ?? .null, "price": price.map(Value.double) ?? .null,
        ])
        if let owner {
            item.related["owner"] = [owner]
            owner.related["items", default: []].append(item)
        }
        return item
    }

    private func check(_ items: [TestObject], _ sort: [FetchSortDescriptor], expected: [Int64], owners: [TestObject] = [], file: StaticString = #filePath, line: UInt = #line) throws {
        let database = try makePredicateTestDatabase(self)
        try database.write { db in for object in owners + items { try insert(object, into: db) } }
        let fromSQL = try database.read { db in try sqlKeys(db, .true, sortedBy: sort) }
        XCTAssertEqual(fromSQL, expected, "SQL", file: file, line: line)
        XCTAssertEqual(memoryKeys(items, .true, sortedBy: sort), expected, "memory", file: file, line: line)
    }

    func testNilFirstAscendingAndLastDescending() throws {
        let items = [item(1, "b"), item(2, nil), item(3, "a"), item(4, nil)]
        try check(items, [FetchSortDescriptor(key: "name")], expected: [2, 4, 3, 1])
        try check(items, [FetchSortDescriptor(key: "name", ascending: false)], expected: [1, 3, 2, 4])
    }

    func testStringsSortByBytesUnlessOptionsFoldThem() throws {
        let items = [item(1, "b"), item(2, "B"), item(3, "a"), item(4, "É"), item(5, "e\u{301}"), item(6, "é"), item(7, "f")]
        try check(items, [FetchSortDescriptor(key: "name")], expected: [2, 3, 1, 5, 7, 4, 6])
        // Folded to lowercase NFC, the three spellings of é tie and keep the key order (the
        // tiebreaker), after f by their bytes; without diacritics they are e, before f.
        try check(items, [FetchSortDescriptor(key: "name", options: .caseInsensitive)], expected: [3, 1, 2, 7, 4, 5, 6])
        try check(items, [FetchSortDescriptor(key: "name", options: [.caseInsensitive, .diacriticInsensitive])], expected: [3, 1, 2, 4, 5, 6, 7])
    }

    func testNumbersAcrossARelationshipAndSeveralDescriptors() throws {
        let rich = TestObject(entity: "Owner", key: 1, values: ["name": .string("Rich"), "rank": .integer(1)])
        let poor = TestObject(entity: "Owner", key: 2, values: ["name": .string("Poor"), "rank": .integer(2)])
        let items = [
            item(1, "x", price: 2.5, owner: poor), item(2, "y", price: -1, owner: rich), item(3, "z", price: 2.5),
            item(4, "w", price: 9_007_199_254_740_992, owner: rich), item(5, "v", price: -.infinity, owner: poor),
        ]
        try check(items, [FetchSortDescriptor(key: "owner.name"), FetchSortDescriptor(key: "price", ascending: false)], expected: [3, 1, 5, 4, 2], owners: [rich, poor])
        try check(items, [FetchSortDescriptor(key: "price")], expected: [5, 2, 1, 3, 4], owners: [rich, poor])
        XCTAssertEqual([FetchSortDescriptor(key: "owner.name"), FetchSortDescriptor(key: "price")].compare(items[0], items[4]), .orderedDescending)
        XCTAssertEqual([FetchSortDescriptor]().compare(items[0], items[1]), .orderedSame)
    }
}
