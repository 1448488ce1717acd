import Foundation

extension FetchPredicate {
    /// The predicate with each `$name` replaced by `variables["name"]`, as NSPredicate's
    /// method of that name: a value (`String`, a number, `Bool`, `Date`, `Data`, nil), an
    /// array after `IN` or `BETWEEN`, or a ``ManagedObject`` or ``ObjectID`` to compare
    /// with `SELF`.
    ///
    /// ```swift
    /// let template = try FetchPredicate(format: "zone == $zone AND wins >= $wins")
    /// let africa = try template.withSubstitutionVariables(["zone": "Africa", "wins": 1])
    /// ```
    ///
    /// A variable missing from `variables` stays: ``validate(for:in:)``, ``sql(for:in:alias:)``
    /// and ``evaluate(with:substitutionVariables:)`` then throw an error that names it. The
    /// variables of SUBQUERYs are theirs, never replaced. Throws a ``FetchPredicateError``
    /// for a value a predicate cannot hold.
    public func withSubstitutionVariables(_ variables: [String: Any?]) throws -> FetchPredicate {
        FetchPredicate(try Self.substituting(node, variables))
    }

    /// Whether `object` matches once `substitutionVariables` are substituted
    /// (``withSubstitutionVariables(_:)``); throws an error that names a variable without
    /// a value. ``evaluate(with:)`` treats such a variable as nil.
    public func evaluate(with object: any KeyValueReading, substitutionVariables: [String: Any?]) throws -> Bool {
        let predicate = try withSubstitutionVariables(substitutionVariables)
        if let name = predicate.unsubstitutedVariables.sorted().first {
            throw PredicateValidator.unsubstituted(name)
        }
        return predicate.evaluate(with: object)
    }

    /// The names of the `$variables` that have no value yet.
    var unsubstitutedVariables: Set<String> {
        var names: Set<String> = []
        _ = try? Self.substituting(node, [:]) { names.insert($0) }
        return names
    }

    /// `node` with its variables replaced; `missing` is told the ones `variables` lacks.
    private static func substituting(_ node: Node, _ variables: [String: Any?], bound: Set<String> = [], missing: (String) -> Void = { _ in }) throws -> Node {
        func replaced(_ operand: Operand) throws -> Operand {
            switch operand {
            case .variable(let name) where !bound.contains(name):
                guard let value = variables[name] else {
                    missing(name)
                    return operand
                }
                return try substitute(value, for: name)
            case .keyPath(let components):
                if let first = components.first, first.hasPrefix("$"), !bound.contains(String(first.dropFirst())) {
                    missing(String(first.dropFirst()))
                }
                return operand
            case .arithmetic(let op, let a, let b):
                return .arithmetic(op, try replaced(a), try replaced(b))
            case .subqueryCount(var subquery):
                subquery.collection = try keyPathOperand(subquery.collection)
                subquery.predicate = try substituting(subquery.predicate, variables, bound: bound.union([subquery.variable]), missing: missing)
                return .subqueryCount(subquery)
            default:
                return operand
            }
        }
        func keyPathOperand(_ components: [String]) throws -> [String] {
            if case .keyPath(let path) = try replaced(.keyPath(components)) { return path }
            return components
        }
        switch node {
        case .constant: return node
        case .not(let child): return .not(try substituting(child, variables, bound: bound, missing: missing))
        case .and(let children): return .conjunction(try children.map { try substituting($0, variables, bound: bound, missing: missing) })
        case .or(let children): return .disjunction(try children.map { try substituting($0, variables, bound: bound, missing: missing) })
        case .comparison(var comparison):
            comparison.left = try replaced(comparison.left)
            comparison.right = try replaced(comparison.right)
            return .comparison(comparison)
        }
    }

    /// The operand a variable's value makes: a list, objects, or one value.
    private static func substitute(_ value: Any?, for name: String) throws -> Operand {
        func single(_ element: Any?) throws -> Operand {
            if let id = PredicateParser.objectID(of: element) { return .objects([id], isList: false) }
            guard let value = PredicateParser.value(of: element), !(value.type == .double && value == .double(.nan)) else {
                throw FetchPredicateError(.argument, "the value of $\(name) is a \(element.map { String(describing: type(of: $0)) } ?? "nil"), which a predicate cannot compare; give a String, a number, a Bool, a Date, Data, nil, an object, or an array of these")
            }
            return .value(value)
        }
        guard let elements = PredicateParser.elements(of: value) else { return try single(PredicateParser.unwrapped(value)) }
        let items = try elements.map(single)
        let ids = items.flatMap { item -> [ObjectID] in
            if case .objects(let ids, _) = item { return ids }
            return []
        }
        let values = items.compactMap { item -> Value? in
            if case .value(let value) = item { return value }
            return nil
        }
        guard ids.isEmpty || values.isEmpty else {
            throw FetchPredicateError(.argument, "the value of $\(name) mixes objects and values; give an array of either")
        }
        return ids.isEmpty ? .list(values) : .objects(ids, isList: true)
    }
}
