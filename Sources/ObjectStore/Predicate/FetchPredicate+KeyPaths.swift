extension FetchPredicate {
    /// Every key path the predicate reads (`details.closeDate`, `items.name`; `items.price`
    /// for `items.@sum.price`, and the key paths of SUBQUERYs from the object), so that a
    /// controller knows which changes to related objects can change its results.
    public var keyPaths: Set<String> {
        var paths: Set<String> = []
        Self.visit(node, variables: [:]) { paths.insert($0.filter { CollectionOperator(rawValue: $0) == nil }.joined(separator: ".")) }
        return paths
    }

    /// Calls `found` with each key path of `node`, written from the object: a path that
    /// starts with a SUBQUERY variable continues the key path of its collection.
    private static func visit(_ node: Node, variables: [String: [String]], _ found: ([String]) -> Void) {
        func visitOperand(_ operand: Operand) {
            switch operand {
            case .keyPath(let components): found(expanded(components))
            case .arithmetic(_, let a, let b):
                visitOperand(a)
                visitOperand(b)
            case .subqueryCount(let subquery):
                let collection = expanded(subquery.collection)
                found(collection)
                Self.visit(subquery.predicate, variables: variables.merging([subquery.variable: collection]) { $1 }, found)
            case .value, .list, .evaluatedObject, .objects, .variable: break
            }
        }
        func expanded(_ components: [String]) -> [String] {
            guard let first = components.first, first.hasPrefix("$"), let prefix = variables[String(first.dropFirst())] else { return components }
            return prefix + components.dropFirst()
        }
        switch node {
        case .constant: break
        case .not(let child): Self.visit(child, variables: variables, found)
        case .and(let children), .or(let children): children.forEach { Self.visit($0, variables: variables, found) }
        case .comparison(let comparison):
            visitOperand(comparison.left)
            visitOperand(comparison.right)
        }
    }
}
