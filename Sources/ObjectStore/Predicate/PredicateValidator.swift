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
        case constant(Value)
        case list([Value])

        /// What the side is, for messages: "'wins' (an integer attribute)", "\"three\" (a string)".
        var text: String {
            switch self {
            case .attribute(let type, let name): return "'\(name)' (\(article(type)) \(type) attribute)"
            case .relationship(let name): return "'\(name)' (a to-one relationship)"
            case .constant(.null): return "nil"
            case .constant(let value): return "\(PredicateFormatter.format(value)) (\(value.type.map { "\(article($0)) \($0)" } ?? "nil"))"
            case .list(let values): return PredicateFormatter.format(.list(values))
            }
        }
    }

    private func check(_ comparison: FetchPredicate.Comparison) throws {
        let left = try side(comparison.left, modifier: comparison.modifier)
        let right = try side(comparison.right, modifier: .direct)
        if case .list = left {
            throw FetchPredicateError(.syntax, "a list fits only on the right of IN or BETWEEN")
        }
        let op = comparison.op
        if case .relationship = left { try checkRelationship(comparison) }
        if case .relationship = right { try checkRelationship(comparison) }
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
        case (.in, _), (.between, _):
            throw FetchPredicateError(.syntax, "\(op.rawValue) needs a list on its right side, as in \(op == .in ? "IN {'a', 'b'}" : "BETWEEN {1, 5}")")
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

    private func side(_ operand: FetchPredicate.Operand, modifier: FetchPredicate.Modifier) throws -> Side {
        switch operand {
        case .value(let value): return .constant(value)
        case .list(let values): return .list(values)
        case .keyPath(let components):
            let path = try ResolvedKeyPath.resolve(components, from: entity, in: model)
            if modifier == .direct {
                try path.checkScalar()
            } else {
                try path.checkAggregate(modifier)
            }
            guard let type = path.valueType else { return .relationship(name: path.text) }
            return .attribute(type, name: path.text)
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

private func article(_ type: AttributeType) -> String {
    type == .integer ? "an" : "a"
}
