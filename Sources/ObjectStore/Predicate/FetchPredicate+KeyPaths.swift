extension FetchPredicate {
    /// Every key path the predicate reads (`details.closeDate`, `items.name`), so that a
    /// controller knows which changes to related objects can change its results.
    public var keyPaths: Set<String> {
        var paths: Set<String> = []
        func visit(_ node: Node) {
            switch node {
            case .constant: break
            case .not(let child): visit(child)
            case .and(let children), .or(let children): children.forEach(visit)
            case .comparison(let comparison):
                for operand in [comparison.left, comparison.right] {
                    if case .keyPath(let components) = operand { paths.insert(components.joined(separator: ".")) }
                }
            }
        }
        visit(node)
        return paths
    }
}
