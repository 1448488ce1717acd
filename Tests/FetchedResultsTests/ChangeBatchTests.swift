@testable import FetchedResults
import Foundation
import ObjectStore
import XCTest

/// Change batches by hand: what ``ChangeBatch/applied(to:)`` accepts and refuses under
/// table-view rules, and the batches ``ChangeBatch/difference(from:to:updated:)`` makes.
final class ChangeBatchTests: XCTestCase {
    // MARK: Building blocks

    private func id(_ n: Int64) -> ObjectID { ObjectID(entityName: "Row", rowKey: n) }
    private func list(_ n: Int64) -> ObjectID { ObjectID(entityName: "List", rowKey: n) }
    private func path(_ section: Int, _ item: Int) -> IndexPath { IndexPath(item: item, section: section) }

    private func section(_ name: String, _ rows: [Int64], object: Int64? = nil) -> SectionSnapshot {
        SectionSnapshot(name: name, objectIDs: rows.map(id), sectionObjectID: object.map(list))
    }

    private func delete(_ n: Int64, at from: IndexPath) -> ObjectChange { ObjectChange(type: .delete, objectID: id(n), indexPath: from, newIndexPath: nil) }
    private func insert(_ n: Int64, at to: IndexPath) -> ObjectChange { ObjectChange(type: .insert, objectID: id(n), indexPath: nil, newIndexPath: to) }
    private func move(_ n: Int64, _ from: IndexPath, _ to: IndexPath) -> ObjectChange { ObjectChange(type: .move, objectID: id(n), indexPath: from, newIndexPath: to) }
    private func update(_ n: Int64, _ from: IndexPath, _ to: IndexPath) -> ObjectChange { ObjectChange(type: .update, objectID: id(n), indexPath: from, newIndexPath: to) }

    private func assertRejected(_ batch: ChangeBatch, on old: [SectionSnapshot], mentioning text: String? = nil,
                                _ why: String, file: StaticString = #filePath, line: UInt = #line) {
        do {
            let result = try batch.applied(to: old)
            XCTFail("accepted (\(why)), giving \(result)", file: file, line: line)
        } catch {
            if let text { XCTAssertTrue("\(error)".contains(text), "\(error)", file: file, line: line) }
        }
    }

    /// The difference from `old` to `new`, checked: it applies to `old` and gives `new`.
    private func difference(_ old: [SectionSnapshot], _ new: [SectionSnapshot], updated: Set<ObjectID> = [],
                            file: StaticString = #filePath, line: UInt = #line) throws -> ChangeBatch {
        let batch = ChangeBatch.difference(from: old, to: new, updated: updated)
        XCTAssertEqual(try batch.applied(to: old), new, "\(batch)", file: file, line: line)
        return batch
    }

    // MARK: applied(to:)

    func testAValidBatchApplies() throws {
        let old = [section("A", [1, 2, 3]), section("B", [4]), section("C", [5, 6])]
        let batch = ChangeBatch(
            sectionChanges: [SectionChange(type: .delete, index: 1, name: "B"), SectionChange(type: .insert, index: 0, name: "0")],
            objectChanges: [delete(4, at: path(1, 0)), delete(1, at: path(0, 0)), move(6, path(2, 1), path(1, 0)),
                            insert(7, at: path(0, 0)), insert(8, at: path(2, 1)), update(3, path(0, 2), path(1, 2))])
        XCTAssertEqual(try batch.applied(to: old), [section("0", [7]), section("A", [6, 2, 3]), section("C", [5, 8])])
        XCTAssertEqual(try ChangeBatch().applied(to: old), old)
    }

    func testTwoChangesOfOneObjectAreRejected() {
        let old = [section("A", [1, 2])]
        assertRejected(ChangeBatch(objectChanges: [update(1, path(0, 0), path(0, 0)), move(1, path(0, 0), path(0, 1))]),
                       on: old, mentioning: "Row/1", "an update and a move of one object")
        assertRejected(ChangeBatch(objectChanges: [delete(2, at: path(0, 1)), insert(2, at: path(0, 0))]),
                       on: old, mentioning: "Row/2", "a delete and an insert of one object")
    }

    func testDeletingASectionThatStillHasRowsIsRejected() {
        let old = [section("A", [1]), section("B", [2, 3])]
        assertRejected(ChangeBatch(sectionChanges: [SectionChange(type: .delete, index: 1, name: "B")]),
                       on: old, mentioning: "still has", "section B keeps its two rows")
        assertRejected(ChangeBatch(sectionChanges: [SectionChange(type: .delete, index: 1, name: "B")], objectChanges: [delete(2, at: path(1, 0))]),
                       on: old, "section B keeps row 3")
        XCTAssertEqual(try ChangeBatch(sectionChanges: [SectionChange(type: .delete, index: 1, name: "B")],
                                       objectChanges: [delete(2, at: path(1, 0)), move(3, path(1, 1), path(0, 0))]).applied(to: old),
                       [section("A", [3, 1])])
    }

    func testWrongIndexPathsAreRejected() {
        let old = [section("A", [1, 2]), section("B", [3])]
        assertRejected(ChangeBatch(objectChanges: [delete(1, at: path(0, 1))]), on: old, mentioning: "Row/1", "row 1 is at 0.0, not 0.1")
        assertRejected(ChangeBatch(objectChanges: [delete(1, at: path(0, 5))]), on: old, "no row 0.5")
        assertRejected(ChangeBatch(objectChanges: [delete(1, at: path(4, 0))]), on: old, "no section 4")
        assertRejected(ChangeBatch(objectChanges: [ObjectChange(type: .delete, objectID: id(1), indexPath: nil, newIndexPath: nil)]), on: old, "a delete without a path")
        assertRejected(ChangeBatch(objectChanges: [insert(9, at: path(0, 3))]), on: old, "past the end of A (2 rows)")
        assertRejected(ChangeBatch(objectChanges: [insert(9, at: path(2, 0))]), on: old, "no section 2 after the batch")
        assertRejected(ChangeBatch(objectChanges: [move(1, path(0, 0), path(1, 2))]), on: old, "past the end of B (1 row after the insert)")
        assertRejected(ChangeBatch(objectChanges: [update(1, path(0, 0), path(0, 1))]), on: old, "an update must name where the object ends up")
        assertRejected(ChangeBatch(objectChanges: [update(3, path(0, 0), path(1, 0))]), on: old, "row 3 is not at 0.0")
        assertRejected(ChangeBatch(sectionChanges: [SectionChange(type: .delete, index: 2, name: "C")]), on: old, "no section 2")
        assertRejected(ChangeBatch(sectionChanges: [SectionChange(type: .insert, index: 3, name: "C")]), on: old, "past the end (2 sections)")
        assertRejected(ChangeBatch(sectionChanges: [SectionChange(type: .move, index: 0, newIndex: nil, name: "A")]), on: old, "a move without a place")
        assertRejected(ChangeBatch(sectionChanges: [SectionChange(type: .update, index: 0, newIndex: 2, name: "A2")]), on: old, "no section 2 to rename")
    }

    func testTwoThingsInOnePlaceAreRejected() {
        let old = [section("A", [1, 2]), section("B", [3]), section("C", [4])]
        assertRejected(ChangeBatch(objectChanges: [insert(8, at: path(0, 0)), insert(9, at: path(0, 0))]), on: old, "two rows inserted at 0.0")
        assertRejected(ChangeBatch(objectChanges: [move(2, path(0, 1), path(1, 0)), insert(9, at: path(1, 0))]), on: old, "a move and an insert to 1.0")
        assertRejected(ChangeBatch(objectChanges: [insert(3, at: path(0, 0))]), on: old, "row 3 is already in B")
        assertRejected(ChangeBatch(sectionChanges: [SectionChange(type: .move, index: 1, newIndex: 0, name: "B"),
                                                    SectionChange(type: .move, index: 2, newIndex: 0, name: "C")]),
                       on: old, "two sections moved to 0")
        assertRejected(ChangeBatch(sectionChanges: [SectionChange(type: .insert, index: 0, name: "X"), SectionChange(type: .insert, index: 0, name: "Y")]),
                       on: old, "two sections inserted at 0")
        assertRejected(ChangeBatch(sectionChanges: [SectionChange(type: .delete, index: 1, name: "B"), SectionChange(type: .move, index: 1, newIndex: 0, name: "B")],
                                   objectChanges: [delete(3, at: path(1, 0))]),
                       on: old, "section 1 deleted and moved")
    }

    func testSectionMovesCarryTheirRows() throws {
        let old = [section("A", [1]), section("B", [2, 3]), section("C", [])]
        let batch = ChangeBatch(sectionChanges: [SectionChange(type: .move, index: 1, newIndex: 0, name: "B")],
                                objectChanges: [insert(4, at: path(0, 1)), move(1, path(0, 0), path(2, 0))])
        XCTAssertEqual(try batch.applied(to: old), [section("B", [2, 4, 3]), section("A", []), section("C", [1])])
        let renamed = ChangeBatch(sectionChanges: [SectionChange(type: .update, index: 2, newIndex: 2, name: "See")])
        XCTAssertEqual(try renamed.applied(to: old).map(\.name), ["A", "B", "See"])
    }

    // MARK: difference(from:to:updated:)

    func testNoChangeIsAnEmptyBatchAndUpdatesStayInPlace() throws {
        let old = [section("A", [1, 2]), section("B", [3])]
        XCTAssertTrue(try difference(old, old).isEmpty)
        let batch = try difference(old, old, updated: [id(2), id(3)])
        XCTAssertEqual(batch.sectionChanges, [])
        XCTAssertEqual(Set(batch.objectChanges), [update(2, path(0, 1), path(0, 1)), update(3, path(1, 0), path(1, 0))])
    }

    func testInsertsAndDeletesInASection() throws {
        let batch = try difference([section("A", [1, 2, 3])], [section("A", [4, 1, 3, 5])])
        XCTAssertEqual(batch.objectChanges, [delete(2, at: path(0, 1)), insert(4, at: path(0, 0)), insert(5, at: path(0, 3))])
        XCTAssertEqual(batch.sectionChanges, [])
    }

    func testOneRowMovingIsOneMove() throws {
        let batch = try difference([section("A", [1, 2, 3, 4])], [section("A", [2, 3, 1, 4])], updated: [id(1)])
        XCTAssertEqual(batch.objectChanges, [move(1, path(0, 0), path(0, 2))], "a move, not a move and an update")
        let down = try difference([section("A", [1, 2, 3, 4])], [section("A", [4, 1, 2, 3])], updated: [id(2)])
        XCTAssertEqual(down.objectChanges, [move(4, path(0, 3), path(0, 0)), update(2, path(0, 1), path(0, 2))],
                       "row 2 shifts because of the move: an update at its old and new paths")
    }

    func testEveryOrderOfFourRowsTakesTheFewestMoves() throws {
        func permutations(_ items: [Int64]) -> [[Int64]] {
            guard let first = items.first else { return [[]] }
            return permutations(Array(items.dropFirst())).flatMap { rest in (0...rest.count).map { var p = rest; p.insert(first, at: $0); return p } }
        }
        func longestIncreasingRun(_ values: [Int64]) -> Int {
            var best = [Int](repeating: 1, count: values.count)
            for i in values.indices { for j in 0..<i where values[j] < values[i] { best[i] = max(best[i], best[j] + 1) } }
            return best.max() ?? 0
        }
        let old = [section("A", [1, 2, 3, 4])]
        for order in permutations([1, 2, 3, 4]) {
            let batch = try difference(old, [section("A", order)], updated: Set(order.map(id)))
            XCTAssertEqual(batch.objectChanges.filter { $0.type == .move }.count, 4 - longestIncreasingRun(order), "\(order)")
            XCTAssertEqual(batch.objectChanges.count, 4, "\(order): each row once")
        }
    }

    func testRowsMovingBetweenSectionsThatComeAndGo() throws {
        let old = [section("A", [1]), section("B", [2, 3]), section("D", [4])]
        let new = [section("B", [3]), section("C", [1, 2]), section("D", [4, 5])]
        let batch = try difference(old, new)
        XCTAssertEqual(batch.sectionChanges, [SectionChange(type: .delete, index: 0, name: "A"), SectionChange(type: .insert, index: 1, name: "C")])
        XCTAssertEqual(batch.objectChanges, [move(1, path(0, 0), path(1, 0)), move(2, path(1, 0), path(1, 1)), insert(5, at: path(2, 1))])
    }

    func testSectionChangesComeInDeliveryOrder() throws {
        let old = [section("A", [1]), section("B", [2]), section("C", [3]), section("E", [5])]
        let new = [section("A0", [6]), section("C", [3]), section("D", [4]), section("E", [5]), section("F", [7])]
        let batch = try difference(old, new)
        XCTAssertEqual(batch.sectionChanges.map { "\($0.type) \($0.index)" }, ["delete 1", "delete 0", "insert 0", "insert 2", "insert 4"])
        XCTAssertEqual(batch.objectChanges.map(\.type), [.delete, .delete, .insert, .insert, .insert])
    }

    func testASectionMovingIsOneSectionMove() throws {
        let old = [section("A", [1], object: 1), section("B", [2], object: 2), section("C", [3, 4], object: 3)]
        let new = [section("C", [3, 4], object: 3), section("A", [1], object: 1), section("B", [2], object: 2)]
        let batch = try difference(old, new, updated: [id(4)])
        XCTAssertEqual(batch.sectionChanges, [SectionChange(type: .move, index: 2, newIndex: 0, name: "C", sectionObjectID: list(3))])
        XCTAssertEqual(batch.objectChanges, [update(4, path(2, 1), path(0, 1))], "its rows go with it")

        let swapped = try difference([section("A", [1], object: 1), section("B", [2], object: 2)],
                                     [section("B", [2, 5], object: 2), section("A", [], object: 1)])
        XCTAssertEqual(swapped.sectionChanges.count, 1, "one of the two moves: \(swapped.sectionChanges)")
        XCTAssertEqual(swapped.objectChanges.filter { $0.type != .insert }, [delete(1, at: path(0, 0))])
    }

    func testRenamedSectionObjectsUpdateOrMove() throws {
        let old = [section("Groceries", [1], object: 1), section("Home", [2], object: 2), section("Work", [3], object: 3)]
        let renamedInPlace = try difference(old, [section("Groceries", [1], object: 1), section("House", [2], object: 2), section("Work", [3], object: 3)])
        XCTAssertEqual(renamedInPlace.sectionChanges, [SectionChange(type: .update, index: 1, newIndex: 1, name: "House", sectionObjectID: list(2))])
        XCTAssertEqual(renamedInPlace.objectChanges, [])

        let renamedAndMoved = try difference(old, [section("Errands", [3], object: 3), section("Groceries", [1], object: 1), section("Home", [2], object: 2)])
        XCTAssertEqual(renamedAndMoved.sectionChanges, [SectionChange(type: .move, index: 2, newIndex: 0, name: "Errands", sectionObjectID: list(3))])
        XCTAssertEqual(renamedAndMoved.objectChanges, [])

        // Two sections with one name are told apart by their objects.
        let twins = try difference([section("Todo", [1], object: 1), section("Todo", [2], object: 2)],
                                   [section("Todo", [2], object: 2), section("Todo", [1, 3], object: 1)])
        XCTAssertEqual(twins.sectionChanges.map(\.type), [.move])
        XCTAssertEqual(twins.objectChanges, [insert(3, at: path(1, 1))])
    }

    func testAnEmptyListFillsAndEmpties() throws {
        let filled = try difference([], [section("", [1, 2])])
        XCTAssertEqual(filled.sectionChanges, [SectionChange(type: .insert, index: 0, name: "")])
        XCTAssertEqual(filled.objectChanges, [insert(1, at: path(0, 0)), insert(2, at: path(0, 1))])
        let emptied = try difference([section("", [1, 2])], [])
        XCTAssertEqual(emptied.sectionChanges, [SectionChange(type: .delete, index: 0, name: "")])
        XCTAssertEqual(emptied.objectChanges.map(\.type), [.delete, .delete])
    }

    /// The changed-key look-up of the refetch path answers as the set would: bitmap for a
    /// narrow range of keys, the set for keys far apart, random keys either way.
    func testKeyMembershipAnswersAsItsSet() {
        var rng = SeededGenerator(seed: SeededGenerator.seed())
        for spread in [Int64(100), 5_000, 1 << 40] {
            let keys = Set((0..<200).map { _ in Int64.random(in: -spread...spread, using: &rng) })
            let membership = KeyMembership(keys)
            for probe in keys.map({ [$0 - 1, $0, $0 + 1, $0 + 64, $0 - 64] }).joined() {
                XCTAssertEqual(membership.contains(probe), keys.contains(probe), "key \(probe), spread \(spread)")
            }
            for _ in 0..<1_000 {
                let probe = Int64.random(in: -2 * spread...2 * spread, using: &rng)
                XCTAssertEqual(membership.contains(probe), keys.contains(probe), "key \(probe), spread \(spread)")
            }
        }
        XCTAssertFalse(KeyMembership([]).contains(0))
        XCTAssertTrue(KeyMembership([Int64.max, Int64.min]).contains(Int64.min))
        XCTAssertFalse(KeyMembership([Int64.max - 3, Int64.max]).contains(Int64.min + 1), "no wrapping around")
    }
}
