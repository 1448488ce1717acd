import Foundation

/// Writes a predicate tree as a format string that ``PredicateParser`` reads back to the
/// same tree: every value is written out (no arguments), strings are escaped, doubles keep
/// all their digits, and key names that are reserved words get a `#`.
enum PredicateFormatter {
    static func format(_ node: FetchPredicate.Node) -> String {
        switch node {
        case .constant(let value):
            return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .not(let operand):
            return "NOT " + grouped(operand)
        case .and(let children):
            return children.map(grouped).joined(separator: " AND ")
        case .or(let children):
            // AND binds tighter than OR: its operands need no parentheses here, and the
            // property test's round trips check that the parser agrees.
            return children.map { child in
                if case .and = child { return format(child) }
                return grouped(child)
            }.joined(separator: " OR ")
        case .comparison(let comparison):
            return format(comparison)
        }
    }

    /// A compound operand in parentheses, so that the text reads as the tree is built.
    private static func grouped(_ node: FetchPredicate.Node) -> String {
        switch node {
        case .and, .or: return "(" + format(node) + ")"
        default: return format(node)
        }
    }

    static func format(_ comparison: FetchPredicate.Comparison) -> String {
        let modifier = comparison.modifier == .direct ? "" : comparison.modifier.rawValue + " "
        return modifier + format(comparison.left) + " " + comparison.op.rawValue
            + comparison.options.formatSuffix + " " + format(comparison.right)
    }

    static func format(_ operand: FetchPredicate.Operand) -> String {
        switch operand {
        case .keyPath(let components): return format(keyPath: components)
        case .value(let value): return format(value)
        case .list(let values): return "{" + values.map(format).joined(separator: ", ") + "}"
        case .evaluatedObject: return "SELF"
        case .objects(let ids, let isList):
            let objects = ids.map { "CAST(\(quoted($0.description)), \"ObjectID\")" }
            return isList || objects.count != 1 ? "{" + objects.joined(separator: ", ") + "}" : objects[0]
        case .variable(let name): return "$" + name
        case .arithmetic(let op, let a, let b): return grouped(a) + " " + op.rawValue + " " + grouped(b)
        case .subqueryCount(let subquery):
            return "SUBQUERY(\(format(keyPath: subquery.collection)), $\(subquery.variable), \(format(subquery.predicate))).@count"
        }
    }

    /// An arithmetic operand in parentheses, so that the text reads as the tree is built.
    private static func grouped(_ operand: FetchPredicate.Operand) -> String {
        if case .arithmetic = operand { return "(" + format(operand) + ")" }
        return format(operand)
    }

    static func format(keyPath components: [String]) -> String {
        components.map { component in
            PredicateParser.reservedWords.contains(component.uppercased()) && !component.hasPrefix("$") ? "#" + component : component
        }.joined(separator: ".")
    }

    static func format(_ value: Value) -> String {
        switch value {
        case .null: return "nil"
        case .string(let string): return quoted(string)
        case .integer(let integer): return String(integer)
        case .double(let double): return format(double)
        case .bool(let bool): return bool ? "TRUE" : "FALSE"
        case .date(let date): return "CAST(\(format(date.timeIntervalSinceReferenceDate)), \"NSDate\")"
        case .binary(let data): return "CAST(\(quoted(data.base64EncodedString())), \"NSData\")"
        }
    }

    /// All the digits Swift needs to read the same double back; infinities as 1e999,
    /// which reads back as infinity.
    private static func format(_ double: Double) -> String {
        if double.isInfinite { return double < 0 ? "-1e999" : "1e999" }
        return double.description
    }

    private static func quoted(_ string: String) -> String {
        var result = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case "\0": result += "\\0"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result += String(format: "\\u%04X", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
