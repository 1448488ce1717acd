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
/// non-text argument gives 0, as nil does in memory.
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
        for function in functions { db.add(function: function) }
        for collation in collations { db.add(collation: collation) }
    }

    private static let functions: [DatabaseFunction] = [
        stringFunction(beginsWith, StringComparison.beginsWith),
        stringFunction(endsWith, StringComparison.endsWith),
        stringFunction(contains, StringComparison.contains),
        stringFunction(like, StringComparison.like),
        stringFunction(matches, StringComparison.matches),
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
