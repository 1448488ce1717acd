/// How strings are compared by a predicate operator or a sort descriptor.
///
/// Without options strings compare by their UTF-8 bytes, as SQLite's `BINARY` collation
/// does: `"é"` (one scalar) and `"e\u{301}"` (two scalars) are different strings. With
/// options, both strings are first folded by one Swift function (see
/// ``SQLFunctions``), the same in SQL and in memory:
///
/// - ``caseInsensitive`` applies Unicode full case folding, as Foundation's
///   case-insensitive `compare(_:options:)` does (`"ß"` and `"ẞ"` → `"ss"`, `"ﬁ"` →
///   `"fi"`, `"ς"` → `"σ"`, `"İ"` → `"i̇"`; the dotless `"ı"` is not a case of `"i"`);
/// - ``diacriticInsensitive`` removes the nonspacing marks of the canonical decomposition
///   (`"é"` → `"e"`, `"ñ"` → `"n"`); letters without a decomposition, such as `"ø"` or
///   `"ł"`, stay as they are;
/// - then the result is put in canonical composed form (NFC), so that both spellings of
///   `"é"` become equal, and the folded strings compare by their UTF-8 bytes.
///
/// `BEGINSWITH`, `ENDSWITH` and `CONTAINS` match whole characters (grapheme clusters) of
/// the string, with or without options: `"Straße" BEGINSWITH[c] "stras"` is false (the
/// match would end inside `"ß"`), and so is `"cafe\u{301}" BEGINSWITH "cafe"`.
///
/// In a predicate format string the options follow the operator: `[c]`, `[d]` or `[cd]`.
public struct StringComparisonOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// `[c]`: upper and lower case letters are equal.
    public static let caseInsensitive = StringComparisonOptions(rawValue: 1)
    /// `[d]`: letters with and without diacritics are equal.
    public static let diacriticInsensitive = StringComparisonOptions(rawValue: 2)

    /// The options as written after an operator in a format string: `[cd]`, or empty.
    var formatSuffix: String {
        if isEmpty { return "" }
        return "[" + (contains(.caseInsensitive) ? "c" : "") + (contains(.diacriticInsensitive) ? "d" : "") + "]"
    }
}
