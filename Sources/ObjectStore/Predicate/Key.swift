/// A key path in a predicate built in Swift, which compares like the key path of a
/// format string:
///
/// ```swift
/// Key("wins") > 3                                              // wins > 3
/// Key("teamName").beginsWith("A", options: .caseInsensitive)   // teamName BEGINSWITH[c] "A"
/// Key("zone").in(["Africa", "Europe"])                         // zone IN {"Africa", "Europe"}
/// Key("details.closeDate").between(start, end)                 // details.closeDate BETWEEN {…}
/// Key("name") == nil                                           // name == nil
/// Key.any("items.name").beginsWith("a")                        // ANY items.name BEGINSWITH "a"
/// Key("items").count > 2                                       // items.@count > 2
/// ```
///
/// The result is the same ``FetchPredicate`` the format string parses to. Combine predicates
/// with `&&`, `||` and `!`.
///
/// ## Topics
/// - ``init(_:)``
/// - ``any(_:)``
/// - ``all(_:)``
/// - ``none(_:)``
/// - ``count``
public struct Key: Sendable {
    let components: [String]
    let modifier: FetchPredicate.Modifier

    /// A key path such as `"wins"` or `"details.closeDate"`.
    public init(_ path: String) {
        self.init(components: path.split(separator: ".", omittingEmptySubsequences: false).map(String.init), modifier: .direct)
    }

    private init(components: [String], modifier: FetchPredicate.Modifier) {
        self.components = components
        self.modifier = modifier
    }

    /// `ANY path`: true when one of the values reached through the to-many relationship
    /// in `path` matches.
    public static func any(_ path: String) -> Key {
        Key(components: Key(path).components, modifier: .any)
    }

    /// `ALL path`: true when every value reached through the to-many relationship in
    /// `path` matches (and when there is none).
    public static func all(_ path: String) -> Key {
        Key(components: Key(path).components, modifier: .all)
    }

    /// `NONE path`: true when no value reached through the to-many relationship in `path`
    /// matches.
    public static func none(_ path: String) -> Key {
        Key(components: Key(path).components, modifier: .none)
    }

    /// `path.@count`: the number of objects of a to-many relationship.
    public var count: Key {
        Key(components: components + [countComponent], modifier: modifier)
    }

    private func compare(_ op: FetchPredicate.Operator, _ right: FetchPredicate.Operand, options: StringComparisonOptions = []) -> FetchPredicate {
        FetchPredicate(.comparison(FetchPredicate.Comparison(modifier: modifier, left: .keyPath(components), op: op, right: right, options: options)))
    }

    private func compare(_ op: FetchPredicate.Operator, _ value: some PredicateValueConvertible, options: StringComparisonOptions = []) -> FetchPredicate {
        compare(op, .value(value.predicateValue), options: options)
    }

    // MARK: Operators

    public static func == (key: Key, value: some PredicateValueConvertible) -> FetchPredicate { key.compare(.equal, value) }
    public static func != (key: Key, value: some PredicateValueConvertible) -> FetchPredicate { key.compare(.notEqual, value) }
    public static func < (key: Key, value: some PredicateValueConvertible) -> FetchPredicate { key.compare(.less, value) }
    public static func <= (key: Key, value: some PredicateValueConvertible) -> FetchPredicate { key.compare(.lessOrEqual, value) }
    public static func > (key: Key, value: some PredicateValueConvertible) -> FetchPredicate { key.compare(.greater, value) }
    public static func >= (key: Key, value: some PredicateValueConvertible) -> FetchPredicate { key.compare(.greaterOrEqual, value) }

    /// `key == nil`.
    public static func == (key: Key, _: _OptionalNilComparisonType) -> FetchPredicate { key.compare(.equal, .value(.null)) }
    /// `key != nil`.
    public static func != (key: Key, _: _OptionalNilComparisonType) -> FetchPredicate { key.compare(.notEqual, .value(.null)) }

    public static func == (lhs: Key, rhs: Key) -> FetchPredicate { lhs.compare(.equal, .keyPath(rhs.components)) }
    public static func != (lhs: Key, rhs: Key) -> FetchPredicate { lhs.compare(.notEqual, .keyPath(rhs.components)) }
    public static func < (lhs: Key, rhs: Key) -> FetchPredicate { lhs.compare(.less, .keyPath(rhs.components)) }
    public static func <= (lhs: Key, rhs: Key) -> FetchPredicate { lhs.compare(.lessOrEqual, .keyPath(rhs.components)) }
    public static func > (lhs: Key, rhs: Key) -> FetchPredicate { lhs.compare(.greater, .keyPath(rhs.components)) }
    public static func >= (lhs: Key, rhs: Key) -> FetchPredicate { lhs.compare(.greaterOrEqual, .keyPath(rhs.components)) }

    // MARK: Methods

    /// `key ==[options] value`, for case- or diacritic-insensitive equality.
    public func equals(_ value: some PredicateValueConvertible, options: StringComparisonOptions = []) -> FetchPredicate {
        compare(.equal, value, options: options)
    }

    /// `key BEGINSWITH[options] prefix`.
    public func beginsWith(_ prefix: String, options: StringComparisonOptions = []) -> FetchPredicate {
        compare(.beginsWith, prefix, options: options)
    }

    /// `key ENDSWITH[options] suffix`.
    public func endsWith(_ suffix: String, options: StringComparisonOptions = []) -> FetchPredicate {
        compare(.endsWith, suffix, options: options)
    }

    /// `key CONTAINS[options] part`.
    public func contains(_ part: String, options: StringComparisonOptions = []) -> FetchPredicate {
        compare(.contains, part, options: options)
    }

    /// `key LIKE[options] pattern`: `*` matches any run of characters, `?` one character.
    public func like(_ pattern: String, options: StringComparisonOptions = []) -> FetchPredicate {
        compare(.like, pattern, options: options)
    }

    /// `key MATCHES[options] regex`: the whole string matches the ICU regular expression.
    public func matches(_ regularExpression: String, options: StringComparisonOptions = []) -> FetchPredicate {
        compare(.matches, regularExpression, options: options)
    }

    /// `key IN[options] {values}`: the key equals one of the values.
    public func `in`<S: Sequence>(_ values: S, options: StringComparisonOptions = []) -> FetchPredicate where S.Element: PredicateValueConvertible {
        compare(.in, .list(values.map(\.predicateValue)), options: options)
    }

    /// `key BETWEEN {low, high}`: `low <= key && key <= high`.
    public func between(_ low: some PredicateValueConvertible, _ high: some PredicateValueConvertible, options: StringComparisonOptions = []) -> FetchPredicate {
        compare(.between, .list([low.predicateValue, high.predicateValue]), options: options)
    }
}
