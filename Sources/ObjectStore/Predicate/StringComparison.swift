import Foundation

/// The one definition of every string operation predicates and sort descriptors use.
///
/// SQLite runs these functions through ``SQLFunctions`` and the in-memory evaluator calls
/// them directly, so both sides give the same answer for every string. Everything here is
/// a pure function of its arguments, and works on UTF-8 bytes or Unicode scalars, never on
/// Swift's `String` comparison (which uses canonical equivalence and would disagree with
/// SQLite's byte order).
enum StringComparison {
    /// The string both sides compare under `options`: unchanged without options; else
    /// case-folded for `[c]` (Unicode full case folding, as Foundation's case-insensitive
    /// `compare` and `range(of:)`: `ß`, `ẞ` and `SS` meet as `ss`, `ﬁ` as `fi`, `ς`/`Σ` as
    /// `σ`, while the dotless `ı` stays a letter of its own), without nonspacing marks for
    /// `[d]` (removed from the canonical decomposition), and in canonical composed form
    /// (NFC), so that both spellings of `é` meet.
    static func fold(_ string: String, options: StringComparisonOptions) -> String {
        if options.isEmpty { return string }
        if string.utf8.allSatisfy({ $0 < 0x80 }) {
            // ASCII is its own normal form and has no marks: only case remains. Same result
            // as the general path below, much faster.
            let hasUppercase = string.utf8.contains { (0x41...0x5A).contains($0) }
            return options.contains(.caseInsensitive) && hasUppercase ? asciiLowercased(string) : string
        }
        var mapped = string
        if options.contains(.caseInsensitive) {
            // No locale: the Turkic mappings (I to ı) would make folding depend on it.
            mapped = string.folding(options: .caseInsensitive, locale: nil)
        }
        guard options.contains(.diacriticInsensitive) else { return mapped.precomposedStringWithCanonicalMapping }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: mapped.decomposedStringWithCanonicalMapping.unicodeScalars.filter {
            $0.properties.generalCategory != .nonspacingMark
        })
        return String(scalars).precomposedStringWithCanonicalMapping
    }

    private static func asciiLowercased(_ string: String) -> String {
        String(decoding: string.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    /// Orders two strings by the UTF-8 bytes of their folded forms: SQLite's `BINARY`
    /// collation without options, the collations of ``SQLFunctions`` with options.
    static func compare(_ a: String, _ b: String, options: StringComparisonOptions) -> ComparisonResult {
        compareBytes(fold(a, options: options), fold(b, options: options))
    }

    /// `memcmp` on the UTF-8 bytes, then the shorter first: exactly SQLite's `BINARY`.
    static func compareBytes(_ a: String, _ b: String) -> ComparisonResult {
        var a = a, b = b
        return a.withUTF8 { a in
            b.withUTF8 { b in
                let common = min(a.count, b.count)
                let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
                if order != 0 { return order < 0 ? .orderedAscending : .orderedDescending }
                if a.count == b.count { return .orderedSame }
                return a.count < b.count ? .orderedAscending : .orderedDescending
            }
        }
    }

    /// `BEGINSWITH`: the folded prefix is the folded form of the string's first characters.
    static func beginsWith(_ string: String, _ prefix: String, options: StringComparisonOptions) -> Bool {
        let needle = Array(fold(prefix, options: options).utf8)
        if isOneByteACharacter(string) {
            return fold(string, options: options).utf8.starts(with: needle)
        }
        return covers(foldedCharacters(string, options: options)[...], needle[...])
    }

    /// `ENDSWITH`: the folded suffix is the folded form of the string's last characters.
    static func endsWith(_ string: String, _ suffix: String, options: StringComparisonOptions) -> Bool {
        let needle = Array(fold(suffix, options: options).utf8.reversed())
        if isOneByteACharacter(string) {
            return fold(string, options: options).utf8.reversed().starts(with: needle)
        }
        let characters = foldedCharacters(string, options: options).reversed().map { Array($0.reversed()) }
        return covers(characters[...], needle[...])
    }

    /// `CONTAINS`: the folded part is the folded form of a run of the string's characters.
    static func contains(_ string: String, _ part: String, options: StringComparisonOptions) -> Bool {
        let needle = Array(fold(part, options: options).utf8)
        if needle.isEmpty { return true }
        if isOneByteACharacter(string) {
            let haystack = Array(fold(string, options: options).utf8)
            guard needle.count <= haystack.count else { return false }
            return (0...(haystack.count - needle.count)).contains { start in
                haystack[start] == needle[0] && haystack[start..<(start + needle.count)].elementsEqual(needle)
            }
        }
        let characters = foldedCharacters(string, options: options)
        return characters.indices.contains { covers(characters[$0...], needle[...]) }
    }

    /// Whether each UTF-8 byte of `string` is a character of its own, whose folded form is
    /// one byte too: ASCII without `\r` (which makes one character with a following `\n`).
    /// Byte matches on such a string always begin and end between characters.
    private static func isOneByteACharacter(_ string: String) -> Bool {
        string.utf8.allSatisfy { $0 < 0x80 && $0 != 0x0D }
    }

    /// The UTF-8 bytes of each character (grapheme cluster) of `string`, folded on its own,
    /// so that a match is made of whole characters of the original string: `BEGINSWITH[c]
    /// 'stras'` does not match "Straße" (it would end inside `ß`, folded `ss`), nor
    /// `CONTAINS[c] 'f'` "ﬁle", as Foundation's `range(of:options:)` finds neither.
    private static func foldedCharacters(_ string: String, options: StringComparisonOptions) -> [[UInt8]] {
        string.map { Array(fold(String($0), options: options).utf8) }
    }

    /// Whether the leading characters of `characters`, concatenated, are exactly `needle`.
    private static func covers(_ characters: ArraySlice<[UInt8]>, _ needle: ArraySlice<UInt8>) -> Bool {
        var rest = needle
        for character in characters {
            if rest.isEmpty { return true }
            guard rest.starts(with: character) else { return false }
            rest = rest.dropFirst(character.count)
        }
        return rest.isEmpty
    }

    /// `LIKE`: the whole folded string matches the folded pattern, where `*` stands for any
    /// run of Unicode scalars, `?` for exactly one, and `\` makes the next scalar literal.
    static func like(_ string: String, _ pattern: String, options: StringComparisonOptions) -> Bool {
        let text = Array(fold(string, options: options).unicodeScalars)
        let tokens = LikeToken.parse(fold(pattern, options: options))
        // Greedy matching that backtracks to the last `*`: linear for most patterns,
        // O(text × pattern) at worst, and exact for `*`/`?` patterns.
        var t = 0, p = 0
        var starP: Int?, starT = 0
        while t < text.count {
            if p < tokens.count, tokens[p].matches(text[t]) {
                t += 1
                p += 1
            } else if p < tokens.count, case .anyRun = tokens[p] {
                starP = p
                starT = t
                p += 1
            } else if let star = starP {
                p = star + 1
                starT += 1
                t = starT
            } else {
                return false
            }
        }
        while p < tokens.count, case .anyRun = tokens[p] { p += 1 }
        return p == tokens.count
    }

    private enum LikeToken {
        case scalar(Unicode.Scalar)
        case anyScalar
        case anyRun

        func matches(_ scalar: Unicode.Scalar) -> Bool {
            switch self {
            case .scalar(let s): return s == scalar
            case .anyScalar: return true
            case .anyRun: return false
            }
        }

        static func parse(_ pattern: String) -> [LikeToken] {
            var tokens: [LikeToken] = []
            var escaped = false
            for scalar in pattern.unicodeScalars {
                if escaped {
                    tokens.append(.scalar(scalar))
                    escaped = false
                } else if scalar == "\\" {
                    escaped = true
                } else if scalar == "*" {
                    tokens.append(.anyRun)
                } else if scalar == "?" {
                    tokens.append(.anyScalar)
                } else {
                    tokens.append(.scalar(scalar))
                }
            }
            if escaped { tokens.append(.scalar("\\")) }
            return tokens
        }
    }

    /// `MATCHES`: the whole string matches the ICU regular expression (NSRegularExpression).
    /// `[c]` matches case-insensitively; `[d]` removes the diacritics of string and pattern
    /// first. An invalid pattern matches nothing (validation reports it earlier).
    static func matches(_ string: String, _ pattern: String, options: StringComparisonOptions) -> Bool {
        guard let regex = RegexCache.shared.regex(pattern, options: options) else { return false }
        let subject = options.contains(.diacriticInsensitive) ? fold(string, options: .diacriticInsensitive) : string
        let range = NSRange(subject.startIndex..<subject.endIndex, in: subject)
        return regex.firstMatch(in: subject, options: [], range: range) != nil
    }

    /// Compiles the regular expression `MATCHES` uses, anchored at both ends; nil when the
    /// pattern is invalid.
    static func regularExpression(_ pattern: String, options: StringComparisonOptions) -> NSRegularExpression? {
        let source = options.contains(.diacriticInsensitive) ? fold(pattern, options: .diacriticInsensitive) : pattern
        return try? NSRegularExpression(
            pattern: "\\A(?:" + source + ")\\z",
            options: options.contains(.caseInsensitive) ? [.caseInsensitive] : [])
    }
}

/// Compiled `MATCHES` patterns, shared by all threads: SQLite calls the function once a
/// row, and compiling a pattern each time would dominate the query.
private final class RegexCache: @unchecked Sendable {
    static let shared = RegexCache()

    private struct Key: Hashable {
        var pattern: String
        var options: StringComparisonOptions
    }

    private let lock = NSLock()
    // NSRegularExpression is immutable and safe to use from several threads.
    private var regexes: [Key: NSRegularExpression?] = [:]
    private let capacity = 256

    func regex(_ pattern: String, options: StringComparisonOptions) -> NSRegularExpression? {
        let key = Key(pattern: pattern, options: options)
        if let cached = lock.withLock({ regexes[key] }) { return cached }
        let regex = StringComparison.regularExpression(pattern, options: options)
        lock.withLock {
            if regexes.count >= capacity { regexes.removeAll() }
            regexes[key] = .some(regex)
        }
        return regex
    }
}
