import Foundation

/// Comparisons and their sides: `[ANY|ALL|NONE] expression operator[options] expression`.
extension PredicateParser {
    mutating func parseComparison() throws -> FetchPredicate.Comparison {
        var modifier = FetchPredicate.Modifier.direct
        if isWord(current, "ANY", "SOME") {
            modifier = .any
        } else if isWord(current, "ALL") {
            modifier = .all
        } else if isWord(current, "NONE") {
            modifier = .none
        }
        if modifier != .direct {
            advance()
            guard nextIsKeyPath else {
                throw syntaxError("\(modifier.rawValue) must be followed by a key path through a to-many relationship, as in \(modifier.rawValue) items.name == 'x'")
            }
        }
        let leftToken = current
        let left = try parseExpression()
        let operatorToken = current
        guard let op = parseOperator() else {
            if current.kind == .end {
                throw syntaxError("the predicate ends after '\(leftToken.text)'; add a comparison, as in \(leftToken.text) == 'x'")
            }
            throw syntaxError("expected a comparison operator (==, !=, <, >, IN, BETWEEN, BEGINSWITH, CONTAINS, LIKE...) or an arithmetic one (+, -, *, /) after '\(leftToken.text)', found \(describe(current))")
        }
        let options = try parseOptions()
        let right: FetchPredicate.Operand
        switch op {
        case .in: right = try parseInRight(after: operatorToken)
        case .between: right = try parseList(after: operatorToken, count: 2)
        default: right = try parseExpression()
        }
        return FetchPredicate.Comparison(modifier: modifier, left: left, op: op, right: right, options: options)
    }

    /// Whether the next operand is a key path (for ANY/ALL/NONE).
    private var nextIsKeyPath: Bool {
        switch current.kind {
        case .escapedWord, .argument("K"): return true
        case .word(let word): return !Self.reservedWords.contains(word.uppercased())
        default: return false
        }
    }

    private mutating func parseOperator() -> FetchPredicate.Operator? {
        let op: FetchPredicate.Operator?
        switch current.kind {
        case .symbol("=="), .symbol("="): op = .equal
        case .symbol("!="), .symbol("<>"): op = .notEqual
        case .symbol("<"): op = .less
        case .symbol("<="), .symbol("=<"): op = .lessOrEqual
        case .symbol(">"): op = .greater
        case .symbol(">="), .symbol("=>"): op = .greaterOrEqual
        case .word(let word):
            op = [.between, .in, .beginsWith, .endsWith, .contains, .like, .matches]
                .first { $0.rawValue == word.uppercased() }
        default: op = nil
        }
        if op != nil { advance() }
        return op
    }

    /// `[c]`, `[d]`, `[cd]` right after an operator, in either case: `[C]`, `[CD]`.
    private mutating func parseOptions() throws -> StringComparisonOptions {
        guard isSymbol(current, "[") else { return [] }
        let open = current
        advance()
        var options: StringComparisonOptions = []
        if case .word(let letters) = current.kind {
            for letter in letters {
                switch letter {
                case "c", "C": options.insert(.caseInsensitive)
                case "d", "D": options.insert(.diacriticInsensitive)
                default:
                    throw syntaxError("unknown comparison option '\(letter)'; use [c] (case-insensitive), [d] (diacritic-insensitive) or [cd]")
                }
            }
            advance()
        }
        guard isSymbol(current, "]") else {
            throw syntaxError("expected options and ']' after the '[' at character \(open.offset), as in ==[cd], found \(describe(current))")
        }
        advance()
        return options
    }

    /// After IN: a list (`{…}`, or `%@` with an array) for membership; a string or a key
    /// path for a substring test (`'ab' IN name`); a variable.
    private mutating func parseInRight(after op: PredicateToken) throws -> FetchPredicate.Operand {
        if isSymbol(current, "{") { return try parseList(after: op, count: nil) }
        if current.kind == .argument("@"), let next = peekArgument(), Self.elements(of: next) != nil {
            return try parseList(after: op, count: nil)
        }
        return try parseExpression()
    }

    /// The argument the next `%@` will take, without taking it.
    private func peekArgument() -> Any? {
        argumentIndex < arguments.count ? Self.unwrapped(arguments[argumentIndex]) : nil
    }

    // MARK: Expressions

    /// `term (('+' | '-') term)*`.
    private mutating func parseExpression() throws -> FetchPredicate.Operand {
        var left = try parseTerm()
        while let op = arithmeticOperator(.add, .subtract) {
            advance()
            left = .arithmetic(op, left, try parseTerm())
        }
        return left
    }

    /// `factor (('*' | '/') factor)*`.
    private mutating func parseTerm() throws -> FetchPredicate.Operand {
        var left = try parseFactor()
        while let op = arithmeticOperator(.multiply, .divide) {
            advance()
            left = .arithmetic(op, left, try parseFactor())
        }
        return left
    }

    private func arithmeticOperator(_ ops: FetchPredicate.ArithmeticOperator...) -> FetchPredicate.ArithmeticOperator? {
        ops.first { isSymbol(current, $0.rawValue) }
    }

    /// `'-' factor`, `'+' factor`, `'(' expression ')'` or an operand. The minus of a
    /// number is folded into it, so `- 5` is the constant -5, as `-5` is.
    private mutating func parseFactor() throws -> FetchPredicate.Operand {
        if isSymbol(current, "-") || isSymbol(current, "+") {
            let negative = isSymbol(current, "-")
            try enterNesting()
            defer { depth -= 1 }
            advance()
            let operand = try parseFactor()
            guard negative else { return operand }
            switch operand {
            case .value(.integer(let integer)) where integer != .min: return .value(.integer(-integer))
            case .value(.double(let double)): return .value(.double(-double))
            default: return .arithmetic(.subtract, .value(.integer(0)), operand)
            }
        }
        if isSymbol(current, "(") {
            return try parenthesized { try $0.parseExpression() }
        }
        return try parseOperand()
    }
}
