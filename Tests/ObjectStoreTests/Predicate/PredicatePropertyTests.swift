import Foundation
import GRDB
@testable import ObjectStore
import XCTest

/// Invariant 1, "SQL and memory agree": for random data and random predicates and sort
/// descriptors, SQLite selects and orders exactly the rows the in-memory evaluator does.
///
/// The seed is fixed (and printed) so that every run checks the same predicates; set
/// `PREDICATE_SEED` to run others. A failure prints the
/// seed, the predicate, its SQL and the rows on which the two sides disagree.
final class PredicatePropertyTests: XCTestCase {
    private static let datasets = 8
    private static let predicatesPerDataset = 150

    func testSQLAndMemoryAgreeOnRandomPredicates() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["PREDICATE_SEED"] ?? "") ?? SeededGenerator.ciSeed
        print("PredicatePropertyTests: seed \(seed) (set PREDICATE_SEED to run another)")
        var random = SeededGenerator(seed: seed)
        var failures = 0
        for dataset in 0..<Self.datasets {
            let database = try makePredicateTestDatabase(self)
            let data = RandomDataset(random: &random)
            try database.write { db in
                for object in data.allObjects { try insert(object, into: db) }
            }
            var generator = RandomPredicateGenerator()
            for index in 0..<Self.predicatesPerDataset {
                var predicate = generator.predicate(random: &random)
                let sort = generator.sortDescriptors(random: &random)
                var context = "seed \(seed) (PREDICATE_SEED=\(seed)), dataset \(dataset), predicate \(index): \(predicate)\nsorted by \(sort)"
                do {
                    // A quarter of them as templates: constants made `$variables`, then
                    // substituted back (withSubstitutionVariables), which must give the
                    // predicate again, through the template's printed form.
                    if Int.random(in: 0..<4, using: &random) == 0 {
                        var variables: [String: Any?] = [:]
                        let template = FetchPredicate(Self.variabilized(predicate.node, &variables, random: &random))
                        context += "\ntemplate: \(template) with \(variables.count) variables"
                        let parsed = try FetchPredicate(format: template.description)
                        XCTAssertEqual(parsed, template, "template round trip, \(context)")
                        if !variables.isEmpty {
                            XCTAssertThrowsError(try template.validate(for: PredicateTestModel.item, in: PredicateTestModel.model),
                                                 "a template with unsubstituted variables, \(context)")
                        }
                        let substituted = try parsed.withSubstitutionVariables(variables)
                        XCTAssertEqual(substituted, predicate, "the template substituted, \(context)")
                        predicate = substituted
                    }
                    try predicate.validate(for: PredicateTestModel.item, in: PredicateTestModel.model)
                    XCTAssertEqual(try FetchPredicate(format: predicate.description), predicate, "round trip, \(context)")
                    let fromSQL = try database.read { db in try sqlKeys(db, predicate, sortedBy: sort) }
                    let fromMemory = memoryKeys(data.items, predicate, sortedBy: sort)
                    if fromSQL != fromMemory {
                        failures += 1
                        let sql = try database.read { db in try predicate.sql(for: PredicateTestModel.item, in: PredicateTestModel.model, alias: "t0").build(db) }
                        XCTFail("""
                            SQL and memory disagree; \(context)
                            SQL: \(sql.sql) \(sql.arguments)
                            SQL rows:    \(fromSQL)
                            memory rows: \(fromMemory)
                            differing items: \(data.describe(Set(fromSQL).symmetricDifference(fromMemory).sorted()))
                            """)
                    }
                } catch {
                    failures += 1
                    XCTFail("\(error)\n\(context)")
                }
                if failures >= 5 { return }
            }
        }
    }

    /// `node` with some constants on the right of its comparisons (outside SUBQUERYs) made
    /// `$v0`, `$v1`…, whose values go into `variables`.
    private static func variabilized(_ node: FetchPredicate.Node, _ variables: inout [String: Any?], random: inout SeededGenerator) -> FetchPredicate.Node {
        switch node {
        case .constant: return node
        case .not(let child): return .not(variabilized(child, &variables, random: &random))
        case .and(let children): return .and(children.map { variabilized($0, &variables, random: &random) })
        case .or(let children): return .or(children.map { variabilized($0, &variables, random: &random) })
        case .comparison(var comparison):
            guard case .value(let value) = comparison.right, Bool.random(using: &random) else { return node }
            let name = "v\(variables.count)"
            variables[name] = swiftValue(value)
            comparison.right = .variable(name)
            return .comparison(comparison)
        }
    }

    /// What withSubstitutionVariables takes for `value`.
    private static func swiftValue(_ value: Value) -> Any? {
        switch value {
        case .null: return nil
        case .string(let string): return string
        case .integer(let integer): return integer
        case .double(let double): return double
        case .bool(let bool): return bool
        case .date(let date): return date
        case .binary(let data): return data
        }
    }

    /// The property test must be able to fail: an evaluator that gets one rule wrong (here,
    /// Swift's `==` on strings, which ignores how "é" is spelled) is caught on data that has
    /// both spellings.
    func testTheComparisonCatchesAnEvaluatorThatDisagrees() throws {
        let database = try makePredicateTestDatabase(self)
        let items = [
            TestObject(entity: "Item", key: 1, values: ["title": .string("caf\u{E9}")]),
            TestObject(entity: "Item", key: 2, values: ["title": .string("cafe\u{301}")]),
        ]
        try database.write { db in for item in items { try insert(item, into: db) } }
        let predicate = try FetchPredicate(format: "title == %@", "caf\u{E9}")
        let swiftEquality = items.filter {
            if case .string(let title) = $0.attributeValue(forKey: "title") { return title == "caf\u{E9}" }
            return false
        }.map(\.key)
        let fromSQL = try database.read { db in try sqlKeys(db, predicate) }
        XCTAssertEqual(swiftEquality, [1, 2], "Swift's == treats both spellings as equal")
        XCTAssertNotEqual(fromSQL, swiftEquality, "so comparing with SQL catches it")
        XCTAssertEqual(fromSQL, memoryKeys(items, predicate), "while the real evaluator agrees")
    }
}


/// Values chosen to find disagreements: case and diacritic variants, both spellings of
/// "é", non-BMP characters, wildcard and quote characters, integers beyond 2^53, doubles
/// next to them, infinities, negative zero, and nil.
enum ValuePools {
    static let strings = [
        "", "a", "A", "b", "B", "ab", "Ab", "aB", "abc", "ABC", "e", "E", "\u{E9}", "e\u{301}", "\u{C9}", "E\u{301}",
        "\u{E9}e", "caf\u{E9}", "cafe\u{301}", "CAF\u{C9}", "cafe", "stra\u{DF}e", "STRASSE", "\u{DF}", "ss", "\u{130}", "i", "I",
        "\u{131}", "\u{3C2}", "\u{3C3}", "\u{3A3}", "😀", "a😀", "😀b", "\u{F1}", "n\u{303}", "\u{D1}", "*", "?", "a*b", "%", "_",
        "\\", "z", "Z", "日本", "\u{FB01}", "fi", " a", "a ", "\u{F8}", "\u{D8}", "\u{1F1EB}\u{1F1F7}", "e\u{301}\u{327}",
        "e\u{327}\u{301}", "x'y", "x\"y", "a\nb", "\u{212A}", "k",
    ]
    static let likePatterns = [
        "*", "a*", "*a", "*\u{E9}*", "?", "??", "a?", "*b", "?*", "\\*", "a\\?", "*e\u{301}*", "E*", "*😀*", "caf?",
        "c*\u{E9}", "*ss*", "\u{DF}*", "*?*?", "a*b*c", "\\\\", "*\\**",
    ]
    static let regexes = [
        "a.*", ".*\u{E9}", "[a-z]+", "(?i)ab.*", ".", "..", ".*", "e\u{301}", "\\w+", "[^a]*", "a|ab", "caf.", "\u{DF}|ss",
        "[A-Z]", ".*\\s.*", "\\p{L}+", "", "x.y",
    ]
    static let integers: [Int64] = [
        -3, -2, -1, 0, 1, 2, 3, 5, .max, .min, 9_007_199_254_740_993, 9_007_199_254_740_992, -9_007_199_254_740_993,
    ]
    static let doubles: [Double] = [
        -2.5, -1, -0.0, 0, 0.5, 1, 1.5, 2, 2.5, 3, 9_007_199_254_740_992, 9_007_199_254_740_994, 9.223372036854775807e18,
        -9.223372036854775808e18, 1e300, .infinity, -.infinity, 0.1, 0.30000000000000004,
    ]
    static let dates = [
        0, 1, -86400.5, 1_000_000_000, 1_000_000_000.5, 1_000_000_000.000001, 1_700_000_000.25, 4_102_444_800,
    ].map { Date(timeIntervalSince1970: $0) }
    static let blobs = [Data(), Data([0]), Data([0, 0]), Data([1]), Data([0xFF]), Data([1, 2, 3]), Data([1, 2])]

    static func value(of type: AttributeType, random: inout SeededGenerator, nilChance: Double = 0.15) -> Value {
        if Double.random(in: 0..<1, using: &random) < nilChance { return .null }
        switch type {
        case .string: return .string(strings.randomElement(using: &random)!)
        case .integer: return .integer(integers.randomElement(using: &random)!)
        case .double:
            // Integers too: an integer constant against a double attribute is allowed.
            return Bool.random(using: &random) ? .double(doubles.randomElement(using: &random)!) : .integer(integers.randomElement(using: &random)!)
        case .bool: return Bool.random(using: &random) ? .bool(Bool.random(using: &random)) : .integer(Int64.random(in: 0...1, using: &random))
        case .date: return .date(dates.randomElement(using: &random)!)
        case .binary: return .binary(blobs.randomElement(using: &random)!)
        }
    }

    /// A value an attribute of `type` holds (no integers in double attributes).
    static func storedValue(of type: AttributeType, random: inout SeededGenerator) -> Value {
        switch value(of: type, random: &random, nilChance: 0.2) {
        case .integer(let i) where type == .double: return .double(Double(i))
        case .integer(let i) where type == .bool: return .bool(i == 1)
        case let value: return value
        }
    }
}

/// Owners, items, parts and details with random values and random links.
struct RandomDataset {
    var owners: [TestObject] = []
    var items: [TestObject] = []
    var parts: [TestObject] = []
    var details: [TestObject] = []

    var allObjects: [TestObject] { owners + items + parts + details }

    init(random: inout SeededGenerator) {
        let model = PredicateTestModel.model
        func object(_ entity: String, key: Int64) -> TestObject {
            let object = TestObject(entity: entity, key: key)
            for attribute in model.entity(named: entity)!.attributes {
                var value = ValuePools.storedValue(of: attribute.type, random: &random)
                if !attribute.isOptional && value.isNull { value = .string("") }
                object.values[attribute.name] = value
            }
            return object
        }
        owners = (1...6).map { object("Owner", key: $0) }
        items = (1...40).map { object("Item", key: $0) }
        parts = (1...30).map { object("Part", key: $0) }
        details = (1...25).map { object("Detail", key: $0) }
        func link(_ a: TestObject, _ toOne: String, _ b: TestObject, _ inverse: String) {
            a.related[toOne] = [b]
            b.related[inverse, default: []].append(a)
        }
        for item in items where Int.random(in: 0..<5, using: &random) > 0 {
            link(item, "owner", owners.randomElement(using: &random)!, "items")
        }
        for part in parts where Int.random(in: 0..<6, using: &random) > 0 {
            link(part, "item", items.randomElement(using: &random)!, "parts")
        }
        for (detail, item) in zip(details, items.shuffled(using: &random)) where Int.random(in: 0..<5, using: &random) > 0 {
            link(detail, "item", item, "detail")
        }
    }

    func describe(_ keys: [Int64]) -> String {
        keys.map { key in
            let item = items.first { $0.key == key }!
            let owner = item.related["owner"]?.first
            let detail = item.related["detail"]?.first
            return "\n  item \(key): \(item.values.sorted { $0.key < $1.key }.map { "\($0.key)=\(debug($0.value))" }.joined(separator: " "))"
                + " owner=\(owner.map { "\($0.key) \($0.values.map { "\($0.key)=\(debug($0.value))" }.sorted())" } ?? "nil")"
                + " detail=\(detail.map { "\($0.key) \($0.values.map { "\($0.key)=\(debug($0.value))" }.sorted())" } ?? "nil")"
                + " parts=\((item.related["parts"] ?? []).map { "\($0.key) \($0.values.map { "\($0.key)=\(debug($0.value))" }.sorted())" })"
        }.joined()
    }

    private func debug(_ value: Value) -> String {
        if case .string(let string) = value {
            return "\"\(string)\"" + "[\(string.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " "))]"
        }
        return value.description
    }
}

/// Random valid predicates over Item: every operator, option and modifier, key paths
/// across to-one relationships (stored on either side), ANY/ALL/NONE through to-many
/// relationships, @count, @sum/@avg/@min/@max, SUBQUERY, SELF, arithmetic, `'x' IN name`,
/// comparisons between two key paths, nil, and logic.
struct RandomPredicateGenerator {
    private struct Path {
        var components: [String]
        var type: AttributeType?  // nil for a relationship
    }

    private let scalarPaths: [Path] = [
        Path(components: ["name"], type: .string), Path(components: ["title"], type: .string),
        Path(components: ["count"], type: .integer), Path(components: ["price"], type: .double),
        Path(components: ["flag"], type: .bool), Path(components: ["when"], type: .date),
        Path(components: ["blob"], type: .binary), Path(components: ["owner", "name"], type: .string),
        Path(components: ["owner", "rank"], type: .integer), Path(components: ["detail", "score"], type: .double),
        Path(components: ["detail", "note"], type: .string), Path(components: ["parts", "@count"], type: .integer),
        Path(components: ["owner", "items", "@count"], type: .integer),
    ]
    private let relationshipPaths: [Path] = [
        Path(components: ["owner"], type: nil), Path(components: ["detail"], type: nil),
    ]
    private let aggregatePaths: [Path] = [
        Path(components: ["parts", "name"], type: .string), Path(components: ["parts", "weight"], type: .integer),
        Path(components: ["owner", "items", "name"], type: .string), Path(components: ["owner", "items", "price"], type: .double),
        Path(components: ["parts", "item", "title"], type: .string),
    ]

    mutating func predicate(random: inout SeededGenerator) -> FetchPredicate {
        FetchPredicate(node(depth: 0, random: &random))
    }

    /// A predicate on Item, or, with `paths`, on the objects of a SUBQUERY.
    private func node(depth: Int, random: inout SeededGenerator, paths: [Path]? = nil) -> FetchPredicate.Node {
        let roll = Int.random(in: 0..<100, using: &random)
        if depth < 3 && roll < 30 {
            let children = (0..<Int.random(in: 2...3, using: &random)).map { _ in node(depth: depth + 1, random: &random, paths: paths) }
            return Bool.random(using: &random) ? .conjunction(children) : .disjunction(children)
        }
        if depth < 3 && roll < 42 { return .not(node(depth: depth + 1, random: &random, paths: paths)) }
        if roll < 44 { return .constant(Bool.random(using: &random)) }
        if let paths { return .comparison(plainComparison(random: &random, paths: paths)) }
        return .comparison(comparison(random: &random))
    }

    /// Values computed from a to-many relationship, compared like attributes.
    private let computedPaths: [Path] = [
        Path(components: ["parts", "@sum", "weight"], type: .integer), Path(components: ["parts", "@avg", "weight"], type: .double),
        Path(components: ["parts", "@min", "name"], type: .string), Path(components: ["parts", "@max", "weight"], type: .integer),
        Path(components: ["owner", "items", "@sum", "price"], type: .double), Path(components: ["owner", "items", "@max", "when"], type: .date),
        Path(components: ["owner", "items", "@min", "count"], type: .integer),
    ]
    /// Numbers for arithmetic.
    private var numericPaths: [Path] {
        (scalarPaths + computedPaths).filter { [.integer, .double, .bool].contains($0.type) }
    }

    private func comparison(random: inout SeededGenerator) -> FetchPredicate.Comparison {
        if Int.random(in: 0..<100, using: &random) < 30 {
            return newSyntaxComparison(random: &random)
        }
        return plainComparison(random: &random)
    }

    /// SELF, arithmetic, SUBQUERY, collection operators and `'x' IN name`.
    private func newSyntaxComparison(random: inout SeededGenerator) -> FetchPredicate.Comparison {
        let ops: [FetchPredicate.Operator] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
        switch Int.random(in: 0..<5, using: &random) {
        case 0:
            let ids = (0..<Int.random(in: 0...4, using: &random)).map { _ in ObjectID(entityName: "Item", primaryKey: Int64.random(in: 1...42, using: &random)) }
            if ids.count == 1 {
                return .init(left: .evaluatedObject, op: Bool.random(using: &random) ? .equal : .notEqual, right: .objects(ids, isList: false))
            }
            return .init(left: .evaluatedObject, op: .in, right: ids.isEmpty ? .list([]) : .objects(ids, isList: true))
        case 1:
            return .init(left: arithmetic(depth: 0, random: &random), op: ops.randomElement(using: &random)!,
                         right: Bool.random(using: &random) ? arithmetic(depth: 1, random: &random) : .value(ValuePools.value(of: .double, random: &random)))
        case 2:
            let subquery: FetchPredicate.Subquery
            if Bool.random(using: &random) {
                subquery = .init(collection: ["parts"], variable: "p", predicate: node(depth: 1, random: &random, paths: partPaths))
            } else {
                subquery = .init(collection: ["owner", "items"], variable: "i", predicate: node(depth: 1, random: &random, paths: siblingPaths))
            }
            return .init(left: .subqueryCount(subquery), op: ops.randomElement(using: &random)!, right: .value(.integer(Int64.random(in: 0...3, using: &random))))
        case 3:
            var comparison = plainComparison(random: &random, paths: computedPaths)
            comparison.modifier = .direct
            return comparison
        default:
            let path = scalarPaths.filter { $0.type == .string }.randomElement(using: &random)!
            let options: StringComparisonOptions = [[], .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]].randomElement(using: &random)!
            return .init(left: .value(ValuePools.value(of: .string, random: &random)), op: .in, right: .keyPath(path.components), options: options)
        }
    }

    /// `a + b`, `a * (b - c)`…: numbers from key paths and constants.
    private func arithmetic(depth: Int, random: inout SeededGenerator) -> FetchPredicate.Operand {
        func leaf() -> FetchPredicate.Operand {
            Int.random(in: 0..<3, using: &random) == 0
                ? .value(ValuePools.value(of: .double, random: &random, nilChance: 0.05))
                : .keyPath(numericPaths.randomElement(using: &random)!.components)
        }
        let op = FetchPredicate.ArithmeticOperator.allCases.randomElement(using: &random)!
        let left = depth < 2 && Bool.random(using: &random) ? arithmetic(depth: depth + 1, random: &random) : leaf()
        return .arithmetic(op, left, leaf())
    }

    /// Key paths of a SUBQUERY's objects: its variable first.
    private let partPaths: [Path] = [
        Path(components: ["$p", "name"], type: .string), Path(components: ["$p", "weight"], type: .integer),
        Path(components: ["$p", "item", "title"], type: .string),
    ]
    private let siblingPaths: [Path] = [
        Path(components: ["$i", "name"], type: .string), Path(components: ["$i", "count"], type: .integer),
        Path(components: ["$i", "price"], type: .double), Path(components: ["$i", "parts", "@count"], type: .integer),
    ]

    private func plainComparison(random: inout SeededGenerator, paths: [Path]? = nil) -> FetchPredicate.Comparison {
        let scalarPaths = paths ?? self.scalarPaths
        let roll = paths == nil ? Int.random(in: 0..<100, using: &random) : 99
        if roll < 6 {
            let path = relationshipPaths.randomElement(using: &random)!
            return .init(left: .keyPath(path.components), op: Bool.random(using: &random) ? .equal : .notEqual, right: .value(.null))
        }
        var modifier = FetchPredicate.Modifier.direct
        let path: Path
        if roll < 30 {
            path = aggregatePaths.randomElement(using: &random)!
            modifier = [.any, .all, .none].randomElement(using: &random)!
        } else {
            path = scalarPaths.randomElement(using: &random)!
        }
        let type = path.type!
        var ops: [FetchPredicate.Operator] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .between, .in]
        if type == .string { ops += [.beginsWith, .endsWith, .contains, .like, .matches, .beginsWith, .contains, .like] }
        let op = ops.randomElement(using: &random)!
        let options: StringComparisonOptions = type == .string
            ? [[], [], .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]].randomElement(using: &random)!
            : []
        var left = FetchPredicate.Operand.keyPath(path.components)
        var right: FetchPredicate.Operand
        switch op {
        case .between:
            right = .list([ValuePools.value(of: type, random: &random, nilChance: 0.05), ValuePools.value(of: type, random: &random, nilChance: 0.05)])
        case .in:
            right = .list((0..<Int.random(in: 0...4, using: &random)).map { _ in ValuePools.value(of: type, random: &random, nilChance: 0.1) })
        case .like:
            right = .value(.string((ValuePools.likePatterns + ValuePools.strings).randomElement(using: &random)!))
        case .matches:
            right = .value(.string(ValuePools.regexes.randomElement(using: &random)!))
        default:
            let sameType = scalarPaths.filter { other in
                other.components != path.components && other.type.map { kind($0) == kind(type) } == true
            }
            if Int.random(in: 0..<100, using: &random) < 20, let other = sameType.randomElement(using: &random) {
                right = .keyPath(other.components)
            } else {
                right = .value(ValuePools.value(of: type, random: &random))
            }
            // Constants on the left too, where the operator allows it.
            if modifier == .direct, !op.isStringOperator, case .value = right, Int.random(in: 0..<100, using: &random) < 10 {
                swap(&left, &right)
            }
        }
        return .init(modifier: modifier, left: left, op: op, right: right, options: options)
    }

    private func kind(_ type: AttributeType) -> Int {
        switch type {
        case .integer, .double, .bool: return 0
        case .date: return 1
        case .string: return 2
        case .binary: return 3
        }
    }

    func sortDescriptors(random: inout SeededGenerator) -> [FetchSortDescriptor] {
        (0..<Int.random(in: 0...3, using: &random)).map { _ in
            let path = scalarPaths.randomElement(using: &random)!
            let options: StringComparisonOptions = path.type == .string
                ? [[], .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]].randomElement(using: &random)!
                : []
            return FetchSortDescriptor(key: path.components.joined(separator: "."), ascending: Bool.random(using: &random), options: options)
        }
    }
}
