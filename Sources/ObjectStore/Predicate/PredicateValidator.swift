import Foundation

extension FetchPredicate {
    /// Checks the predicate against the entity it filters: every key path must exist (and
    /// go only through relationships), a to-many relationship needs `ANY`, `ALL`, `NONE` or
    /// `@count`, the two sides of each comparison must have comparable types, the string
    /// operators and options need strings, and `MATCHES` patterns must compile.
    ///
    /// Numbers compare across integer and double attributes, and a bool attribute accepts
    /// 0 and 1; a date attribute only compares with dates. Throws a ``FetchPredicateError``
    /// that quotes the comparison at fault and says what to do.
    public func validate(for entity: EntityDescription, in model: Model) throws {
        try PredicateValidator(entity: entity, model: model).check(node)
    }
}

/// Checks a predicate tree against a model.
struct PredicateValidator {
    let entity: EntityDescription
    let model: Model
    /// The variables of the SUBQUERYs around the predicate, with the entity of the objects
    /// they stand for. Inside a SUBQUERY, key paths start with its variable.
    var scope: [String: EntityDescription] = [:]

    func check(_ node: FetchPredicate.Node) throws {
        switch node {
        case .constant: return
        case .not(let operand): try check(operand)
        case .and(let children), .or(let children): try children.forEach(check)
        case .comparison(let comparison):
            do {
                try check(comparison)
            } catch let error as FetchPredicateError {
                throw FetchPredicateError(error.kind, "in '\(PredicateFormatter.format(comparison))': \(error.message)")
            }
        }
    }

    /// What one side of a comparison is.
    private enum Side {
        case attribute(AttributeType, name: String)
        /// A to-one relationship itself.
        case relationship(name: String)
        /// `SELF` or a SUBQUERY variable: an object of the entity.
        case object(entity: String, name: String)
        /// Objects given by ID, for `SELF`.
        case objects([ObjectID], isList: Bool)
        /// A number computed by arithmetic or counted by a SUBQUERY.
        case number(name: String)
        case constant(Value)
        case list([Value])

        var isEmptyList: Bool {
            if case .list([]) = self { return true }
            return false
        }

        /// What the side is, for messages: "'wins' (an integer attribute)", "\"three\" (a string)".
        var text: String {
            switch self {
            case .attribute(let type, let name): return "'\(name)' (\(type.withArticle) attribute)"
            case .relationship(let name): return "'\(name)' (a to-one relationship)"
            case .constant(.null): return "nil"
            case .constant(let value): return "\(PredicateFormatter.format(value)) (\(value.type.map(\.withArticle) ?? "nil"))"
            case .list(let values): return PredicateFormatter.format(.list(values))
            case .object(let entity, let name): return "\(name) (an object of \(entity))"
            case .objects(let ids, let isList): return PredicateFormatter.format(.objects(ids, isList: isList)) + " (\(isList ? "objects" : "an object"))"
            case .number(let name): return "\(name) (a number)"
            }
        }
    }

    private func check(_ comparison: FetchPredicate.Comparison) throws {
        if comparison.modifier != .direct, case .keyPath = comparison.left {} else if comparison.modifier != .direct {
            throw FetchPredicateError(.syntax, "\(comparison.modifier.rawValue) needs a key path through a to-many relationship on its left side")
        }
        let left = try side(comparison.left, modifier: comparison.modifier)
        let right = try side(comparison.right, modifier: .direct)
        if case .list = left {
            throw FetchPredicateError(.syntax, "a list fits only on the right of IN or BETWEEN")
        }
        let op = comparison.op
        if case .relationship = left { try checkRelationship(comparison) }
        if case .relationship = right { try checkRelationship(comparison) }
        if isObject(left) || isObject(right) {
            return try checkObjects(left, op, right, options: comparison.options)
        }
        if !comparison.options.isEmpty {
            for side in [left, right] where !isString(side) {
                throw FetchPredicateError(.typeMismatch, "the options \(comparison.options.formatSuffix) compare strings, but \(side.text) is not one; remove the options")
            }
        }
        switch (op, right) {
        case (.in, .list(let values)), (.between, .list(let values)):
            for value in values {
                try checkComparable(left, .constant(value))
            }
        case (.between, _):
            throw FetchPredicateError(.syntax, "BETWEEN needs a list of two values on its right side, as in BETWEEN {1, 5}")
        case (.in, _):
            // `'ab' IN name`: a substring test, CONTAINS with its sides swapped.
            for side in [left, right] where !isString(side) {
                throw FetchPredicateError(.typeMismatch, "IN needs a list on its right side (IN {'a', 'b'}), or strings on both sides for a substring test ('ab' IN name); \(side.text) is neither")
            }
        case (_, .list):
            throw FetchPredicateError(.syntax, "a list fits only on the right of IN or BETWEEN")
        default:
            if op.isStringOperator {
                for side in [left, right] where !isString(side) {
                    throw FetchPredicateError(.typeMismatch, "\(op.rawValue) compares strings, but \(side.text) is not one; compare it with ==, <, > or IN instead")
                }
                if op == .matches, case .constant(.string(let pattern)) = right,
                   StringComparison.regularExpression(pattern, options: comparison.options) == nil {
                    throw FetchPredicateError(.invalidRegularExpression, "\(PredicateFormatter.format(.string(pattern))) is not a valid regular expression (ICU syntax, as NSRegularExpression reads it); fix the pattern, or use LIKE for * and ? wildcards")
                }
            } else {
                try checkComparable(left, right)
            }
        }
    }

    private func isObject(_ side: Side) -> Bool {
        switch side {
        case .object, .objects: return true
        default: return false
        }
    }

    /// `SELF == %@`, `SELF != %@`, `SELF IN %@` with objects of the entity, or nil.
    private func checkObjects(_ left: Side, _ op: FetchPredicate.Operator, _ right: Side, options: StringComparisonOptions) throws {
        let usage = "compare SELF with ==, != or IN and objects of its entity (or nil), as in SELF IN %@ with an array of objects"
        guard options.isEmpty, [.equal, .notEqual, .in].contains(op) else {
            throw FetchPredicateError(.typeMismatch, "\(op.rawValue)\(options.formatSuffix) does not compare objects; \(usage)")
        }
        var entities: Set<String> = []
        for side in [left, right] {
            switch side {
            case .object(let entity, _): entities.insert(entity)
            case .objects(let ids, _): entities.formUnion(ids.map(\.entityName))
            case .constant(.null) where op != .in: break
            case .list([]) where op == .in: break  // `SELF IN {}`: no objects, no values
            default: throw FetchPredicateError(.typeMismatch, "\(side.text) is not an object; \(usage)")
            }
        }
        guard entities.count <= 1 else {
            throw FetchPredicateError(.typeMismatch, "objects of \(entities.sorted().joined(separator: " and ")) are never the same object; \(usage)")
        }
        var isList = right.isEmptyList
        if case .objects(_, let list) = right { isList = list }
        guard (op == .in) == isList else {
            throw FetchPredicateError(.syntax, op == .in ? "IN needs a list of objects on its right side, as in SELF IN %@ with an array" : "a list of objects fits only after IN")
        }
    }

    private func side(_ operand: FetchPredicate.Operand, modifier: FetchPredicate.Modifier) throws -> Side {
        switch operand {
        case .value(let value): return .constant(value)
        case .list(let values): return .list(values)
        case .objects(let ids, let isList): return .objects(ids, isList: isList)
        case .evaluatedObject:
            try checkOutsideSubquery("SELF")
            return .object(entity: entity.name, name: "SELF")
        case .variable(let name):
            guard let element = scope[name] else { throw Self.unsubstituted(name) }
            return .object(entity: element.name, name: "$" + name)
        case .arithmetic(let op, let a, let b):
            for operand in [a, b] {
                let side = try side(operand, modifier: .direct)
                if !isNumber(side) {
                    throw FetchPredicateError(.typeMismatch, "\(op.rawValue) computes with numbers, and \(side.text) is not one")
                }
            }
            return .number(name: PredicateFormatter.format(operand))
        case .subqueryCount(let subquery):
            try check(subquery)
            return .number(name: PredicateFormatter.format(operand))
        case .keyPath(let components):
            let path = try resolve(components)
            if modifier == .direct {
                try path.checkScalar()
            } else {
                try path.checkAggregate(modifier)
            }
            guard let type = path.valueType else { return .relationship(name: path.text) }
            return .attribute(type, name: PredicateFormatter.format(keyPath: components))
        }
    }

    /// Resolves a key path from the entity, or from the entity of the SUBQUERY variable it
    /// starts with.
    private func resolve(_ components: [String]) throws -> ResolvedKeyPath {
        guard let first = components.first, first.hasPrefix("$") else {
            try checkOutsideSubquery("the key path '\(PredicateFormatter.format(keyPath: components))'")
            return try ResolvedKeyPath.resolve(components, from: entity, in: model)
        }
        let name = String(first.dropFirst())
        guard let element = scope[name] else { throw Self.unsubstituted(name) }
        return try ResolvedKeyPath.resolve(Array(components.dropFirst()), from: element, in: model)
    }

    /// Inside a SUBQUERY the object is named by the variable: a bare key path or `SELF`
    /// would be ambiguous, and is refused rather than read from one object or the other.
    private func checkOutsideSubquery(_ what: String) throws {
        guard let variable = scope.keys.sorted().first else { return }
        throw FetchPredicateError(.keyPath, "inside SUBQUERY, \(what) is ambiguous: start key paths with the variable, as in $\(variable).name")
    }

    static func unsubstituted(_ name: String) -> FetchPredicateError {
        FetchPredicateError(.variable, "the variable $\(name) has no value; give it one with withSubstitutionVariables([\"\(name)\": …]) before fetching or evaluating")
    }

    /// `SUBQUERY(collection, $v, predicate)`: the collection reaches objects through a
    /// to-many relationship, and the predicate holds for them.
    private func check(_ subquery: FetchPredicate.Subquery) throws {
        let path = try resolve(subquery.collection)
        guard case .relationship(let last) = path.terminal, (path.hops + [last]).contains(where: \.relationship.isToMany) else {
            throw FetchPredicateError(.keyPath, "SUBQUERY needs a key path that ends on a relationship through a to-many one, as in SUBQUERY(items, $item, …); '\(path.text)' is not one")
        }
        guard scope[subquery.variable] == nil else {
            throw FetchPredicateError(.syntax, "the SUBQUERY variable $\(subquery.variable) is already the variable of an enclosing SUBQUERY; give it another name")
        }
        var inner = PredicateValidator(entity: last.destination, model: model)
        inner.scope = scope.merging([subquery.variable: last.destination]) { $1 }
        try inner.check(subquery.predicate)
    }

    private func isNumber(_ side: Side) -> Bool {
        switch side {
        case .number, .constant(.null), .constant(.integer), .constant(.double), .constant(.bool): return true
        case .attribute(let type, _): return kind(type) == .number
        default: return false
        }
    }

    /// A relationship is compared only with nil: `owner == nil`, `owner != nil`.
    private func checkRelationship(_ comparison: FetchPredicate.Comparison) throws {
        let nilSide: FetchPredicate.Operand = .value(.null)
        guard [.equal, .notEqual].contains(comparison.op), comparison.left == nilSide || comparison.right == nilSide else {
            let path = [comparison.left, comparison.right].compactMap { operand -> String? in
                if case .keyPath(let components) = operand { return PredicateFormatter.format(keyPath: components) }
                return nil
            }.first ?? ""
            throw FetchPredicateError(.typeMismatch, "'\(path)' is a relationship: compare it with nil (\(path) == nil, \(path) != nil), or compare one of its attributes, as in \(path).name == 'x'")
        }
    }

    private func isString(_ side: Side) -> Bool {
        switch side {
        case .attribute(.string, _), .constant(.string), .constant(.null): return true
        case .list(let values): return values.allSatisfy { isString(.constant($0)) }
        default: return false
        }
    }

    /// Numbers of every kind compare with each other, dates with dates, strings with
    /// strings, data with data; nil with anything. Constants must convert to the
    /// attribute's type without loss, except that integers and doubles always compare.
    private func checkComparable(_ left: Side, _ right: Side) throws {
        switch (left, right) {
        case (.constant(.null), _), (_, .constant(.null)), (.relationship, _), (_, .relationship):
            return
        case (.number, _), (_, .number):
            if isNumber(left) && isNumber(right) { return }
        case (.attribute(let a, _), .attribute(let b, _)):
            if kind(a) == kind(b) { return }
        case (.attribute(let type, _), .constant(let value)), (.constant(let value), .attribute(let type, _)):
            if fits(value, type) { return }
        case (.constant(let a), .constant(let b)):
            if let typeA = a.type, let typeB = b.type, kind(typeA) == kind(typeB) { return }
        default:
            break
        }
        // Name the attribute first, whichever side it is on.
        var (attribute, other) = (left, right)
        if case .constant = left, case .attribute = right { swap(&attribute, &other) }
        var advice = ""
        if case .attribute(let type, _) = attribute {
            advice = "; compare it with \(example(type))"
        }
        throw FetchPredicateError(.typeMismatch, "\(attribute.text) cannot be compared with \(other.text)\(advice)")
    }

    private enum Kind { case number, date, string, binary }

    private func kind(_ type: AttributeType) -> Kind {
        switch type {
        case .integer, .double, .bool: return .number
        case .date: return .date
        case .string: return .string
        case .binary: return .binary
        }
    }

    private func fits(_ value: Value, _ type: AttributeType) -> Bool {
        guard let valueType = value.type else { return true }
        if valueType == type { return true }
        if type == .date || valueType == .date { return false }
        if [.integer, .double].contains(type) && [.integer, .double].contains(valueType) { return true }
        return value.converted(to: type) != nil
    }

    private func example(_ type: AttributeType) -> String {
        switch type {
        case .string: return "a string, as in 'text'"
        case .integer: return "an integer, as in 3"
        case .double: return "a number, as in 2.5"
        case .bool: return "YES or NO"
        case .date: return "a Date (pass one as %@)"
        case .binary: return "Data (pass it as %@)"
        }
    }
}

extension AttributeType {
    /// The type in a sentence: "an integer", "a string".
    package var withArticle: String { self == .integer ? "an integer" : "a \(rawValue)" }
}
