import Foundation

/// Parses a format string and its arguments into a ``FetchPredicate/Node``, by recursive
/// descent. Precedence, loosest first: `OR`, `AND`, `NOT`, comparisons, then within their
/// sides `+` and `-`, `*` and `/`, and unary minus (see Docs/PredicateSyntax.md).
struct PredicateParser {
    let format: String
    let tokens: [PredicateToken]
    var index = 0
    let arguments: [Any?]
    var argumentIndex = 0
    /// How deep the parentheses and `NOT`s are nested here.
    var depth = 0

    /// The deepest nesting of parentheses and `NOT`s a format may have: far more than a
    /// person writes, few enough that parsing, SQL (SQLite allows 1,000 levels) and the
    /// evaluator never run out of stack.
    static let maximumDepth = 100

    init(format: String, arguments: [Any?]) throws {
        self.format = format
        self.tokens = try PredicateLexer.tokens(of: format)
        self.arguments = arguments
    }

    /// The words that cannot name a key unless escaped with `#`.
    static let reservedWords: Set<String> = [
        "AND", "OR", "NOT", "ANY", "SOME", "ALL", "NONE", "IN", "BETWEEN", "BEGINSWITH",
        "ENDSWITH", "CONTAINS", "LIKE", "MATCHES", "NIL", "NULL", "YES", "NO", "TRUE",
        "FALSE", "TRUEPREDICATE", "FALSEPREDICATE", "CAST", "SELF", "FIRST", "LAST",
        "SIZE", "SUBQUERY", "FUNCTION",
    ]

    mutating func parse() throws -> FetchPredicate.Node {
        let node = try parseOr()
        guard current.kind == .end else {
            throw syntaxError("unexpected \(describe(current)); expected AND, OR or the end of the predicate")
        }
        guard argumentIndex == arguments.count else {
            throw FetchPredicateError(
                .argument,
                "too many arguments: the format uses \(argumentIndex), but \(arguments.count) were given; remove the extra arguments or add %@ for them",
                format: format, offset: current.offset)
        }
        return node
    }

    // MARK: Tokens

    var current: PredicateToken { tokens[index] }

    mutating func advance() {
        if index < tokens.count - 1 { index += 1 }
    }

    func isWord(_ token: PredicateToken, _ words: String...) -> Bool {
        if case .word(let word) = token.kind { return words.contains(word.uppercased()) }
        return false
    }

    func isSymbol(_ token: PredicateToken, _ symbols: String...) -> Bool {
        if case .symbol(let symbol) = token.kind { return symbols.contains(symbol) }
        return false
    }

    func describe(_ token: PredicateToken) -> String {
        token.kind == .end ? "end of format" : "'\(token.text)'"
    }

    func syntaxError(_ message: String, at token: PredicateToken? = nil) -> FetchPredicateError {
        FetchPredicateError(.syntax, message, format: format, offset: (token ?? current).offset)
    }

    mutating func expectSymbol(_ symbol: String, _ purpose: String) throws {
        guard isSymbol(current, symbol) else {
            throw syntaxError("expected '\(symbol)' \(purpose), found \(describe(current))")
        }
        advance()
    }

    // MARK: Logic

    mutating func parseOr() throws -> FetchPredicate.Node {
        var nodes = [try parseAnd()]
        while isWord(current, "OR") || isSymbol(current, "||") {
            advance()
            nodes.append(try parseAnd())
        }
        return .disjunction(nodes)
    }

    private mutating func parseAnd() throws -> FetchPredicate.Node {
        var nodes = [try parseNot()]
        while isWord(current, "AND") || isSymbol(current, "&&") {
            advance()
            nodes.append(try parseNot())
        }
        return .conjunction(nodes)
    }

    private mutating func parseNot() throws -> FetchPredicate.Node {
        if isWord(current, "NOT") || isSymbol(current, "!") {
            try enterNesting()
            defer { depth -= 1 }
            advance()
            return .not(try parseNot())
        }
        return try parsePrimary()
    }

    /// One level deeper; refused past ``maximumDepth``, at the token that goes too deep.
    mutating func enterNesting() throws {
        depth += 1
        if depth > Self.maximumDepth {
            throw syntaxError("nested more than \(Self.maximumDepth) levels deep (parentheses and NOTs); write the predicate with fewer levels, e.g. combine conditions with AND and OR")
        }
    }


    mutating func parsePrimary() throws -> FetchPredicate.Node {
        if isSymbol(current, "(") {
            return try parseParenthesized()
        }
        if isWord(current, "TRUEPREDICATE") {
            advance()
            return .constant(true)
        }
        if isWord(current, "FALSEPREDICATE") {
            advance()
            return .constant(false)
        }
        return .comparison(try parseComparison())
    }

    /// `(` starts a grouped predicate, `(a == 1 OR b == 2)`, or the first side of a
    /// comparison, `(wins + 1) * 2 > 3`: the second when an operator follows its `)`.
    private mutating func parseParenthesized() throws -> FetchPredicate.Node {
        if let close = matchingParenthesis(), continuesAComparison(tokens[min(close + 1, tokens.count - 1)]) {
            return .comparison(try parseComparison())
        }
        return try parenthesized { try $0.parseOr() }
    }

    /// `( … )`, one level deeper, with `body` reading what is inside.
    mutating func parenthesized<T>(_ body: (inout PredicateParser) throws -> T) throws -> T {
        let open = current
        try enterNesting()
        defer { depth -= 1 }
        advance()
        let inner = try body(&self)
        guard isSymbol(current, ")") else {
            throw syntaxError("expected ')' to close the '(' at character \(open.offset), found \(describe(current))")
        }
        advance()
        return inner
    }

    /// The index of the `)` that closes the current `(`, if any.
    private func matchingParenthesis() -> Int? {
        var open = 0
        for position in index..<tokens.count {
            if isSymbol(tokens[position], "(") { open += 1 }
            if isSymbol(tokens[position], ")") { open -= 1 }
            if open == 0 { return position }
        }
        return nil
    }

    /// Whether `token` continues the side of a comparison: an arithmetic or
    /// comparison operator.
    private func continuesAComparison(_ token: PredicateToken) -> Bool {
        if isSymbol(token, "+", "-", "*", "/", "==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>") { return true }
        return FetchPredicate.Operator.allCases.contains { $0.rawValue.first!.isLetter && isWord(token, $0.rawValue) }
    }
}
