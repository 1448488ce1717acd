import Foundation

/// One token of a predicate format string, with its position for error messages.
struct PredicateToken: Equatable {
    enum Kind: Equatable {
        /// An identifier or a keyword, as written.
        case word(String)
        /// `#word`: a key path component that may be a reserved word.
        case escapedWord(String)
        case string(String)
        case integer(Int64)
        case double(Double)
        /// An operator or punctuation: `==`, `<=`, `&&`, `(`, `{`, `,`, `.`, `[`...
        case symbol(String)
        /// `@count`, `@sum`, `@avg`, `@min` or `@max`, lowercased.
        case collectionOperator(String)
        /// `$name`: a substitution variable, or the variable of a SUBQUERY.
        case variable(String)
        /// `%@`, `%K`, `%d` or `%f` (length modifiers such as `%ld` are folded into `d`).
        case argument(Character)
        case end
    }

    var kind: Kind
    /// Where the token starts, in Unicode scalars.
    var offset: Int
    /// The token as written, for error messages.
    var text: String
}

/// Splits a format string into tokens.
struct PredicateLexer {
    private let format: String
    private let scalars: [Unicode.Scalar]
    private var position = 0
    /// Whether the last token ends an operand, so that a `-` or `+` after it is an
    /// operator (`a-5`), not the sign of a number (`a == -5`).
    private var afterOperand = false

    init(format: String) {
        self.format = format
        self.scalars = Array(format.unicodeScalars)
    }

    static func tokens(of format: String) throws -> [PredicateToken] {
        var lexer = PredicateLexer(format: format)
        var tokens: [PredicateToken] = []
        repeat {
            let token = try lexer.next()
            tokens.append(token)
            switch token.kind {
            case .word(let word):
                // Keywords such as AND, IN or BETWEEN come before an operand; the keywords
                // for values end one.
                let keyword = word.uppercased()
                lexer.afterOperand = !PredicateParser.reservedWords.contains(keyword)
                    || ["NIL", "NULL", "YES", "NO", "TRUE", "FALSE", "SELF"].contains(keyword)
            case .escapedWord, .string, .integer, .double, .collectionOperator, .variable, .argument:
                lexer.afterOperand = true
            case .symbol(let symbol):
                lexer.afterOperand = symbol == ")" || symbol == "}"
            case .end:
                lexer.afterOperand = false
            }
        } while tokens.last!.kind != .end
        return tokens
    }

    /// Operators and punctuation, longest first so that `<=` is not read as `<`.
    private static let symbols = [
        "==", "=<", "=>", "!=", "<>", "<=", ">=", "&&", "||",
        "=", "<", ">", "!", "(", ")", "{", "}", ",", ".", "[", "]", "+", "-", "*", "/",
    ].map { Array($0.unicodeScalars) }

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        position + ahead < scalars.count ? scalars[position + ahead] : nil
    }

    private func error(_ message: String, at offset: Int) -> FetchPredicateError {
        FetchPredicateError(.syntax, message, format: format, offset: offset)
    }

    private func text(from start: Int) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[start..<position])
        return String(view)
    }

    private mutating func next() throws -> PredicateToken {
        while let c = peek(), c.properties.isWhitespace { position += 1 }
        let start = position
        guard let c = peek() else { return PredicateToken(kind: .end, offset: start, text: "end of format") }
        func token(_ kind: PredicateToken.Kind) -> PredicateToken {
            PredicateToken(kind: kind, offset: start, text: text(from: start))
        }
        if isIdentifierStart(c) {
            return token(.word(readWord()))
        }
        if c == "#" {
            position += 1
            guard let first = peek(), isIdentifierStart(first) else {
                throw error("'#' must be followed by a key name, as in #name", at: start)
            }
            return token(.escapedWord(readWord()))
        }
        if c == "@" {
            position += 1
            let word = peek().map(isIdentifierStart) == true ? readWord() : ""
            let name = "@" + word.lowercased()
            guard name == countComponent || CollectionOperator(rawValue: name) != nil else {
                throw error("unsupported '@\(word)'; the key path operators are @count (items.@count) and @sum, @avg, @min, @max (items.@sum.price)", at: start)
            }
            return token(.collectionOperator(name))
        }
        if c == "$" {
            position += 1
            guard let first = peek(), isIdentifierStart(first) else {
                throw error("'$' must be followed by a variable name, as in $name", at: start)
            }
            return token(.variable(readWord()))
        }
        if c == "'" || c == "\"" {
            return token(.string(try readString(quote: c)))
        }
        let signed = !afterOperand && (c == "-" || c == "+")
        if isDigit(c) || (c == "." && peek(1).map(isDigit) == true)
            || (signed && (peek(1).map(isDigit) == true || (peek(1) == "." && peek(2).map(isDigit) == true))) {
            return token(try readNumber())
        }
        if c == "%" {
            return token(.argument(try readSpecifier()))
        }
        for symbol in Self.symbols where scalars[position...].starts(with: symbol) {
            position += symbol.count
            return token(.symbol(text(from: start)))
        }
        throw error("unexpected character '\(c)'", at: start)
    }

    private func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
        c.isASCII && (c.properties.isAlphabetic || c == "_")
    }

    private func isDigit(_ c: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(c)
    }

    private mutating func readWord() -> String {
        let start = position
        while let c = peek(), isIdentifierStart(c) || isDigit(c) { position += 1 }
        return text(from: start)
    }

    private mutating func readString(quote: Unicode.Scalar) throws -> String {
        let start = position
        position += 1
        var result = String.UnicodeScalarView()
        while true {
            guard let c = peek() else {
                throw error("unterminated string; close it with a matching \(quote)", at: start)
            }
            position += 1
            if c == quote { return String(result) }
            guard c == "\\" else {
                result.append(c)
                continue
            }
            guard let escaped = peek() else {
                throw error("unterminated string (it ends with a lone \\); close it with a matching \(quote)", at: start)
            }
            position += 1
            switch escaped {
            case "n": result.append("\n")
            case "t": result.append("\t")
            case "r": result.append("\r")
            case "0": result.append("\0")
            case "\\", "'", "\"": result.append(escaped)
            case "u": result.append(try readUnicodeEscape(at: position - 2))
            default:
                // Kept as written, so that patterns such as 'a\*' (LIKE) or '\d+' (MATCHES)
                // reach the operator with their backslash.
                result.append("\\")
                result.append(escaped)
            }
        }
    }

    /// `\uXXXX`, with a surrogate pair written as two escapes.
    private mutating func readUnicodeEscape(at start: Int) throws -> Unicode.Scalar {
        func hex4() throws -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let c = peek(), c.isASCII, let digit = UInt32(String(c), radix: 16) else {
                    throw error("invalid \\u escape; write exactly four hexadecimal digits, as in \\u00E9", at: start)
                }
                value = value * 16 + digit
                position += 1
            }
            return value
        }
        let first = try hex4()
        if (0xD800..<0xDC00).contains(first), peek() == "\\", peek(1) == "u" {
            position += 2
            let second = try hex4()
            if (0xDC00..<0xE000).contains(second),
               let scalar = Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)) {
                return scalar
            }
        }
        guard let scalar = Unicode.Scalar(first) else {
            throw error("invalid \\u escape: \\u\(String(first, radix: 16, uppercase: true)) is half of a surrogate pair; give both halves", at: start)
        }
        return scalar
    }

    private mutating func readNumber() throws -> PredicateToken.Kind {
        let start = position
        var isDouble = false
        if peek() == "-" || peek() == "+" { position += 1 }
        if peek() == "0", let x = peek(1), x == "x" || x == "X" {
            position += 2
            let digitsStart = position
            while let c = peek(), c.isASCII, UInt8(String(c), radix: 16) != nil { position += 1 }
            var digits = String.UnicodeScalarView()
            digits.append(contentsOf: scalars[digitsStart..<position])
            let negative = scalars[start] == "-"
            guard let magnitude = UInt64(String(digits), radix: 16),
                  let value = negative ? (magnitude == 1 << 63 ? Int64.min : Int64(exactly: magnitude).map { -$0 }) : Int64(exactly: magnitude)
            else {
                throw error("invalid hexadecimal integer '\(text(from: start))'; it must fit in 64 bits", at: start)
            }
            return .integer(value)
        }
        while let c = peek(), isDigit(c) { position += 1 }
        // `.5` and `1.` are doubles too, as in C; `1.name` is not a number.
        if peek() == ".", peek(1).map({ isDigit($0) || !(isIdentifierStart($0) || $0 == "@") }) ?? true {
            isDouble = true
            position += 1
            while let c = peek(), isDigit(c) { position += 1 }
        }
        if let e = peek(), e == "e" || e == "E" {
            let signed = peek(1) == "-" || peek(1) == "+"
            if peek(signed ? 2 : 1).map(isDigit) == true {
                isDouble = true
                position += signed ? 2 : 1
                while let c = peek(), isDigit(c) { position += 1 }
            }
        }
        let literal = text(from: start)
        if isDouble {
            // Double(_:) rounds correctly, and reads 1e999 as infinity.
            // Written out as "0.5" and "1.0" first: `.5` and `1.` are not Swift literals.
            var digits = literal.replacingOccurrences(of: ".e", with: ".0e").replacingOccurrences(of: ".E", with: ".0E")
            if digits.hasSuffix(".") { digits += "0" }
            if let point = digits.firstIndex(of: "."), point == digits.startIndex || !digits[digits.index(before: point)].isNumber {
                digits.insert("0", at: point)
            }
            return .double(Double(digits)!)
        }
        guard let value = Int64(literal) else {
            throw error("integer \(literal) does not fit in 64 bits; write it with a decimal point to compare it as a double", at: start)
        }
        return .integer(value)
    }

    private mutating func readSpecifier() throws -> Character {
        let start = position
        position += 1
        guard let c = peek() else {
            throw error("incomplete format specifier '%'; use %@, %K, %d or %f", at: start)
        }
        position += 1
        switch c {
        case "@": return "@"
        case "K": return "K"
        case "d", "i", "u": return "d"
        case "f", "g", "e": return "f"
        case "l":
            if peek() == "l" { position += 1 }
            if let n = peek(), ["d", "i", "u"].contains(n) { position += 1; return "d" }
            if peek() == "f" { position += 1; return "f" }
        default: break
        }
        throw error("unsupported format specifier '\(text(from: start))'; use %@ (any value), %K (a key path), %d (an integer) or %f (a double)", at: start)
    }
}
