/// A logical condition on the objects of an entity, written as an NSPredicate format
/// string or built in Swift, that the store runs as SQL and the object graph evaluates in
/// memory, with the same answer for every value: Core Data's `NSPredicate`, for fetch
/// requests. (Not `Predicate`: Foundation has a type of that name, and a file importing both
/// would have to pick one.)
///
/// ```swift
/// let strong = try FetchPredicate(format: "wins > %d AND zone IN %@", 3, ["Africa", "Europe"])
/// let same = Key("wins") > 3 && Key("zone").in(["Africa", "Europe"])
/// ```
///
/// A format string combines comparisons with `AND` (`&&`), `OR` (`||`), `NOT` (`!`) and
/// parentheses. `NOT` binds tightest and `AND` binds tighter than `OR`:
/// `a == 1 OR b == 2 AND NOT c == 3` is `a == 1 OR (b == 2 AND (NOT c == 3))`
/// (Docs/PredicateSyntax.md has the grammar). A comparison is
/// `[ANY|SOME|ALL|NONE] left operator[options] right`:
///
/// - operators: `==` (`=`), `!=` (`<>`), `<`, `<=` (`=<`), `>`, `>=` (`=>`),
///   `BETWEEN {low, high}`, `IN {a, b, ...}`, `BEGINSWITH`, `ENDSWITH`, `CONTAINS`,
///   `LIKE` (`*` any run of characters, `?` one character, `\` escapes) and `MATCHES`
///   (an ICU regular expression matching the whole string);
/// - options after the operator, in either case: `[c]` case-insensitive, `[d]`
///   diacritic-insensitive, `[cd]` both (see ``StringComparisonOptions``);
/// - `'ab' IN name` (a string or string key path on the right) is a substring test;
/// - sides may compute: `+`, `-`, `*`, `/` with the usual precedence and parentheses
///   (`wins * 2 > losses + 1`; `/` divides as doubles; nil or a division by zero gives nil);
/// - `SELF` is the object itself: `SELF == %@`, `SELF IN %@` with objects or ``ObjectID``s;
/// - `items.@sum.price`, `@avg`, `@min`, `@max` compute over a to-many relationship, and
///   `SUBQUERY(items, $i, $i.done == YES).@count` counts the related objects that match;
/// - `$name` is a variable that ``withSubstitutionVariables(_:)`` gives a value;
/// - sides: key paths (`name`, `details.closeDate` across to-one relationships,
///   `items.@count`; `#name` escapes a reserved word; `%K.name` continues an argument's
///   key path), strings in `'…'` or `"…"` with
///   `\` escapes (`\n`, `\t`, `\uXXXX`), numbers, `nil`/`NULL`, `YES`/`NO`/`TRUE`/`FALSE`,
///   `CAST(seconds since 2001, "NSDate")`, `CAST("base64", "NSData")`,
///   `CAST("Item/12", "ObjectID")`; numbers as in C (`.5`, `1.`, `- 5`);
/// - arguments: `%@` (a string, number, bool, date, data, nil, or an array after `IN`
///   and `BETWEEN`; optionals are unwrapped, so an `[Any?]` or a nil `String?` fits, and
///   `name == %@` with nil is `name == nil`), `%K` (a key path), `%d`/`%i`/`%ld` (an
///   integer), `%f` (a double);
/// - `ANY items.name BEGINSWITH 'a'` is true when one of the related objects matches,
///   `ALL` when all of them do (or there are none), `NONE` when none does;
/// - `TRUEPREDICATE` and `FALSEPREDICATE`. Keywords are case-insensitive.
///
/// Comparisons are two-valued, as NSPredicate's: `x == nil` is true when `x` has no
/// value, `x != 'a'` is true when `x` is nil, `x < 5` is false when `x` is nil, and so
/// `NOT (x < 5)` is true. A key path through a nil to-one relationship gives nil.
/// Strings compare by UTF-8 bytes unless options are given; numbers, bools and dates
/// compare as numbers; across kinds, nil < numbers < strings < binary data, as in SQLite.
///
/// ## Topics
/// - ``init(format:_:)``
/// - ``init(format:argumentArray:)``
/// - ``true``
/// - ``false``
/// - ``Key``
/// - ``evaluate(with:)``
/// - ``withSubstitutionVariables(_:)``
/// - ``evaluate(with:substitutionVariables:)``
/// - ``validate(for:in:)``
/// - ``sql(for:in:alias:)``
/// - ``predicateFormat``
/// - ``FetchPredicateError``
public struct FetchPredicate: Sendable, Hashable, CustomStringConvertible {
    let node: Node

    init(_ node: Node) {
        self.node = node
    }

    /// Parses an NSPredicate format string, replacing `%@`, `%K`, `%d` and `%f` with the
    /// arguments in order. Throws a ``FetchPredicateError`` that points at the problem.
    public init(format: String, _ arguments: Any?...) throws {
        try self.init(format: format, argumentArray: arguments)
    }

    /// Parses an NSPredicate format string with its arguments in an array.
    public init(format: String, argumentArray: [Any?]) throws {
        var parser = try PredicateParser(format: format, arguments: argumentArray)
        self.init(try parser.parse())
    }

    /// `TRUEPREDICATE`: every object matches.
    public static let `true` = FetchPredicate(.constant(true))
    /// `FALSEPREDICATE`: no object matches.
    public static let `false` = FetchPredicate(.constant(false))

    /// The format string of the predicate, with every value written out: parsing it gives
    /// back an equal predicate.
    public var predicateFormat: String {
        PredicateFormatter.format(node)
    }

    public var description: String { predicateFormat }

    /// Both predicates must hold.
    public static func && (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        FetchPredicate(.conjunction([lhs.node, rhs.node]))
    }

    /// One of the predicates must hold.
    public static func || (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        FetchPredicate(.disjunction([lhs.node, rhs.node]))
    }

    /// The predicate must not hold.
    public static prefix func ! (predicate: FetchPredicate) -> FetchPredicate {
        FetchPredicate(.not(predicate.node))
    }

    /// All the predicates must hold (``true`` for none).
    public static func and(_ predicates: [FetchPredicate]) -> FetchPredicate {
        predicates.isEmpty ? .true : FetchPredicate(.conjunction(predicates.map(\.node)))
    }

    /// One of the predicates must hold (``false`` for none).
    public static func or(_ predicates: [FetchPredicate]) -> FetchPredicate {
        predicates.isEmpty ? .false : FetchPredicate(.disjunction(predicates.map(\.node)))
    }
}
