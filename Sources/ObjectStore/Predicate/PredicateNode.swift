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

    indirect enum Operand: Hashable, Sendable {
        /// Key path components, such as `["details", "closeDate"]`, `["items", "@count"]`
        /// or `["items", "@sum", "price"]`; inside a SUBQUERY, `["$p", "name"]` starts at
        /// the object its variable `$p` stands for.
        case keyPath([String])
        case value(Value)
        /// The constants of `IN` and `BETWEEN` (two values for `BETWEEN`).
        case list([Value])
        /// `SELF`: the object being tested.
        case evaluatedObject
        /// Objects, by ID, that `SELF` is compared with: one for `==` and `!=`, any number
        /// after `IN`.
        case objects([ObjectID], isList: Bool)
        /// `$name`: a value that ``FetchPredicate/withSubstitutionVariables(_:)`` gives, or,
        /// inside a SUBQUERY, the object its variable stands for.
        case variable(String)
        /// `left + right`, `left - right`, `left * right`, `left / right`.
        case arithmetic(ArithmeticOperator, Operand, Operand)
        /// `SUBQUERY(collection, $variable, predicate).@count`: how many objects of the
        /// to-many key path `collection` match `predicate`.
        case subqueryCount(Subquery)
    }

    struct Subquery: Hashable, Sendable {
        var collection: [String]
        var variable: String
        var predicate: Node
    }

    enum ArithmeticOperator: String, Hashable, Sendable, CaseIterable {
        case add = "+"
        case subtract = "-"
        case multiply = "*"
        case divide = "/"
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

/// The key path components that compute one value from the objects of a to-many
/// relationship and one of their attributes: `items.@sum.price`.
enum CollectionOperator: String, CaseIterable, Sendable {
    case sum = "@sum"
    case average = "@avg"
    case minimum = "@min"
    case maximum = "@max"
}
