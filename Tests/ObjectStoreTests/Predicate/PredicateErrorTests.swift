import Foundation
@testable import ObjectStore
import XCTest

final class PredicateErrorTests: XCTestCase {
    /// The error of parsing `format`, checked for kind, offset and a caret under it.
    private func parseError(
        _ format: String, _ arguments: [Any?] = [], kind: FetchPredicateError.Kind, offset: Int,
        mentions words: [String], file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try FetchPredicate(format: format, argumentArray: arguments), file: file, line: line) { error in
            guard let error = error as? FetchPredicateError else {
                return XCTFail("not a FetchPredicateError: \(error)", file: file, line: line)
            }
            XCTAssertEqual(error.kind, kind, "\(error)", file: file, line: line)
            XCTAssertEqual(error.offset, offset, "\(error)", file: file, line: line)
            let description = error.description
            XCTAssertTrue(description.hasPrefix("at character \(offset): "), description, file: file, line: line)
            let lines = description.split(separator: "\n", omittingEmptySubsequences: false)
            XCTAssertEqual(lines.count, 3, description, file: file, line: line)
            if lines.count == 3 {
                XCTAssertEqual(lines[2], Substring(String(repeating: " ", count: 4 + offset) + "^"), "caret under character \(offset):\n\(description)", file: file, line: line)
            }
            for word in words {
                XCTAssertTrue(description.contains(word), "\(description)\nshould mention \(word)", file: file, line: line)
            }
        }
    }

    func testSyntaxErrorsPointAtTheProblem() {
        parseError("name == 'Brazil", kind: .syntax, offset: 8, mentions: ["unterminated string"])
        parseError("name == \"Brazil\\\"", kind: .syntax, offset: 8, mentions: ["unterminated string"])
        parseError("name 'x'", kind: .syntax, offset: 5, mentions: ["expected a comparison operator", "'name'", "'x'"])
        parseError("wins >", kind: .syntax, offset: 6, mentions: ["expected a key path or a value", "end of format"])
        parseError("wins", kind: .syntax, offset: 4, mentions: ["ends after 'wins'"])
        parseError("wins > 3 wins < 5", kind: .syntax, offset: 9, mentions: ["unexpected 'wins'", "AND, OR"])
        parseError("(wins > 3", kind: .syntax, offset: 9, mentions: ["expected ')'", "character 0"])
        parseError("wins > 3)", kind: .syntax, offset: 8, mentions: ["unexpected ')'"])
        parseError("name ==[x] 'a'", kind: .syntax, offset: 8, mentions: ["unknown comparison option 'x'", "[c]"])
        parseError("name == $", kind: .syntax, offset: 8, mentions: ["'$' must be followed by a variable name"])
        parseError("name == 'a' AND", kind: .syntax, offset: 15, mentions: ["end of format"])
        parseError("wins BETWEEN {1}", kind: .syntax, offset: 13, mentions: ["exactly 2 values", "BETWEEN {1, 5}"])
        parseError("wins BETWEEN 3", kind: .syntax, offset: 13, mentions: ["BETWEEN needs a list"])
        parseError("wins == {1, 2}", kind: .syntax, offset: 8, mentions: ["only after IN or BETWEEN"])
        parseError("name IN {owner}", kind: .syntax, offset: 9, mentions: ["constant values only"])
        parseError("ANY 3 == 3", kind: .syntax, offset: 4, mentions: ["ANY must be followed by a key path"])
        parseError("items.@foo > 3", kind: .syntax, offset: 6, mentions: ["@count", "@sum"])
        parseError("items.@avg > 3", kind: .syntax, offset: 11, mentions: ["after @avg", "items.@avg.price"])
        parseError("SUBQUERY(items, $i, $i.done == YES) > 0", kind: .syntax, offset: 0, mentions: [".@count"])
        parseError("name == 'a' AND in == 3", kind: .syntax, offset: 16, mentions: ["keyword 'in'", "#in"])
        parseError("wins == 99999999999999999999", kind: .syntax, offset: 8, mentions: ["does not fit in 64 bits", "decimal point"])
        parseError("name == '\\u00G1'", kind: .syntax, offset: 9, mentions: ["\\u escape"])
        parseError("name == CAST(1, 'NSString')", kind: .syntax, offset: 8, mentions: ["unsupported CAST"])
        parseError("wins == %x", kind: .syntax, offset: 8, mentions: ["unsupported format specifier '%x'", "%@"])
        // Offsets count Unicode scalars, and the caret lines up under characters.
        parseError("name == 'é' AND ", kind: .syntax, offset: 16, mentions: ["end of format"])
    }

    func testArgumentErrors() {
        parseError("name == %@ AND wins > %d", ["a"], kind: .argument, offset: 22, mentions: ["missing argument for %d", "2 arguments", "only 1 was given"])
        parseError("name == %@", ["a", 3], kind: .argument, offset: 10, mentions: ["too many arguments", "uses 1", "2 were given"])
        parseError("wins > %d", ["three"], kind: .argument, offset: 7, mentions: ["%d", "integer", "String"])
        parseError("wins > %d", [2.5], kind: .argument, offset: 7, mentions: ["%d", "Double", "%f"])
        parseError("price > %f", ["x"], kind: .argument, offset: 8, mentions: ["%f", "String"])
        parseError("%K == 1", [3], kind: .argument, offset: 0, mentions: ["%K", "key path", "Int"])
        parseError("%K == 1", ["owner..name"], kind: .argument, offset: 0, mentions: ["not a key path", "owner..name"])
        parseError("name == %@", [URL(fileURLWithPath: "/")], kind: .argument, offset: 8, mentions: ["URL", "cannot compare"])
        parseError("name == %@", [["a"]], kind: .argument, offset: 8, mentions: ["collection", "IN or BETWEEN"])
        parseError("wins BETWEEN %@", ["a"], kind: .argument, offset: 13, mentions: ["must be an array", "String"])
        parseError("price == %@", [Double.nan], kind: .argument, offset: 9, mentions: ["NaN", "nil"])
    }

    private func validationError(
        _ format: String, _ arguments: Any?..., kind: FetchPredicateError.Kind, mentions words: [String],
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let predicate = try FetchPredicate(format: format, argumentArray: arguments)
        let model = PredicateTestModel.model
        for check in [
            { try predicate.validate(for: PredicateTestModel.item, in: model) },
            { _ = try predicate.sql(for: PredicateTestModel.item, in: model, alias: "t0") },
        ] {
            XCTAssertThrowsError(try check(), file: file, line: line) { error in
                guard let error = error as? FetchPredicateError else {
                    return XCTFail("not a FetchPredicateError: \(error)", file: file, line: line)
                }
                XCTAssertEqual(error.kind, kind, "\(error)", file: file, line: line)
                for word in words {
                    XCTAssertTrue(error.description.contains(word), "\(error)\nshould mention \(word)", file: file, line: line)
                }
            }
        }
    }

    func testValidationErrorsNameTheComparisonAndWhatToDo() throws {
        try validationError("losses > 2", kind: .keyPath, mentions: ["'losses > 2'", "no attribute or relationship named 'losses'", "name, title, count"])
        try validationError("owner.nickname == 'x'", kind: .keyPath, mentions: ["Owner has no attribute or relationship named 'nickname'", "name, rank, items"])
        try validationError("name.first == 'x'", kind: .keyPath, mentions: ["'name' is an attribute of Item", "'.first'"])
        try validationError("parts.name == 'x'", kind: .keyPath, mentions: ["'parts' is a to-many relationship", "ANY parts.name", "parts.@count"])
        try validationError("owner.items.count > 1", kind: .keyPath, mentions: ["'owner.items' is a to-many relationship"])
        try validationError("parts == nil", kind: .keyPath, mentions: ["'parts' is a to-many relationship"])
        try validationError("ANY owner.name == 'x'", kind: .keyPath, mentions: ["ANY needs a key path through a to-many relationship"])
        try validationError("ANY parts == nil", kind: .keyPath, mentions: ["compare an attribute of the related objects", "ANY parts.name"])
        try validationError("owner.@count > 1", kind: .keyPath, mentions: ["@count counts a to-many relationship", "to-one"])
        try validationError("count == 'three'", kind: .typeMismatch, mentions: ["'count == \"three\"'", "'count' (an integer attribute)", "\"three\" (a string)", "as in 3"])
        try validationError("when > 5", kind: .typeMismatch, mentions: ["'when' (a date attribute)", "a Date"])
        try validationError("price > %@", Date(), kind: .typeMismatch, mentions: ["'price' (a double attribute)"])
        try validationError("flag == 2", kind: .typeMismatch, mentions: ["'flag' (a bool attribute)", "YES or NO"])
        try validationError("name == count", kind: .typeMismatch, mentions: ["'name' (a string attribute) cannot be compared with 'count' (an integer attribute)"])
        try validationError("count IN {1, 'a'}", kind: .typeMismatch, mentions: ["\"a\" (a string)"])
        try validationError("count BEGINSWITH '1'", kind: .typeMismatch, mentions: ["BEGINSWITH compares strings", "'count' (an integer attribute)"])
        try validationError("count ==[c] 1", kind: .typeMismatch, mentions: ["[c] compare strings", "remove the options"])
        try validationError("name MATCHES '(unclosed'", kind: .invalidRegularExpression, mentions: ["\"(unclosed\" is not a valid regular expression"])
        try validationError("owner == 'x'", kind: .typeMismatch, mentions: ["'owner' is a relationship", "owner == nil", "owner.name"])
        try validationError("owner < nil", kind: .typeMismatch, mentions: ["'owner' is a relationship"])
    }

    func testAcceptedConversions() throws {
        let model = PredicateTestModel.model
        for format in [
            "price > 2", "count > 2.5", "count == price", "flag == 1", "flag == YES", "count == TRUE", "flag < count",
            "when > %@", "name == nil", "owner == nil", "detail != nil", "nil == when", "blob == %@", "name ==[cd] owner.name",
            "name IN[c] {'a', nil}", "parts.@count > 1", "owner.items.@count == 0", "ALL parts.weight > 1",
        ] {
            let arguments: [Any?] = format.contains("%@") ? [format.hasPrefix("blob") ? Data([1]) : Date()] : []
            XCTAssertNoThrow(try FetchPredicate(format: format, argumentArray: arguments).validate(for: PredicateTestModel.item, in: model), format)
        }
    }

    func testNestingTooDeepIsRefusedAtItsPositionInsteadOfCrashing() throws {
        let depth = PredicateParser.maximumDepth
        // As deep as allowed: parses.
        XCTAssertNoThrow(try FetchPredicate(format: String(repeating: "(", count: depth) + "wins > 1" + String(repeating: ")", count: depth)))
        XCTAssertNoThrow(try FetchPredicate(format: String(repeating: "NOT ", count: depth) + "wins > 1"))
        // Deeper, by far (a stack overflow before): a clear error at the character that goes too deep.
        for (format, offset) in [(String(repeating: "(", count: 20_000) + "wins > 1" + String(repeating: ")", count: 20_000), depth),
                                 (String(repeating: "NOT ", count: 10_000) + "wins > 1", depth * 4),
                                 (String(repeating: "!(", count: 5_000) + "wins > 1" + String(repeating: ")", count: 5_000), depth)] {
            XCTAssertThrowsError(try FetchPredicate(format: format)) { error in
                let error = error as? FetchPredicateError
                XCTAssertEqual(error?.kind, .syntax)
                XCTAssertEqual(error?.offset, offset)
                XCTAssertTrue(error?.message.contains("nested more than \(depth) levels") == true, "\(String(describing: error))")
            }
        }
    }
}
