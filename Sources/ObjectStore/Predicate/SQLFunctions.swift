import Foundation
import GRDB

/// The SQL functions and collations that compiled predicates and sort descriptors use.
///
/// They call the same Swift code as the in-memory evaluator, so that SQLite and memory
/// agree on every string (see ``StringComparisonOptions``). Register them on every
/// connection before running a compiled predicate:
///
/// ```swift
/// var configuration = Configuration()
/// configuration.prepareDatabase { db in
///     try SQLFunctions.register(in: db)
/// }
/// ```
///
/// The string functions take `(string, pattern, options)`, where `options` is the raw
/// value of ``StringComparisonOptions``, and return 1 or 0, never NULL: a NULL or
/// non-text argument gives 0, as nil does in memory. The arithmetic of predicates
/// (`objectstore_add`, `objectstore_subtract`, `objectstore_multiply`, `objectstore_divide`)
/// and the aggregates of `@sum`, `@avg`, `@min` and `@max` (`objectstore_sum`...) are
/// registered too.
///
/// ## Topics
/// - ``register(in:)``
/// - ``collationName(for:)``
/// - ``caseInsensitiveCollation``
/// - ``diacriticInsensitiveCollation``
/// - ``caseAndDiacriticInsensitiveCollation``
public enum SQLFunctions {
    /// `BEGINSWITH`: `objectstore_beginswith(string, prefix, options)`.
    public static let beginsWith = "objectstore_beginswith"
    /// `ENDSWITH`: `objectstore_endswith(string, suffix, options)`.
    public static let endsWith = "objectstore_endswith"
    /// `CONTAINS`: `objectstore_contains(string, part, options)`.
    public static let contains = "objectstore_contains"
    /// `LIKE` with `*` and `?`: `objectstore_like(string, pattern, options)`.
    public static let like = "objectstore_like"
    /// `MATCHES` (whole-string ICU regular expression): `objectstore_matches(string, regex, options)`.
    public static let matches = "objectstore_matches"

    /// The function that computes `a op b` in a predicate, as ``PredicateArithmetic`` does.
    static func arithmeticFunction(_ op: FetchPredicate.ArithmeticOperator) -> String {
        switch op {
        case .add: return "objectstore_add"
        case .subtract: return "objectstore_subtract"
        case .multiply: return "objectstore_multiply"
        case .divide: return "objectstore_divide"
        }
    }

    /// The aggregate function of `@sum`, `@avg`, `@min` or `@max`: `objectstore_sum`...
    static func aggregateFunction(_ op: CollectionOperator) -> String {
        "objectstore_" + op.rawValue.dropFirst()
    }

    /// The collation of `[c]` comparisons and case-insensitive sorts.
    public static let caseInsensitiveCollation = "objectstore_c"
    /// The collation of `[d]` comparisons and diacritic-insensitive sorts.
    public static let diacriticInsensitiveCollation = "objectstore_d"
    /// The collation of `[cd]` comparisons and sorts.
    public static let caseAndDiacriticInsensitiveCollation = "objectstore_cd"

    /// The collation that compares strings with `options`; nil for none (SQLite's `BINARY`,
    /// byte order, is the default).
    public static func collationName(for options: StringComparisonOptions) -> String? {
        switch (options.contains(.caseInsensitive), options.contains(.diacriticInsensitive)) {
        case (false, false): return nil
        case (true, false): return caseInsensitiveCollation
        case (false, true): return diacriticInsensitiveCollation
        case (true, true): return caseAndDiacriticInsensitiveCollation
        }
    }

    /// Adds the functions and collations to a connection. Call it from
    /// `Configuration.prepareDatabase`, so that every connection of a pool has them.
    public static func register(in db: Database) throws {
        for function in functions + arithmeticFunctions + aggregateFunctions { db.add(function: function) }
        for collation in collations { db.add(collation: collation) }
    }

    private static let functions: [DatabaseFunction] = [
        stringFunction(beginsWith, StringComparison.beginsWith),
        stringFunction(endsWith, StringComparison.endsWith),
        stringFunction(contains, StringComparison.contains),
        stringFunction(like, StringComparison.like),
        stringFunction(matches, StringComparison.matches),
    ]

    private static let arithmeticFunctions = FetchPredicate.ArithmeticOperator.allCases.map { op in
        DatabaseFunction(arithmeticFunction(op), argumentCount: 2, pure: true) { arguments in
            PredicateArithmetic.apply(op, arguments[0], arguments[1])
        }
    }

    private static let aggregateFunctions = [
        DatabaseFunction(aggregateFunction(.sum), argumentCount: 1, pure: true, aggregate: SumAggregate.self),
        DatabaseFunction(aggregateFunction(.average), argumentCount: 1, pure: true, aggregate: AverageAggregate.self),
        DatabaseFunction(aggregateFunction(.minimum), argumentCount: 1, pure: true, aggregate: MinimumAggregate.self),
        DatabaseFunction(aggregateFunction(.maximum), argumentCount: 1, pure: true, aggregate: MaximumAggregate.self),
    ]

    private static let collations: [DatabaseCollation] = [
        StringComparisonOptions.caseInsensitive,
        .diacriticInsensitive,
        [.caseInsensitive, .diacriticInsensitive],
    ].map { options in
        DatabaseCollation(collationName(for: options)!) { a, b in
            StringComparison.compare(a, b, options: options)
        }
    }

    private static func stringFunction(
        _ name: String,
        _ test: @escaping @Sendable (String, String, StringComparisonOptions) -> Bool
    ) -> DatabaseFunction {
        DatabaseFunction(name, argumentCount: 3, pure: true) { arguments in
            guard case .string(let string) = arguments[0].storage,
                  case .string(let pattern) = arguments[1].storage,
                  case .int64(let options) = arguments[2].storage
            else { return 0 }
            return test(string, pattern, StringComparisonOptions(rawValue: Int(options))) ? 1 : 0
        }
    }
}

/// An aggregate that collects its values and computes ``PredicateArithmetic/aggregate(_:_:)``
/// once it has them all: the same function as in memory, whatever order the rows come in.
private protocol CollectingAggregate: DatabaseAggregate {
    static var op: CollectionOperator { get }
    var values: [DatabaseValue] { get set }
}

extension CollectingAggregate {
    mutating func step(_ dbValues: [DatabaseValue]) {
        values.append(dbValues[0])
    }

    func finalize() -> (any DatabaseValueConvertible)? {
        PredicateArithmetic.aggregate(Self.op, values)
    }
}

private struct SumAggregate: CollectingAggregate {
    static let op = CollectionOperator.sum
    var values: [DatabaseValue] = []
}

private struct AverageAggregate: CollectingAggregate {
    static let op = CollectionOperator.average
    var values: [DatabaseValue] = []
}

private struct MinimumAggregate: CollectingAggregate {
    static let op = CollectionOperator.minimum
    var values: [DatabaseValue] = []
}

private struct MaximumAggregate: CollectingAggregate {
    static let op = CollectionOperator.maximum
    var values: [DatabaseValue] = []
}
