/// Why a predicate could not be parsed, validated against a model, or compiled to SQL.
///
/// The description says what is wrong, where, and what to do. For a format string it
/// shows the string with a caret under the offending character:
///
/// ```
/// at character 8: unterminated string; close it with a matching '
///     name == 'Brazil
///             ^
/// ```
///
/// ## Topics
/// - ``Kind``
/// - ``kind``
/// - ``offset``
public struct FetchPredicateError: Error, CustomStringConvertible, Sendable {
    /// The family of problem, for code that reacts to some of them.
    ///
    /// A struct, not an enum, as GRDB's `ResultCode` and postgres-nio's `PSQLError.Code`:
    /// new kinds come without breaking a caller's `switch` (which needs a `default`).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        /// The format string is not a predicate: an unexpected token, a missing operator,
        /// an unterminated string, an unknown option.
        public static let syntax = Kind("syntax")
        /// The arguments do not fit the format: too few, too many, or of the wrong type.
        public static let argument = Kind("argument")
        /// A key path names no attribute or relationship of the entity, or goes through
        /// an attribute, or uses a to-many relationship without `ANY`, `ALL`, `NONE` or
        /// `@count`.
        public static let keyPath = Kind("keyPath")
        /// The two sides of a comparison have types that cannot be compared, or the
        /// operator does not apply to them.
        public static let typeMismatch = Kind("typeMismatch")
        /// A `MATCHES` pattern is not a valid regular expression.
        public static let invalidRegularExpression = Kind("invalidRegularExpression")
        /// A `$variable` has no value: give it one with
        /// ``FetchPredicate/withSubstitutionVariables(_:)``.
        public static let variable = Kind("variable")

        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }
    }

    public let kind: Kind
    /// What is wrong and what to do.
    public let message: String
    /// The format string the problem was found in, when there is one.
    public let format: String?
    /// The position of the problem in ``format``, in Unicode scalars from its start
    /// (the character offset for text without combining sequences).
    public let offset: Int?

    init(_ kind: Kind, _ message: String, format: String? = nil, offset: Int? = nil) {
        self.kind = kind
        self.message = message
        self.format = format
        self.offset = offset
    }

    public var description: String {
        guard let format, let offset else { return message }
        let scalars = Array(format.unicodeScalars)
        let clamped = min(max(offset, 0), scalars.count)
        var prefix = String.UnicodeScalarView()
        prefix.append(contentsOf: scalars[..<clamped])
        // One line, so the caret lines up: show line breaks and tabs as spaces.
        let line = format.map { $0.isNewline || $0 == "\t" ? " " : String($0) }.joined()
        let column = String(prefix).count
        return "at character \(clamped): \(message)\n    \(line)\n    \(String(repeating: " ", count: column))^"
    }
}
