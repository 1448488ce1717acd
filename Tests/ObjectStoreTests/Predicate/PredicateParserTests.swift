import Foundation
@testable import ObjectStore
import XCTest

final class PredicateParserTests: XCTestCase {
    private func parse(_ format: String, _ arguments: Any?...) throws -> FetchPredicate {
        try FetchPredicate(format: format, argumentArray: arguments)
    }

    private func comparison(
        _ left: FetchPredicate.Operand, _ op: FetchPredicate.Operator, _ right: FetchPredicate.Operand,
        options: StringComparisonOptions = [], modifier: FetchPredicate.Modifier = .direct
    ) -> FetchPredicate.Node {
        .comparison(FetchPredicate.Comparison(modifier: modifier, left: left, op: op, right: right, options: options))
    }

    func testComparisonOperatorsAndTheirSpellings() throws {
        let spellings: [(String, FetchPredicate.Operator)] = [
            ("==", .equal), ("=", .equal), ("!=", .notEqual), ("<>", .notEqual),
            ("<", .less), ("<=", .lessOrEqual), ("=<", .lessOrEqual),
            (">", .greater), (">=", .greaterOrEqual), ("=>", .greaterOrEqual),
            ("BEGINSWITH", .beginsWith), ("endswith", .endsWith), ("Contains", .contains),
            ("LIKE", .like), ("matches", .matches),
        ]
        for (spelling, op) in spellings {
            XCTAssertEqual(try parse("count \(spelling) 3").node, comparison(.keyPath(["count"]), op, .value(.integer(3))), spelling)
            if spelling.first?.isLetter == false {
                XCTAssertEqual(try parse("count\(spelling)3").node, comparison(.keyPath(["count"]), op, .value(.integer(3))), "\(spelling) without spaces")
            }
        }
        XCTAssertEqual(try parse("count BETWEEN {1, 5}").node, comparison(.keyPath(["count"]), .between, .list([.integer(1), .integer(5)])))
        XCTAssertEqual(try parse("name in {'a', \"b\", nil}").node, comparison(.keyPath(["name"]), .in, .list([.string("a"), .string("b"), .null])))
        XCTAssertEqual(try parse("name IN {}").node, comparison(.keyPath(["name"]), .in, .list([])))
    }

    func testOptions() throws {
        XCTAssertEqual(try parse("name ==[c] 'a'").node, comparison(.keyPath(["name"]), .equal, .value(.string("a")), options: .caseInsensitive))
        XCTAssertEqual(try parse("name BEGINSWITH[d] 'a'").node, comparison(.keyPath(["name"]), .beginsWith, .value(.string("a")), options: .diacriticInsensitive))
        XCTAssertEqual(try parse("name like[cd] 'a*'").node, comparison(.keyPath(["name"]), .like, .value(.string("a*")), options: [.caseInsensitive, .diacriticInsensitive]))
        XCTAssertEqual(try parse("name IN[dc] %@", ["x"]).node, comparison(.keyPath(["name"]), .in, .list([.string("x")]), options: [.caseInsensitive, .diacriticInsensitive]))
    }

    func testLiterals() throws {
        let cases: [(String, Value)] = [
            ("'it\\'s'", .string("it's")), ("\"say \\\"hi\\\"\"", .string("say \"hi\"")),
            ("'tab\\there'", .string("tab\there")), ("'line\\nbreak'", .string("line\nbreak")),
            ("'\\u00E9'", .string("\u{E9}")), ("'\\uD83D\\uDE00'", .string("😀")),
            ("'a\\*b'", .string("a\\*b")), ("'back\\\\slash'", .string("back\\slash")),
            ("'é'", .string("é")), ("'e\u{301}'", .string("e\u{301}")), ("''", .string("")),
            ("42", .integer(42)), ("-7", .integer(-7)), ("0x1F", .integer(31)), ("-9223372036854775808", .integer(.min)),
            ("2.5", .double(2.5)), ("-0.5", .double(-0.5)), ("1e3", .double(1000)), ("1.5E-2", .double(0.015)),
            ("nil", .null), ("NULL", .null), ("YES", .bool(true)), ("true", .bool(true)), ("NO", .bool(false)), ("False", .bool(false)),
            ("CAST(0, \"NSDate\")", .date(Date(timeIntervalSinceReferenceDate: 0))),
            ("CAST(757382400.25, 'NSDate')", .date(Date(timeIntervalSinceReferenceDate: 757382400.25))),
            ("CAST('AAEC', 'NSData')", .binary(Data([0, 1, 2]))),
        ]
        for (literal, value) in cases {
            XCTAssertEqual(try parse("name == \(literal)").node, comparison(.keyPath(["name"]), .equal, .value(value)), literal)
        }
    }

    func testArguments() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.5)
        let cases: [(String, Any?, Value)] = [
            ("%@", "Brazil", .string("Brazil")), ("%@", 3, .integer(3)), ("%@", Int64(-4), .integer(-4)),
            ("%@", 2.5, .double(2.5)), ("%@", true, .bool(true)), ("%@", date, .date(date)),
            ("%@", Data([9]), .binary(Data([9]))), ("%@", nil, .null), ("%@", NSNull(), .null),
            ("%@", Value.integer(8), .integer(8)), ("%d", 5, .integer(5)), ("%i", Int32(6), .integer(6)),
            ("%ld", 7, .integer(7)), ("%lld", Int64(8), .integer(8)), ("%f", 1.25, .double(1.25)),
            ("%f", 2, .double(2)), ("%lf", Float(0.5), .double(0.5)),
        ]
        for (specifier, argument, value) in cases {
            XCTAssertEqual(try parse("name == \(specifier)", argument).node, comparison(.keyPath(["name"]), .equal, .value(value)), "\(specifier) \(String(describing: argument))")
        }
        XCTAssertEqual(try parse("%K == %@", "owner.name", "x").node, comparison(.keyPath(["owner", "name"]), .equal, .value(.string("x"))))
        XCTAssertEqual(try parse("%K > 2", "items.@count").node, comparison(.keyPath(["items", "@count"]), .greater, .value(.integer(2))))
        XCTAssertEqual(try parse("name IN %@", ["a", "b"]).node, comparison(.keyPath(["name"]), .in, .list([.string("a"), .string("b")])))
        XCTAssertEqual(try parse("name IN %@", Set(["a"])).node, comparison(.keyPath(["name"]), .in, .list([.string("a")])))
        XCTAssertEqual(try parse("name IN %@", ["a", nil] as [String?]).node, comparison(.keyPath(["name"]), .in, .list([.string("a"), .null])))
        XCTAssertEqual(try parse("count BETWEEN %@", [1, 9]).node, comparison(.keyPath(["count"]), .between, .list([.integer(1), .integer(9)])))
        XCTAssertEqual(try parse("count BETWEEN {%d, %@}", 1, 9).node, comparison(.keyPath(["count"]), .between, .list([.integer(1), .integer(9)])))
        XCTAssertEqual(try parse("name == '%@'").node, comparison(.keyPath(["name"]), .equal, .value(.string("%@"))), "quoted specifiers are text")
    }

    /// `%@` takes nil however it is wrapped (as NSPredicate: `name == %@` with nil is
    /// `name == nil`), and arrays of optionals after IN and BETWEEN.
    func testNilAndOptionalArguments() throws {
        let isNil = comparison(.keyPath(["name"]), .equal, .value(.null))
        let missing: String? = nil
        XCTAssertEqual(try parse("name == %@", nil).node, isNil)
        XCTAssertEqual(try parse("name == %@", missing).node, isNil)
        XCTAssertEqual(try FetchPredicate(format: "name == %@", argumentArray: [missing as Any]).node, isNil)
        XCTAssertEqual(try FetchPredicate(format: "name == %@", argumentArray: [Optional<Any>.none as Any]).node, isNil)
        XCTAssertEqual(try FetchPredicate(format: "name == %@", argumentArray: [Optional(Optional("a")) as Any]).node,
                       comparison(.keyPath(["name"]), .equal, .value(.string("a"))))
        let bobOrNil = comparison(.keyPath(["name"]), .in, .list([.string("Bob"), .null]))
        XCTAssertEqual(try FetchPredicate(format: "name IN %@", argumentArray: [["Bob", nil] as [Any?]]).node, bobOrNil)
        XCTAssertEqual(try FetchPredicate(format: "name IN %@", argumentArray: [["Bob", missing as Any] as [Any]]).node, bobOrNil)
        XCTAssertEqual(try FetchPredicate(format: "count BETWEEN %@", argumentArray: [[1, Int64(3)] as [Any?]]).node,
                       comparison(.keyPath(["count"]), .between, .list([.integer(1), .integer(3)])))
    }

    func testKeyPathsAndModifiers() throws {
        XCTAssertEqual(try parse("details.closeDate > %@", Date(timeIntervalSince1970: 0)).node,
                       comparison(.keyPath(["details", "closeDate"]), .greater, .value(.date(Date(timeIntervalSince1970: 0)))))
        XCTAssertEqual(try parse("ANY items.name BEGINSWITH 'a'").node,
                       comparison(.keyPath(["items", "name"]), .beginsWith, .value(.string("a")), modifier: .any))
        XCTAssertEqual(try parse("some items.name == 'a'").node, try parse("ANY items.name == 'a'").node)
        XCTAssertEqual(try parse("ALL items.count > 1").node, comparison(.keyPath(["items", "count"]), .greater, .value(.integer(1)), modifier: .all))
        XCTAssertEqual(try parse("NONE items.count > 1").node, comparison(.keyPath(["items", "count"]), .greater, .value(.integer(1)), modifier: .none))
        XCTAssertEqual(try parse("items.@count >= 2").node, comparison(.keyPath(["items", "@count"]), .greaterOrEqual, .value(.integer(2))))
        XCTAssertEqual(try parse("#in.#like == 1").node, comparison(.keyPath(["in", "like"]), .equal, .value(.integer(1))))
        XCTAssertEqual(try parse("name == owner.name").node, comparison(.keyPath(["name"]), .equal, .keyPath(["owner", "name"])))
        XCTAssertEqual(try parse("3 < count").node, comparison(.value(.integer(3)), .less, .keyPath(["count"])))
        XCTAssertEqual(try parse("owner == nil").node, comparison(.keyPath(["owner"]), .equal, .value(.null)))
    }

    func testPrecedenceAndGrouping() throws {
        let a = comparison(.keyPath(["a"]), .equal, .value(.integer(1)))
        let b = comparison(.keyPath(["b"]), .equal, .value(.integer(2)))
        let c = comparison(.keyPath(["c"]), .equal, .value(.integer(3)))
        XCTAssertEqual(try parse("a == 1 OR b == 2 AND c == 3").node, .or([a, .and([b, c])]))
        XCTAssertEqual(try parse("a == 1 AND b == 2 OR c == 3").node, .or([.and([a, b]), c]))
        XCTAssertEqual(try parse("(a == 1 OR b == 2) AND c == 3").node, .and([.or([a, b]), c]))
        XCTAssertEqual(try parse("NOT a == 1 AND b == 2").node, .and([.not(a), b]))
        XCTAssertEqual(try parse("!(a == 1 || b == 2) && c == 3").node, .and([.not(.or([a, b])), c]))
        XCTAssertEqual(try parse("a == 1 and (b == 2 and c == 3)").node, .and([a, b, c]), "AND is flattened")
        XCTAssertEqual(try parse("NOT NOT a == 1").node, .not(.not(a)))
        XCTAssertEqual(try parse("TRUEPREDICATE").node, .constant(true))
        XCTAssertEqual(try parse("falsepredicate OR a == 1").node, .or([.constant(false), a]))
        XCTAssertEqual(try parse("TRUEPREDICATE"), .true)
        XCTAssertEqual(try parse("FALSEPREDICATE"), .false)
        // Docs/PredicateSyntax.md: NOT takes one comparison (qualifier and arithmetic included),
        // comparisons do not chain, and descriptions print only the parentheses AND/OR need.
        XCTAssertEqual(try parse("a == 1 OR b == 2 AND NOT c == 3").node, .or([a, .and([b, .not(c)])]))
        XCTAssertEqual(try parse("NOT ANY items.count == 1 AND b == 2").node,
                       .and([.not(comparison(.keyPath(["items", "count"]), .equal, .value(.integer(1)), modifier: .any)), b]))
        XCTAssertEqual(try parse("NOT a + 1 > 2").node,
                       .not(comparison(.arithmetic(.add, .keyPath(["a"]), .value(.integer(1))), .greater, .value(.integer(2)))))
        XCTAssertThrowsError(try parse("1 < a < 5"))
        XCTAssertEqual(try parse("(a == 1 OR b == 2) AND c == 3 OR a == 1 AND b == 2").description,
                       "(a == 1 OR b == 2) AND c == 3 OR a == 1 AND b == 2")
    }

    func testDescriptionParsesBackToAnEqualPredicate() throws {
        let formats: [(String, [Any?])] = [
            ("name == 'a' OR count > 2 AND NOT price <= 2.5", []),
            ("(name ==[cd] \"É\" OR flag == YES) AND when < %@", [Date(timeIntervalSince1970: 1_234_567_890.123)]),
            ("ANY items.name LIKE[c] 'a\\\\*?' AND NONE items.count IN {1, 2, nil}", []),
            ("ALL items.price BETWEEN {-1.5, 1e300} OR items.@count == 0", []),
            ("name MATCHES '[a-z]+\\\\d' AND blob == %@ AND title ENDSWITH %@", [Data([0, 255]), "quote\" backslash\\ newline\n tab\t nul\0 bell\u{7}"]),
            ("price > %@ AND price < %@ AND count == %@", [Double.infinity, -Double.greatestFiniteMagnitude, Int64.min]),
            ("#in == 1 AND #AND.#nil != 'x' AND owner.name CONTAINS[d] '😀e\u{301}'", []),
            ("NOT (TRUEPREDICATE AND NOT FALSEPREDICATE)", []),
            ("price == %@ AND price == %@", [0.1, 5e-324]),
        ]
        for (format, arguments) in formats {
            let predicate = try FetchPredicate(format: format, argumentArray: arguments)
            let reparsed = try FetchPredicate(format: predicate.description)
            XCTAssertEqual(reparsed, predicate, "\(format) printed as \(predicate.description)")
            XCTAssertEqual(reparsed.description, predicate.description)
        }
    }

    func testBuilderMakesTheParsedPredicate() throws {
        let start = Date(timeIntervalSince1970: 1_000_000)
        let end = Date(timeIntervalSince1970: 2_000_000)
        let pairs: [(FetchPredicate, FetchPredicate)] = [
            (Key("wins") > 3, try parse("wins > 3")),
            (Key("wins") >= Int64(3), try parse("wins >= 3")),
            (Key("price") < 2.5, try parse("price < 2.5")),
            (Key("price") <= 2, try parse("price <= 2")),
            (Key("name") == "x", try parse("name == 'x'")),
            (Key("name") != "x", try parse("name != 'x'")),
            (Key("name") == nil, try parse("name == nil")),
            (Key("name") != nil, try parse("name != nil")),
            (Key("name") == Optional<String>.none, try parse("name == nil")),
            (Key("flag") == true, try parse("flag == YES")),
            (Key("teamName").beginsWith("A", options: .caseInsensitive), try parse("teamName BEGINSWITH[c] 'A'")),
            (Key("name").endsWith("z"), try parse("name ENDSWITH 'z'")),
            (Key("name").contains("é", options: [.caseInsensitive, .diacriticInsensitive]), try parse("name CONTAINS[cd] 'é'")),
            (Key("name").like("a*"), try parse("name LIKE 'a*'")),
            (Key("name").matches("a+", options: .diacriticInsensitive), try parse("name MATCHES[d] 'a+'")),
            (Key("name").equals("a", options: .caseInsensitive), try parse("name ==[c] 'a'")),
            (Key("zone").in(["Africa", "Europe"]), try parse("zone IN {'Africa', 'Europe'}")),
            (Key("zone").in(["Africa"], options: .caseInsensitive), try parse("zone IN[c] %@", ["Africa"])),
            (Key("details.closeDate").between(start, end), try parse("details.closeDate BETWEEN %@", [start, end])),
            (Key("name") == Key("owner.name"), try parse("name == owner.name")),
            (Key("count") < Key("price"), try parse("count < price")),
            (Key.any("items.name").beginsWith("a"), try parse("ANY items.name BEGINSWITH 'a'")),
            (Key.all("items.count") > 1, try parse("ALL items.count > 1")),
            (Key.none("items.count") == 0, try parse("NONE items.count == 0")),
            (Key("items").count > 2, try parse("items.@count > 2")),
            (Key("a") == 1 || Key("b") == 2 && Key("c") == 3, try parse("a == 1 OR b == 2 AND c == 3")),
            (!(Key("a") == 1) && (Key("b") == 2 && Key("c") == 3), try parse("NOT a == 1 AND b == 2 AND c == 3")),
            (FetchPredicate.and([Key("a") == 1, Key("b") == 2]), try parse("a == 1 AND b == 2")),
            (FetchPredicate.or([]), try parse("FALSEPREDICATE")),
            (FetchPredicate.true && FetchPredicate.false, try parse("TRUEPREDICATE AND FALSEPREDICATE")),
        ]
        for (built, parsed) in pairs {
            XCTAssertEqual(built, parsed, "\(built) vs \(parsed)")
        }
    }
}
