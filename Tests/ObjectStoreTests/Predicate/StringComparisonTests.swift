import Foundation
import GRDB
@testable import ObjectStore
import XCTest

/// The one string definition shared by SQL and memory, on the Unicode cases that make
/// implementations disagree.
final class StringComparisonTests: XCTestCase {
    private let precomposed = "caf\u{E9}"
    private let decomposed = "cafe\u{301}"

    func testDefaultComparisonIsByUTF8Bytes() {
        XCTAssertEqual(StringComparison.compare(precomposed, decomposed, options: []), .orderedDescending, "0xC3 sorts after 'e'")
        XCTAssertEqual(StringComparison.compare("B", "a", options: []), .orderedAscending)
        XCTAssertEqual(StringComparison.compare("a", "ab", options: []), .orderedAscending)
        XCTAssertEqual(StringComparison.compare("\u{FFFD}", "😀", options: []), .orderedAscending, "bytes, not UTF-16 units")
        XCTAssertEqual(StringComparison.compare("", "", options: []), .orderedSame)
    }

    func testFolding() {
        let fold = StringComparison.fold
        let c: StringComparisonOptions = .caseInsensitive
        let d: StringComparisonOptions = .diacriticInsensitive
        let cd: StringComparisonOptions = [.caseInsensitive, .diacriticInsensitive]
        XCTAssertEqual(fold(precomposed, c), fold(decomposed, c), "any option puts both spellings in one form")
        XCTAssertEqual(fold("CAF\u{C9}", c), fold(decomposed, c))
        XCTAssertNotEqual(fold("café", c), fold("cafe", c))
        XCTAssertEqual(fold("CAFÉ", cd), "cafe")
        XCTAssertEqual(fold("Ñandú", d), "Nandu")
        XCTAssertEqual(fold("straße", c), "strasse")
        XCTAssertEqual(fold("ΣΊΣΥΦΟΣ", c), fold("σίσυφος", c), "final sigma meets sigma")
        XCTAssertEqual(fold("İ", cd), "i")
        XCTAssertEqual(fold("\u{212A}", c), "k", "Kelvin sign")
        XCTAssertEqual(fold("ﬁ", c), "fi")
        XCTAssertEqual(fold("e\u{327}\u{301}", c), fold("e\u{301}\u{327}", c), "canonical order of marks")
        XCTAssertEqual(fold("ø", cd), "ø", "no decomposition, kept")
        XCTAssertEqual(fold("😀🇫🇷", cd), "😀🇫🇷")
        XCTAssertEqual(fold("MiXeD 123", c), "mixed 123", "the ASCII fast path")
        XCTAssertEqual(fold("MiXeD", d), "MiXeD")
    }

    func testStringOperators() {
        XCTAssertFalse(StringComparison.beginsWith(decomposed, "cafe", options: []), "a match ends between characters, not inside e + accent")
        XCTAssertTrue(StringComparison.beginsWith(decomposed, "caf", options: []))
        XCTAssertFalse(StringComparison.beginsWith(precomposed, "cafe", options: []))
        XCTAssertTrue(StringComparison.beginsWith(precomposed, "CAFE", options: [.caseInsensitive, .diacriticInsensitive]))
        XCTAssertTrue(StringComparison.beginsWith("abc", "", options: []))
        XCTAssertTrue(StringComparison.endsWith("a😀", "😀", options: []))
        XCTAssertTrue(StringComparison.contains("xx\u{C9}yy", "e\u{301}y", options: [.caseInsensitive]))
        XCTAssertFalse(StringComparison.contains("ab", "abc", options: []))
        XCTAssertTrue(StringComparison.like("a😀b", "a?b", options: []), "? is one Unicode scalar")
        XCTAssertFalse(StringComparison.like(decomposed, "caf?", options: []), "the decomposed é is two scalars")
        XCTAssertTrue(StringComparison.like(decomposed, "caf?", options: .caseInsensitive), "folded to one composed form first")
        XCTAssertTrue(StringComparison.like("axxbxxc", "a*b*c", options: []))
        XCTAssertFalse(StringComparison.like("axxbxx", "a*b*c", options: []))
        XCTAssertTrue(StringComparison.like("a*", "a\\*", options: []))
        XCTAssertFalse(StringComparison.like("ab", "a\\*", options: []))
        XCTAssertTrue(StringComparison.like("", "*", options: []))
        XCTAssertTrue(StringComparison.matches("ab", "a|ab", options: []), "the whole string must match")
        XCTAssertFalse(StringComparison.matches("abc", "ab", options: []))
        XCTAssertTrue(StringComparison.matches("ÉCOLE", "ecole", options: [.caseInsensitive, .diacriticInsensitive]))
        XCTAssertFalse(StringComparison.matches("x", "(", options: []), "an invalid pattern matches nothing")
    }

    /// SQLite runs the same functions: compare every pair of a pool under every option.
    func testSQLiteGivesTheSameAnswers() throws {
        let pool = ["", "a", "A", "é", "e\u{301}", "É", "straße", "STRASSE", "ς", "Σ", "😀", "a😀", "İ", "i", "*", "?", "a*b", "ǅ", "Ǆ"]
        let database = try DatabaseQueue()
        try database.write { db in try SQLFunctions.register(in: db) }
        let allOptions: [StringComparisonOptions] = [[], .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]]
        try database.read { db in
            for options in allOptions {
                let collate = SQLFunctions.collationName(for: options).map { " COLLATE \($0)" } ?? ""
                for a in pool {
                    for b in pool {
                        let row = try Row.fetchOne(db, sql: """
                            SELECT ?\(collate) < ?, ?\(collate) = ?, \(SQLFunctions.beginsWith)(?, ?, ?), \(SQLFunctions.endsWith)(?, ?, ?),
                                   \(SQLFunctions.contains)(?, ?, ?), \(SQLFunctions.like)(?, ?, ?)
                            """, arguments: [a, b, a, b, a, b, options.rawValue, a, b, options.rawValue, a, b, options.rawValue, a, b, options.rawValue])!
                        let context = "\(a.debugDescription) vs \(b.debugDescription) \(options.formatSuffix)"
                        XCTAssertEqual(row[0] as Bool, StringComparison.compare(a, b, options: options) == .orderedAscending, "< \(context)")
                        XCTAssertEqual(row[1] as Bool, StringComparison.compare(a, b, options: options) == .orderedSame, "= \(context)")
                        XCTAssertEqual(row[2] as Bool, StringComparison.beginsWith(a, b, options: options), "BEGINSWITH \(context)")
                        XCTAssertEqual(row[3] as Bool, StringComparison.endsWith(a, b, options: options), "ENDSWITH \(context)")
                        XCTAssertEqual(row[4] as Bool, StringComparison.contains(a, b, options: options), "CONTAINS \(context)")
                        XCTAssertEqual(row[5] as Bool, StringComparison.like(a, b, options: options), "LIKE \(context)")
                    }
                }
            }
            // NULL and non-text arguments give 0, never NULL.
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT \(SQLFunctions.beginsWith)(NULL, 'a', 0)"), 0)
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT \(SQLFunctions.matches)('a', NULL, 0)"), 0)
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT \(SQLFunctions.contains)(12, '1', 0)"), 0)
        }
    }

    /// Case-insensitive matches follow Unicode full case folding, and begin and end between
    /// characters of the string, as Foundation's `compare(_:options:)` and
    /// `range(of:options:)` do: each expectation is checked against Foundation, and against
    /// what SQLite and the evaluator answer.
    func testCaseInsensitiveMatchesFollowFoundation() throws {
        let cases: [(string: String, op: String, pattern: String, matches: Bool)] = [
            ("ıstanbul", "==[c]", "istanbul", false),
            ("ISTANBUL", "==[c]", "istanbul", true),
            ("straße", "==[c]", "STRAẞE", true),
            ("STRASSE", "==[c]", "STRAẞE", true),
            ("ẞ", "==[c]", "ß", true),
            ("Straße", "BEGINSWITH[c]", "stras", false),
            ("Straße", "BEGINSWITH[c]", "strass", true),
            ("Straße", "ENDSWITH[c]", "se", false),
            ("Straße", "ENDSWITH[c]", "SSE", true),
            ("ﬁle", "CONTAINS[c]", "f", false),
            ("ﬁle", "CONTAINS[c]", "FI", true),
            ("ﬁle", "CONTAINS[c]", "ile", false),
            ("cafe\u{301}", "CONTAINS", "e", false),
            ("cafe\u{301}", "CONTAINS", "caf", true),
            ("ΣΊΣΥΦΟΣ", "ENDSWITH[c]", "ς", true),
        ]
        let database = try makePredicateTestDatabase(self)
        let items = cases.enumerated().map { index, test in
            TestObject(entity: "Item", key: Int64(index + 1), values: ["title": .string(""), "name": .string(test.string)])
        }
        try database.write { db in for item in items { try insert(item, into: db) } }
        for (index, test) in cases.enumerated() {
            let foundation: Bool
            let caseInsensitive: String.CompareOptions = test.op.hasSuffix("[c]") ? .caseInsensitive : []
            switch test.op.prefix(while: { $0 != "[" }) {
            case "==": foundation = test.string.compare(test.pattern, options: caseInsensitive) == .orderedSame
            case "BEGINSWITH": foundation = test.string.range(of: test.pattern, options: caseInsensitive.union(.anchored)) != nil
            case "ENDSWITH": foundation = test.string.range(of: test.pattern, options: caseInsensitive.union([.anchored, .backwards])) != nil
            default: foundation = test.string.range(of: test.pattern, options: caseInsensitive) != nil
            }
            let context = "\(test.string.debugDescription) \(test.op) \(test.pattern.debugDescription)"
            XCTAssertEqual(foundation, test.matches, "Foundation: \(context)")
            let predicate = try FetchPredicate(format: "name \(test.op) %@ AND title == ''", test.pattern)
            let expected: [Int64] = test.matches ? [Int64(index + 1)] : []
            let selected = try database.read { db in try sqlKeys(db, predicate) }.filter { $0 == Int64(index + 1) }
            XCTAssertEqual(selected, expected, "SQL: \(context)")
            XCTAssertEqual(memoryKeys([items[index]], predicate), expected, "memory: \(context)")
        }
    }
}
