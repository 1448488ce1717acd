import Foundation

/// Parses a format string and its arguments into a ``FetchPredicate/Node``, by recursive
/// descent. Precedence, loosest first: `OR`, `AND`, `NOT`, then comparisons.
struct PredicateParser {
    private let format: String
    private let tokens: [PredicateToken]
    private var index = 0
    private let arguments: [Any?]
    private var argumentIndex = 0
    /// How deep the parentheses and `NOT`s are nested here.
    private var depth = 0

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

    private var current: PredicateToken { tokens[index] }

    private mutating func advance() {
        if index < tokens.count - 1 { index += 1 }
    }

    private func isWord(_ token: PredicateToken, _ words: String...) -> Bool {
        if case .word(let word) = token.kind { return words.contains(word.uppercased()) }
        return false
    }

    private func isSymbol(_ token: PredicateToken, _ symbols: String...) -> Bool {
        if case .symbol(let symbol) = token.kind { return symbols.contains(symbol) }
        return false
    }

    private func describe(_ token: PredicateToken) -> String {
        token.kind == .end ? "end of format" : "'\(token.text)'"
    }

    private func syntaxError(_ message: String, at token: PredicateToken? = nil) -> FetchPredicateError {
        FetchPredicateError(.syntax, message, format: format, offset: (token ?? current).offset)
    }

    private mutating func expectSymbol(_ symbol: String, _ purpose: String) throws {
        guard isSymbol(current, symbol) else {
            throw syntaxError("expected '\(symbol)' \(purpose), found \(describe(current))")
        }
        advance()
    }

    // MARK: Logic

    private mutating func parseOr() throws -> FetchPredicate.Node {
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
    private mutating func enterNesting() throws {
        depth += 1
        if depth > Self.maximumDepth {
            throw syntaxError("nested more than \(Self.maximumDepth) levels deep (parentheses and NOTs); write the predicate with fewer levels, e.g. combine conditions with AND and OR")
        }
    }

    private mutating func parsePrimary() throws -> FetchPredicate.Node {
        if isSymbol(current, "(") {
            let open = current
            try enterNesting()
            defer { depth -= 1 }
            advance()
            let node = try parseOr()
            guard isSymbol(current, ")") else {
                throw syntaxError("expected ')' to close the '(' at character \(open.offset), found \(describe(current))")
            }
            advance()
            return node
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

    // MARK: Comparisons

    private mutating func parseComparison() throws -> FetchPredicate.Comparison {
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
        let left = try parseOperand()
        let operatorToken = current
        guard let op = parseOperator() else {
            if current.kind == .end {
                throw syntaxError("the predicate ends after '\(leftToken.text)'; add a comparison, as in \(leftToken.text) == 'x'")
            }
            throw syntaxError("expected a comparison operator (==, !=, <, >, IN, BETWEEN, BEGINSWITH, CONTAINS, LIKE...) after '\(leftToken.text)', found \(describe(current))")
        }
        let options = try parseOptions()
        let right: FetchPredicate.Operand
        switch op {
        case .in: right = .list(try parseList(after: operatorToken, count: nil))
        case .between: right = .list(try parseList(after: operatorToken, count: 2))
        default: right = try parseOperand()
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

    /// `[c]`, `[d]`, `[cd]` right after an operator.
    private mutating func parseOptions() throws -> StringComparisonOptions {
        guard isSymbol(current, "[") else { return [] }
        let open = current
        advance()
        var options: StringComparisonOptions = []
        if case .word(let letters) = current.kind {
            for letter in letters {
                switch letter {
                case "c": options.insert(.caseInsensitive)
                case "d": options.insert(.diacriticInsensitive)
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

    // MARK: Operands

    private mutating func parseOperand() throws -> FetchPredicate.Operand {
        let token = current
        switch token.kind {
        case .word(let word) where !Self.reservedWords.contains(word.uppercased()):
            return .keyPath(try parseKeyPath())
        case .escapedWord:
            return .keyPath(try parseKeyPath())
        case .argument("K"):
            advance()
            return .keyPath(try keyPath(fromArgument: try nextArgument(for: token), token: token))
        case .argument("@"):
            advance()
            let argument = try nextArgument(for: token)
            if Self.elements(of: argument) != nil {
                throw FetchPredicateError(.argument, "argument \(argumentIndex) is a collection, which fits only after IN or BETWEEN; pass a single value", format: format, offset: token.offset)
            }
            return .value(try value(fromArgument: argument, token: token))
        case .symbol("{"):
            throw syntaxError("a list {…} fits only after IN or BETWEEN")
        default:
            return .value(try parseConstant())
        }
    }

    /// A literal value, or a `%@`, `%d`, `%f` argument holding one.
    private mutating func parseConstant() throws -> Value {
        let token = current
        switch token.kind {
        case .string(let string):
            advance()
            return .string(string)
        case .integer(let integer):
            advance()
            return .integer(integer)
        case .double(let double):
            advance()
            return .double(double)
        case .word(let word):
            switch word.uppercased() {
            case "NIL", "NULL": advance(); return .null
            case "YES", "TRUE": advance(); return .bool(true)
            case "NO", "FALSE": advance(); return .bool(false)
            case "CAST": return try parseCast()
            default:
                if Self.reservedWords.contains(word.uppercased()) {
                    throw syntaxError("unexpected keyword '\(word)'; expected a key path or a value (write #\(word) for a key with that name)")
                }
                throw syntaxError("a list holds constant values only, not key paths such as '\(word)'")
            }
        case .argument(let specifier):
            advance()
            let argument = try nextArgument(for: token)
            switch specifier {
            case "d": return try integer(fromArgument: argument, token: token)
            case "f": return try double(fromArgument: argument, token: token)
            case "@":
                if Self.elements(of: argument) != nil {
                    throw FetchPredicateError(.argument, "argument \(argumentIndex) is a collection; a list holds single values", format: format, offset: token.offset)
                }
                return try value(fromArgument: argument, token: token)
            default:
                throw syntaxError("a list holds constant values only, not key paths (%K)", at: token)
            }
        default:
            throw syntaxError("expected a key path or a value, found \(describe(token))")
        }
    }

    /// `CAST(757382400, "NSDate")` (seconds since 2001-01-01, as NSPredicate writes dates)
    /// or `CAST("AAEC", "NSData")` (base64).
    private mutating func parseCast() throws -> Value {
        let castToken = current
        advance()
        try expectSymbol("(", "after CAST")
        let argument = current
        advance()
        try expectSymbol(",", "between the value and the type of CAST")
        guard case .string(let type) = current.kind else {
            throw syntaxError("expected the type of CAST, \"NSDate\" or \"NSData\", found \(describe(current))")
        }
        advance()
        try expectSymbol(")", "to close CAST")
        switch (argument.kind, type) {
        case (.integer(let seconds), "NSDate"):
            return .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
        case (.double(let seconds), "NSDate") where !seconds.isNaN:
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case (.string(let base64), "NSData"):
            guard let data = Data(base64Encoded: base64) else {
                throw syntaxError("CAST(…, \"NSData\") needs base64 text; \(argument.text) is not", at: argument)
            }
            return .binary(data)
        default:
            throw syntaxError("unsupported CAST; write CAST(seconds since 2001, \"NSDate\") or CAST(\"base64\", \"NSData\")", at: castToken)
        }
    }

    private mutating func parseKeyPath() throws -> [String] {
        var components = [try parseKeyComponent()]
        while isSymbol(current, ".") {
            advance()
            if current.kind == .count {
                advance()
                components.append(countComponent)
                break
            }
            components.append(try parseKeyComponent())
        }
        return components
    }

    private mutating func parseKeyComponent() throws -> String {
        switch current.kind {
        case .word(let word), .escapedWord(let word):
            advance()
            return word
        default:
            throw syntaxError("expected a key name after '.', found \(describe(current))")
        }
    }

    /// The values after IN (`count` nil) or BETWEEN (`count` 2): `{a, b}` or `%@`.
    private mutating func parseList(after op: PredicateToken, count: Int?) throws -> [Value] {
        let usage = count == nil ? "IN {'a', 'b'} or IN %@ with an array" : "BETWEEN {1, 5} or BETWEEN %@ with an array of two values"
        var values: [Value] = []
        let start = current
        if isSymbol(current, "{") {
            advance()
            if !isSymbol(current, "}") {
                values.append(try parseConstant())
                while isSymbol(current, ",") {
                    advance()
                    values.append(try parseConstant())
                }
            }
            guard isSymbol(current, "}") else {
                throw syntaxError("expected ',' or '}' in the list that starts at character \(start.offset), found \(describe(current))")
            }
            advance()
        } else if current.kind == .argument("@") {
            advance()
            let argument = try nextArgument(for: start)
            guard let elements = Self.elements(of: argument) else {
                throw FetchPredicateError(.argument, "argument \(argumentIndex) for \(op.text) must be an array, as in \(usage); got \(Self.typeName(argument))", format: format, offset: start.offset)
            }
            values = try elements.map { element in
                if Self.elements(of: element) != nil {
                    throw FetchPredicateError(.argument, "argument \(argumentIndex) holds a nested collection; pass an array of single values", format: format, offset: start.offset)
                }
                return try value(fromArgument: element, token: start)
            }
        } else {
            throw syntaxError("\(op.text) needs a list, as in \(usage); found \(describe(current))")
        }
        if let count, values.count != count {
            throw FetchPredicateError(.syntax, "\(op.text) needs exactly \(count) values, as in \(usage); got \(values.count)", format: format, offset: start.offset)
        }
        return values
    }

    // MARK: Arguments

    private mutating func nextArgument(for token: PredicateToken) throws -> Any? {
        guard argumentIndex < arguments.count else {
            throw FetchPredicateError(
                .argument,
                "missing argument for \(token.text): the format needs at least \(argumentIndex + 1) arguments, but \(arguments.count == 1 ? "only 1 was" : "\(arguments.count) were") given; pass one for each %@, %K, %d and %f",
                format: format, offset: token.offset)
        }
        defer { argumentIndex += 1 }
        return Self.unwrapped(arguments[argumentIndex])
    }

    /// `argument` without its layers of `Optional`: an array of `Any?` or a `String?` passed
    /// as `Any` holds its values (or nil) in optionals that `Any?` does not unwrap.
    static func unwrapped(_ argument: Any?) -> Any? {
        var current = argument
        while let value = current {
            let mirror = Mirror(reflecting: value)
            guard mirror.displayStyle == .optional else { return value }
            current = mirror.children.first?.value
        }
        return nil
    }

    private func argumentError(_ message: String, _ token: PredicateToken) -> FetchPredicateError {
        FetchPredicateError(.argument, "argument \(argumentIndex) for \(token.text) \(message)", format: format, offset: token.offset)
    }

    private func value(fromArgument argument: Any?, token: PredicateToken) throws -> Value {
        guard let value = Self.value(of: argument) else {
            throw argumentError("is a \(Self.typeName(argument)), which a predicate cannot compare; pass a String, an integer, a Double, a Bool, a Date, Data or nil", token)
        }
        if case .double(let d) = value, d.isNaN {
            throw argumentError("is NaN, which equals nothing; pass nil to test for a missing value", token)
        }
        if case .date(let date) = value, date.timeIntervalSinceReferenceDate.isNaN {
            throw argumentError("is an invalid date (NaN)", token)
        }
        return value
    }

    private func integer(fromArgument argument: Any?, token: PredicateToken) throws -> Value {
        guard let value = Self.value(of: argument), case .integer = value else {
            throw argumentError("must be an integer (Int, Int64…); got \(Self.typeName(argument)). Use %f for a Double, %@ for other values", token)
        }
        return value
    }

    private func double(fromArgument argument: Any?, token: PredicateToken) throws -> Value {
        switch Self.value(of: argument) {
        case .double(let d)? where !d.isNaN: return .double(d)
        case .integer(let i)?: return .double(Double(i))
        default:
            throw argumentError("must be a number (Double, Float or an integer), not NaN; got \(Self.typeName(argument)). Use %@ for other values", token)
        }
    }

    private func keyPath(fromArgument argument: Any?, token: PredicateToken) throws -> [String] {
        guard let path = argument as? String ?? (argument as? Substring).map(String.init) else {
            throw argumentError("must be a String key path such as \"details.closeDate\"; got \(Self.typeName(argument))", token)
        }
        let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (position, component) in components.enumerated() {
            let isName = component.first.map { $0.isASCII && ($0.isLetter || $0 == "_") } == true
                && component.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
            let isCount = component == countComponent && position == components.count - 1 && position > 0
            guard isName || isCount else {
                throw argumentError("is not a key path: \"\(path)\"; use key names of letters, digits and _, separated by dots (and @count last)", token)
            }
        }
        return components
    }

    /// The value of a `%@`, `%d` or `%f` argument: nil, `NSNull`, or a
    /// ``PredicateValueConvertible`` (optionals included); nil for any other type.
    private static func value(of argument: Any?) -> Value? {
        guard let argument else { return .null }
        if argument is NSNull { return .null }
        return (argument as? any PredicateValueConvertible)?.predicateValue
    }

    /// The elements of an array or set argument; nil for anything else (strings and data
    /// are single values even though they are collections).
    static func elements(of argument: Any?) -> [Any?]? {
        guard let argument = unwrapped(argument), !(argument is String), !(argument is Substring), !(argument is Data),
              let collection = argument as? any Collection
        else { return nil }
        return elements(collection)
    }

    private static func elements<C: Collection>(_ collection: C) -> [Any?] {
        collection.map { unwrapped($0) }
    }

    private static func typeName(_ argument: Any?) -> String {
        argument.map { String(describing: type(of: $0)) } ?? "nil"
    }
}
