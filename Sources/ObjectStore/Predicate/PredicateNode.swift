extension FetchPredicate {
    /// The syntax tree of a predicate. The parser and the Swift builder both make it; the
    /// formatter, the validator, the SQL compiler and the in-memory evaluator read it.
    ///
    /// `and` and `or` are flattened (never directly nested in one of their own kind) and
    /// have two or more children, so that equal predicates have equal trees however they
    /// were grouped.
    indirect enum Node: Hashable, Sendable {
        case constant(Bool)
        case not(Node)
        case and([Node])
        case or([Node])
        case comparison(Comparison)

        /// `nodes` joined by AND, flattened; a single node stays as it is.
        static func conjunction(_ nodes: [Node]) -> Node {
            let children = flattened(nodes, and: true)
            return children.count == 1 ? children[0] : .and(children)
        }

        /// `nodes` joined by OR, flattened; a single node stays as it is.
        static func disjunction(_ nodes: [Node]) -> Node {
            let children = flattened(nodes, and: false)
            return children.count == 1 ? children[0] : .or(children)
        }

        private static func flattened(_ nodes: [Node], and: Bool) -> [Node] {
            nodes.flatMap { node -> [Node] in
                switch (node, and) {
                case (.and(let children), true), (.or(let children), false): return children
                default: return [node]
                }
            }
        }
    }

    /// `[modifier] left operator[options] right`.
    struct Comparison: Hashable, Sendable {
        var modifier: Modifier = .direct
        var left: Operand
        var op: Operator
        var right: Operand
        var options: StringComparisonOptions = []
    }

    /// How the left side's key path is read: one value, or every value of a to-many path.
    enum Modifier: String, Hashable, Sendable {
        case direct = ""
        case any = "ANY"
        case all = "ALL"
        case none = "NONE"
    }

    enum Operand: Hashable, Sendable {
        /// Key path components, such as `["details", "closeDate"]` or `["items", "@count"]`.
        case keyPath([String])
        case value(Value)
        /// The constants of `IN` and `BETWEEN` (two values for `BETWEEN`).
        case list([Value])
    }

    enum Operator: String, Hashable, Sendable, CaseIterable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case between = "BETWEEN"
        case `in` = "IN"
        case beginsWith = "BEGINSWITH"
        case endsWith = "ENDSWITH"
        case contains = "CONTAINS"
        case like = "LIKE"
        case matches = "MATCHES"

        /// The operators that compare strings only, run by the functions of ``SQLFunctions``.
        var isStringOperator: Bool {
            [.beginsWith, .endsWith, .contains, .like, .matches].contains(self)
        }

        var isOrdering: Bool {
            [.less, .lessOrEqual, .greater, .greaterOrEqual, .between].contains(self)
        }
    }
}

/// The `@count` key path component.
let countComponent = "@count"
