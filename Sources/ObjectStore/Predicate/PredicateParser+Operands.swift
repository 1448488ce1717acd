import Foundation

/// The operands of comparisons: key paths, constants, lists, `SELF`, variables and
/// subqueries.
extension PredicateParser {
    typealias Operand = FetchPredicate.Operand

    mutating func parseOperand() throws -> Operand {
        let token = current
        switch token.kind {
        case .word(let word) where !Self.reservedWords.contains(word.uppercased()):
            return .keyPath(try parseKeyPath())
        case .escapedWord:
            return .keyPath(try parseKeyPath())
        case .word(let word) where word.uppercased() == "SELF":
            advance()
            return .evaluatedObject
        case .word(let word) where word.uppercased() == "SUBQUERY":
            return try parseSubquery()
        case .variable(let name):
            advance()
            guard isSymbol(current, ".") else { return .variable(name) }
            return .keyPath(["$" + name] + (try parseKeyPathContinuation()))
        case .argument("K"):
            advance()
            let path = try keyPath(fromArgument: try nextArgument(for: token), token: token)
            return .keyPath(path + (try parseKeyPathContinuation()))
        case .argument("@"):
            advance()
            let argument = try nextArgument(for: token)
            if Self.elements(of: argument) != nil {
                throw FetchPredicateError(.argument, "argument \(argumentIndex) is a collection, which fits only after IN or BETWEEN; pass a single value", format: format, offset: token.offset)
            }
            return try constant(fromArgument: argument, token: token)
        case .symbol("{"):
            throw syntaxError("a list {…} fits only after IN or BETWEEN")
        default:
            return try parseConstant()
        }
    }

    /// A literal value, or a `%@`, `%d`, `%f` argument holding one.
    private mutating func parseConstant() throws -> Operand {
        let token = current
        switch token.kind {
        case .string(let string):
            advance()
            return .value(.string(string))
        case .integer(let integer):
            advance()
            return .value(.integer(integer))
        case .double(let double):
            advance()
            return .value(.double(double))
        case .word(let word):
            switch word.uppercased() {
            case "NIL", "NULL": advance(); return .value(.null)
            case "YES", "TRUE": advance(); return .value(.bool(true))
            case "NO", "FALSE": advance(); return .value(.bool(false))
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
            case "d": return .value(try integer(fromArgument: argument, token: token))
            case "f": return .value(try double(fromArgument: argument, token: token))
            case "@":
                if Self.elements(of: argument) != nil {
                    throw FetchPredicateError(.argument, "argument \(argumentIndex) is a collection; a list holds single values", format: format, offset: token.offset)
                }
                return try constant(fromArgument: argument, token: token)
            default:
                throw syntaxError("a list holds constant values only, not key paths (%K)", at: token)
            }
        case .symbol("-"), .symbol("+"):
            let negative = isSymbol(token, "-")
            advance()
            switch (try parseConstant(), negative) {
            case (.value(.integer(let integer)), true) where integer != .min: return .value(.integer(-integer))
            case (.value(.double(let double)), true): return .value(.double(-double))
            case (.value(let value), false) where value.type == .integer || value.type == .double: return .value(value)
            default: throw syntaxError("a sign must be followed by a number", at: token)
            }
        default:
            throw syntaxError("expected a key path or a value, found \(describe(token))")
        }
    }

    /// A `%@` argument that is not a collection: an object (for `SELF`) or a value.
    private func constant(fromArgument argument: Any?, token: PredicateToken) throws -> Operand {
        if let id = Self.objectID(of: argument) { return .objects([id], isList: false) }
        return .value(try value(fromArgument: argument, token: token))
    }

    /// `CAST(757382400, "NSDate")` (seconds since 2001-01-01, as NSPredicate writes dates),
    /// `CAST("AAEC", "NSData")` (base64) or `CAST("Item/12", "ObjectID")` (an object, for
    /// `SELF`; `Item/t3` for an unsaved one).
    private mutating func parseCast() throws -> Operand {
        let castToken = current
        advance()
        try expectSymbol("(", "after CAST")
        let argument = current
        advance()
        try expectSymbol(",", "between the value and the type of CAST")
        guard case .string(let type) = current.kind else {
            throw syntaxError("expected the type of CAST, \"NSDate\", \"NSData\" or \"ObjectID\", found \(describe(current))")
        }
        advance()
        try expectSymbol(")", "to close CAST")
        switch (argument.kind, type) {
        case (.integer(let seconds), "NSDate"):
            return .value(.date(Date(timeIntervalSinceReferenceDate: Double(seconds))))
        case (.double(let seconds), "NSDate") where !seconds.isNaN:
            return .value(.date(Date(timeIntervalSinceReferenceDate: seconds)))
        case (.string(let base64), "NSData"):
            guard let data = Data(base64Encoded: base64) else {
                throw syntaxError("CAST(…, \"NSData\") needs base64 text; \(argument.text) is not", at: argument)
            }
            return .value(.binary(data))
        case (.string(let text), "ObjectID"):
            guard let id = Self.objectID(described: text) else {
                throw syntaxError("CAST(…, \"ObjectID\") needs an object ID such as \"Item/12\" (or \"Item/t3\" unsaved); \(argument.text) is not one", at: argument)
            }
            return .objects([id], isList: false)
        default:
            throw syntaxError("unsupported CAST; write CAST(seconds since 2001, \"NSDate\"), CAST(\"base64\", \"NSData\") or CAST(\"Entity/12\", \"ObjectID\")", at: castToken)
        }
    }

    /// The ID an ``ObjectID/description`` writes: `Item/12`, or `Item/t3` for an unsaved object.
    private static func objectID(described text: String) -> ObjectID? {
        if let id = ObjectID(string: text) { return id }
        let parts = text.split(separator: "/")
        guard parts.count == 2, parts[1].first == "t", let number = Int64(parts[1].dropFirst()) else { return nil }
        return ObjectID.temporary(entityName: String(parts[0]), number: number)
    }

    private mutating func parseKeyPath() throws -> [String] {
        [try parseKeyComponent()] + (try parseKeyPathContinuation())
    }

    /// `.name.name…`, `.@count` (last), or `.@sum.name` (last; also `@avg`, `@min`, `@max`).
    private mutating func parseKeyPathContinuation() throws -> [String] {
        var components: [String] = []
        while isSymbol(current, ".") {
            advance()
            if case .collectionOperator(let name) = current.kind {
                advance()
                components.append(name)
                if name == countComponent { break }
                try expectSymbol(".", "and a key after \(name), as in items.\(name).price")
                components.append(try parseKeyComponent())
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

    /// The values after IN (`count` nil) or BETWEEN (`count` 2): `{a, b}`, `%@` or a
    /// variable; objects (for `SELF IN`) as well as values.
    mutating func parseList(after op: PredicateToken, count: Int?) throws -> Operand {
        let usage = count == nil ? "IN {'a', 'b'} or IN %@ with an array" : "BETWEEN {1, 5} or BETWEEN %@ with an array of two values"
        var elements: [Operand] = []
        let start = current
        if isSymbol(current, "{") {
            advance()
            if !isSymbol(current, "}") {
                elements.append(try parseConstant())
                while isSymbol(current, ",") {
                    advance()
                    elements.append(try parseConstant())
                }
            }
            guard isSymbol(current, "}") else {
                throw syntaxError("expected ',' or '}' in the list that starts at character \(start.offset), found \(describe(current))")
            }
            advance()
        } else if current.kind == .argument("@") {
            advance()
            let argument = try nextArgument(for: start)
            guard let items = Self.elements(of: argument) else {
                throw FetchPredicateError(.argument, "argument \(argumentIndex) for \(op.text) must be an array, as in \(usage); got \(Self.typeName(argument))", format: format, offset: start.offset)
            }
            elements = try items.map { element in
                if Self.elements(of: element) != nil {
                    throw FetchPredicateError(.argument, "argument \(argumentIndex) holds a nested collection; pass an array of single values", format: format, offset: start.offset)
                }
                return try constant(fromArgument: element, token: start)
            }
        } else if case .variable(let name) = current.kind {
            advance()
            return .variable(name)
        } else {
            throw syntaxError("\(op.text) needs a list, as in \(usage); found \(describe(current))")
        }
        if let count, elements.count != count {
            throw FetchPredicateError(.syntax, "\(op.text) needs exactly \(count) values, as in \(usage); got \(elements.count)", format: format, offset: start.offset)
        }
        return try Self.list(elements, at: start, in: format)
    }

    /// One list of values, or one of objects: never both kinds.
    private static func list(_ elements: [Operand], at token: PredicateToken, in format: String) throws -> Operand {
        var values: [Value] = []
        var ids: [ObjectID] = []
        for element in elements {
            switch element {
            case .value(let value): values.append(value)
            case .objects(let more, _): ids += more
            default: break
            }
        }
        guard values.isEmpty || ids.isEmpty else {
            throw FetchPredicateError(.syntax, "a list holds either objects (for SELF IN) or values, not both", format: format, offset: token.offset)
        }
        return ids.isEmpty ? .list(values) : .objects(ids, isList: true)
    }

    /// `SUBQUERY(collection, $variable, predicate).@count`.
    private mutating func parseSubquery() throws -> Operand {
        let subqueryToken = current
        let usage = "as in SUBQUERY(items, $item, $item.done == YES).@count > 0"
        advance()
        try expectSymbol("(", "after SUBQUERY")
        let collection: [String]
        switch current.kind {
        case .variable(let name):
            advance()
            collection = ["$" + name] + (try parseKeyPathContinuation())
        case .word(let word) where !Self.reservedWords.contains(word.uppercased()):
            collection = try parseKeyPath()
        case .escapedWord:
            collection = try parseKeyPath()
        default:
            throw syntaxError("SUBQUERY needs a to-many key path first, \(usage); found \(describe(current))")
        }
        try expectSymbol(",", "after the key path of SUBQUERY, \(usage)")
        guard case .variable(let variable) = current.kind else {
            throw syntaxError("expected a variable such as $item after the key path of SUBQUERY, \(usage); found \(describe(current))")
        }
        advance()
        try expectSymbol(",", "after the variable of SUBQUERY, \(usage)")
        try enterNesting()
        defer { depth -= 1 }
        let predicate = try parseOr()
        try expectSymbol(")", "to close SUBQUERY")
        guard isSymbol(current, "."), index + 1 < tokens.count, tokens[index + 1].kind == .collectionOperator(countComponent) else {
            throw syntaxError("SUBQUERY gives a collection of objects: count them with .@count, \(usage)", at: subqueryToken)
        }
        advance()
        advance()
        return .subqueryCount(FetchPredicate.Subquery(collection: collection, variable: variable, predicate: predicate))
    }
}
