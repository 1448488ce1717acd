import Foundation
import GRDB
@testable import ObjectStore
import XCTest

/// The syntax Core Data users write beyond plain comparisons: each form parses, prints
/// back, and selects the same items in SQL and in memory.
final class PredicateSyntaxTests: XCTestCase {
    private func parse(_ format: String, _ arguments: Any?...) throws -> FetchPredicate {
        try FetchPredicate(format: format, argumentArray: arguments)
    }

    /// Items 1-3 with parts of weights (1, 2), (5), () and one owner.
    private func smallDataset() -> [TestObject] {
        let owner = TestObject(entity: "Owner", key: 1, values: ["name": .string("o"), "rank": .integer(2)])
        let items = (1...3).map { key in
            TestObject(entity: "Item", key: Int64(key), values: ["title": .string("t\(key)"), "name": .string(["Ab", "xaby", "b"][key - 1]), "count": .integer(Int64(key)), "price": .double(Double(key) * 1.5)])
        }
        for item in items {
            item.related["owner"] = [owner]
            owner.related["items", default: []].append(item)
        }
        for (key, (item, weight)) in [(0, 1), (0, 2), (1, 5)].enumerated() {
            let part = TestObject(entity: "Part", key: Int64(key + 1), values: ["weight": .integer(Int64(weight)), "name": .string("p\(weight)")])
            part.related["item"] = [items[item]]
            items[item].related["parts", default: []].append(part)
        }
        return [owner] + items + items.flatMap { $0.related["parts"] ?? [] }
    }

    /// Each case: the items (by key) SQL and memory must both select.
    func testNewSyntaxSelectsTheSameItemsInSQLAndMemory() throws {
        let objects = smallDataset()
        let items = objects.filter { $0.entity == "Item" }
        let database = try makePredicateTestDatabase(self)
        try database.write { db in for object in objects { try insert(object, into: db) } }
        let item2 = ObjectID(entityName: "Item", primaryKey: 2)
        let cases: [(FetchPredicate, [Int64])] = [
            (try parse("SELF == %@", item2), [2]),
            (try parse("SELF != %@", item2), [1, 3]),
            (try parse("SELF IN %@", [item2, ObjectID(entityName: "Item", primaryKey: 3)]), [2, 3]),
            (try parse("NOT SELF IN {CAST('Item/1', 'ObjectID')}"), [2, 3]),
            (try parse("SELF == %@", nil), []),
            (try parse("count == $n").withSubstitutionVariables(["n": 2]), [2]),
            (try parse("count IN $list").withSubstitutionVariables(["list": [1, 3]]), [1, 3]),
            (try parse("SELF == $object").withSubstitutionVariables(["object": item2]), [2]),
            (try parse("%K.name == 'o' AND count > 1", "owner"), [2, 3]),
            (try parse("parts.@count > 0"), [1, 2]),
            (try parse("1 < parts.@count"), [1]),
            (try parse("parts.@count == owner.items.@count - 2"), [2]),
            (try parse("parts.@count BETWEEN {1, 1}"), [2]),
            (try parse("parts.@sum.weight > 4"), [2]),
            (try parse("parts.@sum.weight == 0"), [3]),
            (try parse("parts.@avg.weight == 1.5"), [1]),
            (try parse("parts.@min.weight == 1 OR parts.@max.weight >= 5"), [1, 2]),
            (try parse("parts.@max.weight == nil"), [3]),
            (try parse("owner.items.@sum.price == 9"), [1, 2, 3]),
            (try parse("SUBQUERY(parts, $p, $p.weight > 1).@count > 0"), [1, 2]),
            (try parse("SUBQUERY(parts, $p, $p.weight > 1 AND $p.name BEGINSWITH 'p').@count == 1"), [1, 2]),
            (try parse("SUBQUERY(owner.items, $i, $i.count >= 2).@count == 2"), [1, 2, 3]),
            (try parse("SUBQUERY(owner.items, $i, SUBQUERY($i.parts, $p, $p.weight == 5).@count > 0).@count == 1"), [1, 2, 3]),
            (try parse("ALL parts.weight < 3"), [1, 3]),
            (try parse("NONE parts.weight == 5"), [1, 3]),
            (try parse("SOME parts.weight == 5"), [2]),
            (try parse("count * 2 > count + 1"), [2, 3]),
            (try parse("(count + 1) * 2 == 6"), [2]),
            (try parse("count * 2 + 1 == 7"), [3]),
            (try parse("count / 2 == 1.5"), [3]),
            (try parse("price - count == .5"), [1]),
            (try parse("count == - 1 + 2"), [1]),
            (try parse("-count < -2"), [3]),
            (try parse("count / 0 == nil"), [1, 2, 3]),
            (try parse("'ab' IN name"), [2]),
            (try parse("'AB' IN[C] name"), [1, 2]),
            (try parse("name IN %@", "xxAbyy"), [1, 3]),
            (try parse("name ==[CD] 'AB'"), [1]),
            (try parse("price == 3."), [2]),
        ]
        for (predicate, expected) in cases {
            try predicate.validate(for: PredicateTestModel.item, in: PredicateTestModel.model)
            XCTAssertEqual(try FetchPredicate(format: predicate.description), predicate, "round trip of \(predicate)")
            XCTAssertEqual(try database.read { db in try sqlKeys(db, predicate) }, expected, "SQL: \(predicate)")
            XCTAssertEqual(memoryKeys(items, predicate), expected, "memory: \(predicate)")
        }
    }

    func testNumbersSignsAndOptionsAsCoreDataUsersWriteThem() throws {
        XCTAssertEqual(try parse("price == .5"), try parse("price == 0.5"))
        XCTAssertEqual(try parse("price == 1."), try parse("price == 1.0"))
        XCTAssertEqual(try parse("price == -.5"), try parse("price == -0.5"))
        XCTAssertEqual(try parse("count == - 5"), try parse("count == -5"))
        XCTAssertEqual(try parse("count IN {- 5, + 2}"), try parse("count IN {-5, 2}"))
        XCTAssertEqual(try parse("count-5 > 0"), try parse("count - 5 > 0"), "a minus after an operand subtracts")
        XCTAssertEqual(try parse("name ==[C] 'a'"), try parse("name ==[c] 'a'"))
        XCTAssertEqual(try parse("name LIKE[CD] 'a'"), try parse("name LIKE[cd] 'a'"))
        XCTAssertEqual(try parse("name BEGINSWITH[Dc] 'a'"), try parse("name BEGINSWITH[cd] 'a'"))
        XCTAssertEqual(try parse("%K.@count > 1", "parts"), try parse("parts.@count > 1"))
        XCTAssertEqual(try parse("%K.@sum.weight > 1", "parts"), try parse("parts.@sum.weight > 1"))
        XCTAssertEqual(try parse("a * 2 + b * 3 > c - d - e").node, try parse("((a * 2) + (b * 3)) > ((c - d) - e)").node, "* before +, left to right")
    }

    func testVariablesWithoutValuesAreNamedWhenCompiledOrEvaluated() throws {
        let template = try parse("count > $minimum AND name == $name")
        let partly = try template.withSubstitutionVariables(["name": "x"])
        XCTAssertEqual(partly, try parse("count > $minimum AND name == 'x'"))
        for check in [{ try partly.validate(for: PredicateTestModel.item, in: PredicateTestModel.model) },
                      { _ = try partly.sql(for: PredicateTestModel.item, in: PredicateTestModel.model, alias: "t0") },
                      { _ = try partly.evaluate(with: TestObject(entity: "Item", key: 1), substitutionVariables: [:]) }] {
            XCTAssertThrowsError(try check()) { error in
                XCTAssertEqual((error as? FetchPredicateError)?.kind, .variable)
                XCTAssertTrue("\(error)".contains("$minimum"), "\(error)")
            }
        }
        XCTAssertTrue(try template.evaluate(with: TestObject(entity: "Item", key: 1, values: ["count": .integer(3), "name": .string("y")]), substitutionVariables: ["minimum": 2, "name": "y"]))
        let subquery = try parse("SUBQUERY(parts, $p, $p.weight > $w).@count > 0")
        XCTAssertEqual(try subquery.withSubstitutionVariables(["w": 1, "p": 9]), try parse("SUBQUERY(parts, $p, $p.weight > 1).@count > 0"), "a SUBQUERY's own variable is not substituted")
    }

    /// What cannot be computed exactly is refused, at its place, with what to do instead.
    func testWhatDoesNotFitIsRefusedClearly() throws {
        let refusals: [(String, [Any?], String)] = [
            ("name + 1 > 2", [], "computes with numbers"),
            ("parts.@sum.name > 2", [], "@sum needs a number"),
            ("owner.@sum.rank > 2", [], "to-one"),
            ("SELF == 3", [], "not an object"),
            ("SELF IN %@", [[ObjectID(entityName: "Part", primaryKey: 1)]], "never the same object"),
            ("SUBQUERY(parts, $p, weight > 1).@count > 0", [], "start key paths with the variable"),
            ("SUBQUERY(owner, $o, $o.rank > 1).@count > 0", [], "to-many"),
            ("'a' IN count", [], "substring test"),
        ]
        for (format, arguments, message) in refusals {
            XCTAssertThrowsError(try FetchPredicate(format: format, argumentArray: arguments).validate(for: PredicateTestModel.item, in: PredicateTestModel.model), format) { error in
                XCTAssertTrue("\(error)".contains(message), "\(format): \(error)")
            }
        }
    }
}
