import Foundation
import GRDB

/// SQLite's order of values, for the in-memory evaluator and sort descriptors.
///
/// Values are compared in the form SQLite stores them (``Value/databaseValue``: bools as
/// 0/1, dates as seconds since 2001), so the two sides cannot disagree on how a value maps
/// to a number. Storage classes order as in SQLite: NULL, then numbers (integers and reals
/// compared exactly, as SQLite does), then text (by UTF-8 bytes, or folded with options),
/// then blobs (by bytes).
enum DatabaseValueOrdering {
    static func compare(_ a: DatabaseValue, _ b: DatabaseValue, options: StringComparisonOptions) -> ComparisonResult {
        switch (a.storage, b.storage) {
        case (.int64(let x), .int64(let y)):
            return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        case (.double(let x), .double(let y)):
            return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        case (.int64(let x), .double(let y)):
            return compare(x, y)
        case (.double(let x), .int64(let y)):
            return reversed(compare(y, x))
        case (.string(let x), .string(let y)):
            return StringComparison.compare(x, y, options: options)
        case (.blob(let x), .blob(let y)):
            if x.elementsEqual(y) { return .orderedSame }
            return x.lexicographicallyPrecedes(y) ? .orderedAscending : .orderedDescending
        default:
            let (rankA, rankB) = (rank(a), rank(b))
            return rankA < rankB ? .orderedAscending : rankA > rankB ? .orderedDescending : .orderedSame
        }
    }

    /// `==` of predicates (SQL `IS`): nil equals only nil.
    static func isEqual(_ a: DatabaseValue, _ b: DatabaseValue, options: StringComparisonOptions) -> Bool {
        compare(a, b, options: options) == .orderedSame
    }

    /// An ordering comparison (`<`, `<=`, `>`, `>=`, `BETWEEN`): false when either side is
    /// nil, as in SQL, where the comparison is NULL and the row does not match.
    static func satisfies(_ a: DatabaseValue, _ b: DatabaseValue, options: StringComparisonOptions,
                          _ accepts: (ComparisonResult) -> Bool) -> Bool {
        if a.isNull || b.isNull { return false }
        return accepts(compare(a, b, options: options))
    }

    /// The value as SQLite holds it once bound: a NaN (double or date) becomes NULL.
    static func stored(_ value: Value) -> DatabaseValue {
        let stored = value.databaseValue
        if case .double(let d) = stored.storage, d.isNaN { return .null }
        return stored
    }

    private static func rank(_ value: DatabaseValue) -> Int {
        switch value.storage {
        case .null: return 0
        case .int64, .double: return 1
        case .string: return 2
        case .blob: return 3
        }
    }

    private static func reversed(_ result: ComparisonResult) -> ComparisonResult {
        ComparisonResult(rawValue: -result.rawValue)!
    }

    /// An integer against a real, exactly (no rounding of large integers): what SQLite's
    /// `sqlite3IntFloatCompare` computes.
    private static func compare(_ i: Int64, _ r: Double) -> ComparisonResult {
        if r < -9_223_372_036_854_775_808.0 { return .orderedDescending }
        if r >= 9_223_372_036_854_775_808.0 { return .orderedAscending }
        let truncated = Int64(r)  // in range, so exact toward zero
        if i < truncated { return .orderedAscending }
        if i > truncated { return .orderedDescending }
        let asDouble = Double(i)  // i == trunc(r): exact when the fraction matters
        return asDouble < r ? .orderedAscending : asDouble > r ? .orderedDescending : .orderedSame
    }
}
