import GRDB

extension FetchPredicate {
    /// Whether `object` matches, computed in memory with the same rules as the SQL of
    /// ``sql(for:in:alias:)``: for every value, the two give the same answer.
    ///
    /// Objects are read through ``KeyValueReading``. Validate the predicate first
    /// (``validate(for:in:)``): a predicate that does not fit the object's entity gives an
    /// unspecified answer.
    public func evaluate(with object: any KeyValueReading) -> Bool {
        PredicateEvaluator.evaluate(node, with: object)
    }
}

/// The in-memory evaluator of predicate trees.
enum PredicateEvaluator {
    /// The objects the variables of the enclosing SUBQUERYs stand for.
    typealias Bindings = [String: any KeyValueReading]

    static func evaluate(_ node: FetchPredicate.Node, with object: any KeyValueReading, bindings: Bindings = [:]) -> Bool {
        switch node {
        case .constant(let value): return value
        case .not(let operand): return !evaluate(operand, with: object, bindings: bindings)
        case .and(let children): return children.allSatisfy { evaluate($0, with: object, bindings: bindings) }
        case .or(let children): return children.contains { evaluate($0, with: object, bindings: bindings) }
        case .comparison(let comparison): return evaluate(comparison, with: object, bindings: bindings)
        }
    }

    private enum Right {
        case single(DatabaseValue)
        case list([DatabaseValue])
    }

    private static func evaluate(_ comparison: FetchPredicate.Comparison, with object: any KeyValueReading, bindings: Bindings) -> Bool {
        let right: Right
        switch comparison.right {
        case .list(let values): right = .list(values.map(DatabaseValueOrdering.stored))
        case .objects(let ids, isList: true): right = .list(ids.map { $0.sqlKey.databaseValue })
        default: right = .single(value(comparison.right, of: object, bindings: bindings))
        }
        func test(_ left: DatabaseValue) -> Bool {
            self.test(comparison.op, comparison.options, left, right)
        }
        switch comparison.modifier {
        case .direct:
            return test(value(comparison.left, of: object, bindings: bindings))
        case .any, .all, .none:
            guard case .keyPath(let components) = comparison.left else { return false }
            let values = KeyPathReader.values(components, of: object)
            switch comparison.modifier {
            case .all: return values.allSatisfy(test)
            case .none: return !values.contains(where: test)
            default: return values.contains(where: test)
            }
        }
    }

    private static func value(_ operand: FetchPredicate.Operand, of object: any KeyValueReading, bindings: Bindings) -> DatabaseValue {
        switch operand {
        case .value(let value): return DatabaseValueOrdering.stored(value)
        case .keyPath(let components):
            guard let (start, path) = start(of: components, object: object, bindings: bindings) else { return .null }
            return KeyPathReader.value(path, of: start)
        case .evaluatedObject: return key(of: object)
        case .variable(let name): return bindings[name].map(key) ?? .null
        case .objects(let ids, isList: false) where ids.count == 1: return ids[0].sqlKey.databaseValue
        case .arithmetic(let op, let a, let b):
            return PredicateArithmetic.apply(op, value(a, of: object, bindings: bindings), value(b, of: object, bindings: bindings))
        case .subqueryCount(let subquery):
            guard let (start, path) = start(of: subquery.collection, object: object, bindings: bindings) else { return .null }
            let matches = KeyPathReader.objects(path, of: start).filter { element in
                evaluate(subquery.predicate, with: element, bindings: bindings.merging([subquery.variable: element]) { $1 })
            }
            return Int64(matches.count).databaseValue
        case .list, .objects: return .null
        }
    }

    /// The object a key path starts from (the object, or the one its `$variable` stands
    /// for) and the rest of the path.
    private static func start(of components: [String], object: any KeyValueReading, bindings: Bindings) -> (any KeyValueReading, [String])? {
        guard let first = components.first, first.hasPrefix("$") else { return (object, components) }
        guard let bound = bindings[String(first.dropFirst())] else { return nil }
        return (bound, Array(components.dropFirst()))
    }

    /// What `SELF` compares as: the key of the object's row, as in SQL.
    private static func key(of object: any KeyValueReading) -> DatabaseValue {
        object.evaluatedObjectID?.sqlKey.databaseValue ?? .null
    }

    private static func test(_ op: FetchPredicate.Operator, _ options: StringComparisonOptions, _ left: DatabaseValue, _ right: Right) -> Bool {
        typealias Ordering = DatabaseValueOrdering
        switch (op, right) {
        case (.in, .list(let values)):
            if left.isNull { return values.contains(where: \.isNull) }
            return values.contains { !$0.isNull && Ordering.isEqual(left, $0, options: options) }
        case (.between, .list(let values)) where values.count == 2:
            return Ordering.satisfies(left, values[0], options: options) { $0 != .orderedAscending }
                && Ordering.satisfies(left, values[1], options: options) { $0 != .orderedDescending }
        case (_, .list):
            return false
        case (_, .single(let right)):
            switch op {
            case .equal: return Ordering.isEqual(left, right, options: options)
            case .notEqual: return !Ordering.isEqual(left, right, options: options)
            case .less: return Ordering.satisfies(left, right, options: options) { $0 == .orderedAscending }
            case .lessOrEqual: return Ordering.satisfies(left, right, options: options) { $0 != .orderedDescending }
            case .greater: return Ordering.satisfies(left, right, options: options) { $0 == .orderedDescending }
            case .greaterOrEqual: return Ordering.satisfies(left, right, options: options) { $0 != .orderedAscending }
            case .beginsWith, .endsWith, .contains, .like, .matches, .in:
                guard case .string(let string) = left.storage, case .string(let pattern) = right.storage else { return false }
                switch op {
                case .beginsWith: return StringComparison.beginsWith(string, pattern, options: options)
                case .endsWith: return StringComparison.endsWith(string, pattern, options: options)
                case .contains: return StringComparison.contains(string, pattern, options: options)
                // `'ab' IN name`: the right side contains the left.
                case .in: return StringComparison.contains(pattern, string, options: options)
                case .like: return StringComparison.like(string, pattern, options: options)
                default: return StringComparison.matches(string, pattern, options: options)
                }
            case .between:
                return false
            }
        }
    }
}
