import Foundation
import GRDB
@testable import ObjectStore
import XCTest

final class PredicateSQLTests: XCTestCase {
    private let model = PredicateTestModel.model

    private func compile(_ format: String, _ arguments: Any?...) throws -> (sql: String, arguments: StatementArguments) {
        let database = try DatabaseQueue()
        let predicate = try FetchPredicate(format: format, argumentArray: arguments)
        return try database.read { db in try predicate.sql(for: PredicateTestModel.item, in: model, alias: "t0").build(db) }
    }

    func testValuesAreAlwaysBoundNeverSpliced() throws {
        let compiled = try compile("name == %@ OR title IN {'x\\'); DROP TABLE Item; --', 'b'} OR count > 3", "O'Brien")
        XCTAssertEqual(compiled.sql, #"(t0."name" IS ? OR t0."title" IN (?, ?) OR t0."count" > ?)"#)
        XCTAssertEqual(compiled.arguments, ["O'Brien", "x'); DROP TABLE Item; --", "b", 3])
    }

    func testToOneKeyPathsAreCorrelatedSubqueriesOnEitherSide() throws {
        XCTAssertEqual(try compile("owner.name == 'x'").sql,
                       #"(SELECT t0_1."name" FROM "Owner" t0_1 WHERE t0_1."Z_PK" = t0."owner") IS ?"#)
        // Item does not store the key of its detail: Detail.item does.
        XCTAssertEqual(try compile("detail.score > 1").sql,
                       #"(SELECT t0_1."score" FROM "Detail" t0_1 WHERE t0_1."item" = t0."Z_PK") > ?"#)
        XCTAssertEqual(try compile("owner == nil AND detail != nil").sql,
                       #"(t0."owner" IS ? AND (SELECT t0_1."Z_PK" FROM "Detail" t0_1 WHERE t0_1."item" = t0."Z_PK") IS NOT ?)"#)
        XCTAssertEqual(try compile("parts.@count > 1").sql,
                       #"(SELECT COUNT(*) FROM "Part" t0_1 WHERE t0_1."item" = t0."Z_PK") > ?"#)
    }

    func testAggregatesAreExistsSubqueriesWithUniqueAliases() throws {
        XCTAssertEqual(try compile("ANY parts.name BEGINSWITH[c] 'a'").sql,
                       #"EXISTS (SELECT 1 FROM "Part" t0_1 WHERE t0_1."item" = t0."Z_PK" AND objectstore_beginswith(t0_1."name", ?, 1))"#)
        XCTAssertEqual(try compile("ALL owner.items.price > price").sql,
                       #"NOT EXISTS (SELECT 1 FROM "Owner" t0_1 WHERE t0_1."Z_PK" = t0."owner" AND EXISTS (SELECT 1 FROM "Item" t0_2 WHERE t0_2."owner" = t0_1."Z_PK" AND NOT ((t0_2."price" > t0."price") IS 1)))"#)
        XCTAssertEqual(try compile("NONE parts.weight == 1 AND ANY parts.weight == 2").sql,
                       #"(NOT EXISTS (SELECT 1 FROM "Part" t0_1 WHERE t0_1."item" = t0."Z_PK" AND t0_1."weight" IS ?) AND EXISTS (SELECT 1 FROM "Part" t0_2 WHERE t0_2."item" = t0."Z_PK" AND t0_2."weight" IS ?))"#)
    }

    func testNullCannotLeakThroughNot() throws {
        // Bare where NULL means false; `IS 1` under NOT, so that NOT (nil < 5) is true.
        XCTAssertEqual(try compile("count < 5 OR price BETWEEN {1, 2}").sql, #"(t0."count" < ? OR t0."price" BETWEEN ? AND ?)"#)
        XCTAssertEqual(try compile("NOT (count < 5 OR name != 'a')").sql, #"NOT (((t0."count" < ?) IS 1 OR t0."name" IS NOT ?))"#)
        XCTAssertEqual(try compile("NOT name IN {'a', nil}").sql, #"NOT (((t0."name" IN (?) OR t0."name" IS NULL)) IS 1)"#)
        XCTAssertEqual(try compile("name IN {nil}").sql, #"t0."name" IS NULL"#)
        XCTAssertEqual(try compile("name IN {}").sql, "0")
        XCTAssertEqual(try compile("TRUEPREDICATE AND NOT FALSEPREDICATE").sql, "(1 AND NOT (0))")
    }

    func testOptionsUseTheRegisteredCollationsAndFunctions() throws {
        XCTAssertEqual(try compile("name ==[c] 'a'").sql, #"t0."name" COLLATE objectstore_c IS ?"#)
        XCTAssertEqual(try compile("name <[d] 'a'").sql, #"t0."name" COLLATE objectstore_d < ?"#)
        XCTAssertEqual(try compile("name IN[cd] {'a'}").sql, #"t0."name" COLLATE objectstore_cd IN (?)"#)
        XCTAssertEqual(try compile("name LIKE[cd] 'a*'").sql, #"objectstore_like(t0."name", ?, 3)"#)
        XCTAssertEqual(try compile("name MATCHES 'a+'").sql, #"objectstore_matches(t0."name", ?, 0)"#)
        XCTAssertEqual(try compile("name ENDSWITH[d] title").sql, #"objectstore_endswith(t0."name", t0."title", 2)"#)
        XCTAssertEqual(try compile("name CONTAINS 'b'").sql, #"objectstore_contains(t0."name", ?, 0)"#)
    }

    func testBoolsAndDatesAreBoundAsTheStoreWritesThem() throws {
        let date = Date(timeIntervalSinceReferenceDate: 1_000_000_000.5)
        XCTAssertEqual(try compile("flag == YES AND when < %@", date).arguments, [1, 1_000_000_000.5])
    }

    func testSortDescriptorTerms() throws {
        func term(_ descriptor: FetchSortDescriptor) throws -> String {
            try descriptor.sqlOrderingTerm(for: PredicateTestModel.item, in: model, alias: "t0")
        }
        XCTAssertEqual(try term(.init(key: "count")), #"t0."count" ASC"#)
        XCTAssertEqual(try term(.init(key: "name", ascending: false, options: .caseInsensitive)), #"t0."name" COLLATE objectstore_c DESC"#)
        XCTAssertEqual(try term(.init(key: "owner.name", options: [.caseInsensitive, .diacriticInsensitive])),
                       #"(SELECT t0_1."name" FROM "Owner" t0_1 WHERE t0_1."Z_PK" = t0."owner") COLLATE objectstore_cd ASC"#)
        XCTAssertEqual(try term(.init(key: "parts.@count", ascending: false)),
                       #"(SELECT COUNT(*) FROM "Part" t0_1 WHERE t0_1."item" = t0."Z_PK") DESC"#)
        XCTAssertThrowsError(try term(.init(key: "parts.name"))) { error in
            XCTAssertTrue("\(error)".contains("'parts' is a to-many relationship"), "\(error)")
        }
        XCTAssertThrowsError(try term(.init(key: "owner"))) { error in
            XCTAssertTrue("\(error)".contains("sort by one of its attributes"), "\(error)")
        }
        XCTAssertThrowsError(try term(.init(key: "count", options: .caseInsensitive))) { error in
            XCTAssertTrue("\(error)".contains("sort descriptor count[c] ascending: the options [c] compare strings"), "\(error)")
        }
        XCTAssertThrowsError(try term(.init(key: "rank"))) { error in
            XCTAssertTrue("\(error)".contains("Item has no attribute or relationship named 'rank'"), "\(error)")
        }
    }
}
