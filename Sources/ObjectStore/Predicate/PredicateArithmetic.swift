import GRDB

/// The one definition of the arithmetic of predicates (`wins * 2 > losses + 1`) and of the
/// collection operators `@sum`, `@avg`, `@min` and `@max`.
///
/// SQLite runs these functions through ``SQLFunctions`` and the in-memory evaluator calls
/// them directly, so both sides compute the same value, to the bit, for every input.
enum PredicateArithmetic {
    /// `a op b` on stored values. Two integers give an integer for `+`, `-` and `*`, or a
    /// double when the result does not fit in 64 bits; `/` always divides as doubles (as
    /// NSExpression does: `5 / 2` is 2.5). nil (or a value that is not a number), a
    /// division by zero and a result that is not a number (infinity minus infinity) give nil.
    static func apply(_ op: FetchPredicate.ArithmeticOperator, _ a: DatabaseValue, _ b: DatabaseValue) -> DatabaseValue {
        switch (a.storage, b.storage) {
        case (.int64(let x), .int64(let y)) where op != .divide:
            let (result, overflow): (Int64, Bool)
            switch op {
            case .add: (result, overflow) = x.addingReportingOverflow(y)
            case .subtract: (result, overflow) = x.subtractingReportingOverflow(y)
            default: (result, overflow) = x.multipliedReportingOverflow(by: y)
            }
            return overflow ? apply(op, Double(x), Double(y)) : result.databaseValue
        default:
            guard let x = double(a), let y = double(b) else { return .null }
            return apply(op, x, y)
        }
    }

    private static func apply(_ op: FetchPredicate.ArithmeticOperator, _ x: Double, _ y: Double) -> DatabaseValue {
        let result: Double
        switch op {
        case .add: result = x + y
        case .subtract: result = x - y
        case .multiply: result = x * y
        case .divide:
            if y == 0 { return .null }
            result = x / y
        }
        return result.isNaN ? .null : result.databaseValue
    }

    private static func double(_ value: DatabaseValue) -> Double? {
        switch value.storage {
        case .int64(let integer): return Double(integer)
        case .double(let double): return double
        default: return nil
        }
    }

    /// `@sum`, `@avg`, `@min` or `@max` of the values of a to-many relationship's objects,
    /// nils left out. The values are taken in ascending order, so that the result does not
    /// depend on the order SQLite reads the rows in: `@sum` adds them with ``apply(_:_:_:)``
    /// (0 for none), `@avg` divides that sum by their number, and `@min`, `@max` take the
    /// first and the last (nil for none).
    static func aggregate(_ op: CollectionOperator, _ values: [DatabaseValue]) -> DatabaseValue {
        let sorted = values.filter { !$0.isNull }.sorted {
            DatabaseValueOrdering.compare($0, $1, options: []) == .orderedAscending
        }
        switch op {
        case .minimum: return sorted.first ?? .null
        case .maximum: return sorted.last ?? .null
        case .sum: return sum(sorted)
        case .average: return sorted.isEmpty ? .null : apply(.divide, sum(sorted), Int64(sorted.count).databaseValue)
        }
    }

    private static func sum(_ values: [DatabaseValue]) -> DatabaseValue {
        values.reduce(0.databaseValue) { apply(.add, $0, $1) }
    }
}
