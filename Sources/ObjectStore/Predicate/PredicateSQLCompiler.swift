import GRDB

extension FetchPredicate {
    /// The predicate as an SQL condition on the rows of `FROM "Entity" alias`, for a
    /// `WHERE` clause. Values are always bound parameters. The condition uses the functions
    /// and collations of ``SQLFunctions``, which must be registered on the connection.
    ///
    /// Key paths across to-one relationships become correlated subqueries, and `ANY`,
    /// `ALL` and `NONE` become `EXISTS` subqueries, with aliases made from `alias`
    /// (`t0_1`, `t0_2`...): pass a plain identifier that no other table of the query uses
    /// as a prefix. The condition may be NULL where the predicate is false, which `WHERE`
    /// treats alike; wrap it as `(condition) IS 1` to use it as a 0/1 value.
    ///
    /// Throws a ``FetchPredicateError`` when ``validate(for:in:)`` does.
    public func sql(for entity: EntityDescription, in model: Model, alias: String) throws -> SQL {
        try validate(for: entity, in: model)
        var compiler = PredicateSQLCompiler(model: model, alias: alias)
        let condition = try compiler.condition(node, entity: entity, alias: alias, nullMeansFalse: true)
        return SQL(sql: condition.sql, arguments: StatementArguments(condition.arguments))
    }
}

/// SQL text with the values of its `?` parameters, in order.
struct SQLFragment {
    var sql: String
    var arguments: [DatabaseValue] = []

    static func + (lhs: SQLFragment, rhs: SQLFragment) -> SQLFragment {
        SQLFragment(sql: lhs.sql + rhs.sql, arguments: lhs.arguments + rhs.arguments)
    }

    static func + (lhs: SQLFragment, rhs: String) -> SQLFragment {
        SQLFragment(sql: lhs.sql + rhs, arguments: lhs.arguments)
    }

    static func + (lhs: String, rhs: SQLFragment) -> SQLFragment {
        SQLFragment(sql: lhs + rhs.sql, arguments: rhs.arguments)
    }

    static func joined(_ fragments: [SQLFragment], separator: String) -> SQLFragment {
        SQLFragment(sql: fragments.map(\.sql).joined(separator: separator), arguments: fragments.flatMap(\.arguments))
    }
}

/// Compiles validated predicate trees and key paths to SQL.
///
/// Predicates are two-valued and SQL is three-valued, so wherever a NULL could change the
/// answer (under NOT) a comparison is wrapped as `(comparison) IS 1`. Where NULL and
/// false lead to the same answer (AND, OR and the conditions of a WHERE clause or an
/// EXISTS subquery) comparisons stay bare, so that SQLite can use indexes.
struct PredicateSQLCompiler {
    let model: Model
    private let aliasPrefix: String
    private var aliasCount = 0
    /// The variables of the SUBQUERYs being compiled, with the entity and the alias of the
    /// rows they stand for.
    private var scope: [String: (entity: EntityDescription, alias: String)] = [:]

    init(model: Model, alias: String) {
        self.model = model
        self.aliasPrefix = alias
    }

    private mutating func newAlias() -> String {
        aliasCount += 1
        return "\(aliasPrefix)_\(aliasCount)"
    }

    /// `nullMeansFalse`: whether the caller treats NULL as false (WHERE, AND/OR under a
    /// WHERE); when not, the result is always 0 or 1.
    mutating func condition(_ node: FetchPredicate.Node, entity: EntityDescription, alias: String, nullMeansFalse: Bool) throws -> SQLFragment {
        switch node {
        case .constant(let value):
            return SQLFragment(sql: value ? "1" : "0")
        case .not(let operand):
            return "NOT (" + (try condition(operand, entity: entity, alias: alias, nullMeansFalse: false)) + ")"
        case .and(let children), .or(let children):
            let separator: String
            if case .and = node { separator = " AND " } else { separator = " OR " }
            let parts = try children.map { try condition($0, entity: entity, alias: alias, nullMeansFalse: nullMeansFalse) }
            return "(" + SQLFragment.joined(parts, separator: separator) + ")"
        case .comparison(let comparison):
            let (sql, nullable) = try self.comparison(comparison, entity: entity, alias: alias)
            return nullable && !nullMeansFalse ? "(" + sql + ") IS 1" : sql
        }
    }

    /// A comparison, and whether it can be NULL.
    private mutating func comparison(_ comparison: FetchPredicate.Comparison, entity: EntityDescription, alias: String) throws -> (SQLFragment, nullable: Bool) {
        switch comparison.modifier {
        case .direct:
            let left = try operand(comparison.left, entity: entity, alias: alias)
            return try apply(comparison, left: left, entity: entity, alias: alias)
        case .any:
            return (try exists(comparison, negated: false, entity: entity, alias: alias), false)
        case .all:
            // Every related value matches: none fails to.
            return ("NOT " + (try exists(comparison, negated: true, entity: entity, alias: alias)), false)
        case .none:
            return ("NOT " + (try exists(comparison, negated: false, entity: entity, alias: alias)), false)
        }
    }

    /// `EXISTS` a row at the end of the comparison's to-many key path whose value matches
    /// (or, `negated`, does not match). Each relationship of the path is one nested
    /// `EXISTS`; the right side is still read from the outer row.
    private mutating func exists(_ comparison: FetchPredicate.Comparison, negated: Bool, entity: EntityDescription, alias: String) throws -> SQLFragment {
        guard case .keyPath(let components) = comparison.left else {
            throw FetchPredicateError(.keyPath, "\(comparison.modifier.rawValue) needs a key path on its left side")
        }
        let (path, alias) = try resolve(components, entity: entity, alias: alias)
        guard case .attribute(let attribute) = path.terminal else {
            throw FetchPredicateError(.keyPath, "\(comparison.modifier.rawValue) \(path.text) must end on an attribute")
        }
        var opening = ""
        var closing = ""
        var parent = alias
        for hop in path.hops {
            let child = newAlias()
            opening += "EXISTS (SELECT 1 FROM \(hop.destination.name.quotedDatabaseIdentifier) \(child) WHERE \(link(hop, parent: parent, child: child)) AND "
            closing += ")"
            parent = child
        }
        let left = SQLFragment(sql: column(attribute.name, of: parent))
        let (test, nullable) = try apply(comparison, left: left, entity: entity, alias: alias)
        let body = negated ? "NOT (" + (nullable ? "(" + test + ") IS 1" : test) + ")" : test
        return opening + body + closing
    }

    /// The operator applied to `left` (already compiled) and the comparison's right side.
    private mutating func apply(_ comparison: FetchPredicate.Comparison, left: SQLFragment, entity: EntityDescription, alias: String) throws -> (SQLFragment, nullable: Bool) {
        let collate = SQLFunctions.collationName(for: comparison.options).map { " COLLATE \($0)" } ?? ""
        let collated = left + collate
        switch comparison.right {
        case .list(let values):
            return inList(comparison.op, collated: collated, left: left, values: values)
        case .objects(let ids, isList: true):
            return inList(comparison.op, collated: collated, left: left, values: ids.map { .integer($0.sqlKey) })
        default:
            break
        }
        let right = try operand(comparison.right, entity: entity, alias: alias)
        switch comparison.op {
        case .equal: return (collated + " IS " + right, false)
        case .notEqual: return (collated + " IS NOT " + right, false)
        case .less: return (collated + " < " + right, true)
        case .lessOrEqual: return (collated + " <= " + right, true)
        case .greater: return (collated + " > " + right, true)
        case .greaterOrEqual: return (collated + " >= " + right, true)
        case .beginsWith, .endsWith, .contains, .like, .matches:
            let function: String
            switch comparison.op {
            case .beginsWith: function = SQLFunctions.beginsWith
            case .endsWith: function = SQLFunctions.endsWith
            case .contains: function = SQLFunctions.contains
            case .like: function = SQLFunctions.like
            default: function = SQLFunctions.matches
            }
            return (function + "(" + left + ", " + right + ", \(comparison.options.rawValue))", false)
        case .in:
            // `'ab' IN name`: the right side contains the left.
            return (SQLFunctions.contains + "(" + right + ", " + left + ", \(comparison.options.rawValue))", false)
        case .between:
            throw FetchPredicateError(.syntax, "BETWEEN needs a list of values on its right side")
        }
    }

    /// `IN` and `BETWEEN`, whose right side is a list of constants.
    private func inList(_ op: FetchPredicate.Operator, collated: SQLFragment, left: SQLFragment, values: [Value]) -> (SQLFragment, nullable: Bool) {
        let bound = values.map(DatabaseValueOrdering.stored)
        if op == .between {
            return (collated + SQLFragment(sql: " BETWEEN ? AND ?", arguments: bound), true)
        }
        // Like a chain of ==: nil matches nil. SQL's IN never matches NULL, so a nil in the
        // list becomes IS NULL.
        let present = bound.filter { !$0.isNull }
        let membership = collated + SQLFragment(sql: " IN (" + Array(repeating: "?", count: present.count).joined(separator: ", ") + ")", arguments: present)
        let isNull = left + " IS NULL"
        switch (present.isEmpty, present.count < bound.count) {
        case (true, false): return (SQLFragment(sql: "0"), false)
        case (true, true): return (isNull, false)
        case (false, false): return (membership, true)
        case (false, true): return ("(" + membership + " OR " + isNull + ")", true)
        }
    }

    private mutating func operand(_ operand: FetchPredicate.Operand, entity: EntityDescription, alias: String) throws -> SQLFragment {
        switch operand {
        case .value(let value):
            return SQLFragment(sql: "?", arguments: [DatabaseValueOrdering.stored(value)])
        case .keyPath(let components):
            let (path, alias) = try resolve(components, entity: entity, alias: alias)
            return SQLFragment(sql: scalar(path, alias: alias))
        case .evaluatedObject:
            return SQLFragment(sql: column(Schema.primaryKey, of: alias))
        case .variable(let name):
            guard let element = scope[name] else { throw PredicateValidator.unsubstituted(name) }
            return SQLFragment(sql: column(Schema.primaryKey, of: element.alias))
        case .objects(let ids, isList: false) where ids.count == 1:
            return SQLFragment(sql: "?", arguments: [ids[0].sqlKey.databaseValue])
        case .arithmetic(let op, let a, let b):
            let left = try self.operand(a, entity: entity, alias: alias)
            let right = try self.operand(b, entity: entity, alias: alias)
            return SQLFunctions.arithmeticFunction(op) + "(" + left + ", " + right + ")"
        case .subqueryCount(let subquery):
            return try count(subquery, entity: entity, alias: alias)
        case .list, .objects:
            throw FetchPredicateError(.syntax, "a list fits only after IN or BETWEEN")
        }
    }

    /// A key path from the row of `alias`, or from the row of the SUBQUERY variable it
    /// starts with; and the alias it starts from.
    private func resolve(_ components: [String], entity: EntityDescription, alias: String) throws -> (ResolvedKeyPath, alias: String) {
        guard let first = components.first, first.hasPrefix("$") else {
            return (try ResolvedKeyPath.resolve(components, from: entity, in: model), alias)
        }
        let name = String(first.dropFirst())
        guard let element = scope[name] else { throw PredicateValidator.unsubstituted(name) }
        return (try ResolvedKeyPath.resolve(Array(components.dropFirst()), from: element.entity, in: model), element.alias)
    }

    /// `SUBQUERY(collection, $v, predicate).@count`: the rows reached through the
    /// collection's relationships (one table each, joined by their links) that match.
    private mutating func count(_ subquery: FetchPredicate.Subquery, entity: EntityDescription, alias: String) throws -> SQLFragment {
        let (path, start) = try resolve(subquery.collection, entity: entity, alias: alias)
        guard case .relationship(let last) = path.terminal else {
            throw FetchPredicateError(.keyPath, "SUBQUERY needs a key path that ends on a to-many relationship")
        }
        var tables: [String] = []
        var links: [String] = []
        var parent = start
        for hop in path.hops + [last] {
            let child = newAlias()
            tables.append("\(hop.destination.name.quotedDatabaseIdentifier) \(child)")
            links.append(link(hop, parent: parent, child: child))
            parent = child
        }
        let outer = scope
        scope[subquery.variable] = (last.destination, parent)
        defer { scope = outer }
        let test = try condition(subquery.predicate, entity: last.destination, alias: parent, nullMeansFalse: true)
        return "(SELECT COUNT(*) FROM \(tables.joined(separator: ", ")) WHERE \(links.joined(separator: " AND ")) AND " + test + ")"
    }

    // MARK: Key paths

    /// The value of a key path that reads one value per row (to-one relationships only):
    /// one correlated subquery per relationship, NULL when a relationship is nil.
    mutating func scalar(_ path: ResolvedKeyPath, alias: String) -> String {
        scalar(path.hops[...], terminal: path.terminal, alias: alias)
    }

    private mutating func scalar(_ hops: ArraySlice<ResolvedKeyPath.Hop>, terminal: ResolvedKeyPath.Terminal, alias: String) -> String {
        guard let hop = hops.first else { return self.terminal(terminal, alias: alias) }
        let child = newAlias()
        let value = scalar(hops.dropFirst(), terminal: terminal, alias: child)
        return "(SELECT \(value) FROM \(hop.destination.name.quotedDatabaseIdentifier) \(child) WHERE \(link(hop, parent: alias, child: child)))"
    }

    private mutating func terminal(_ terminal: ResolvedKeyPath.Terminal, alias: String) -> String {
        switch terminal {
        case .attribute(let attribute):
            return column(attribute.name, of: alias)
        case .relationship(let hop) where hop.sourceStoresKey:
            return column(hop.relationship.name, of: alias)
        case .relationship(let hop):
            let child = newAlias()
            return "(SELECT \(column(Schema.primaryKey, of: child)) FROM \(hop.destination.name.quotedDatabaseIdentifier) \(child) WHERE \(link(hop, parent: alias, child: child)))"
        case .count(let hop):
            let child = newAlias()
            return "(SELECT COUNT(*) FROM \(hop.destination.name.quotedDatabaseIdentifier) \(child) WHERE \(link(hop, parent: alias, child: child)))"
        case .aggregate(let op, let hop, let attribute):
            let child = newAlias()
            return "(SELECT \(SQLFunctions.aggregateFunction(op))(\(column(attribute.name, of: child))) FROM \(hop.destination.name.quotedDatabaseIdentifier) \(child) WHERE \(link(hop, parent: alias, child: child)))"
        }
    }

    /// The condition that joins a row of the hop's destination (`child`) to its source row.
    private func link(_ hop: ResolvedKeyPath.Hop, parent: String, child: String) -> String {
        if hop.sourceStoresKey {
            return "\(column(Schema.primaryKey, of: child)) = \(column(hop.relationship.name, of: parent))"
        }
        return "\(column(hop.inverse.name, of: child)) = \(column(Schema.primaryKey, of: parent))"
    }

    private func column(_ name: String, of alias: String) -> String {
        "\(alias).\(name.quotedDatabaseIdentifier)"
    }
}
