import Foundation

/// The arguments of a format string: `%@`, `%K`, `%d`, `%f`.
extension PredicateParser {
    mutating func nextArgument(for token: PredicateToken) throws -> Any? {
        guard argumentIndex < arguments.count else {
            throw FetchPredicateError(
                .argument,
                "missing argument for \(token.text): the format needs at least \(argumentIndex + 1) arguments, but \(arguments.count == 1 ? "only 1 was" : "\(arguments.count) were") given; pass one for each %@, %K, %d and %f",
                format: format, offset: token.offset)
        }
        defer { argumentIndex += 1 }
        return Self.unwrapped(arguments[argumentIndex])
    }

    /// `argument` without its layers of `Optional`: an array of `Any?` or a `String?` passed
    /// as `Any` holds its values (or nil) in optionals that `Any?` does not unwrap.
    static func unwrapped(_ argument: Any?) -> Any? {
        var current = argument
        while let value = current {
            let mirror = Mirror(reflecting: value)
            guard mirror.displayStyle == .optional else { return value }
            current = mirror.children.first?.value
        }
        return nil
    }

    func argumentError(_ message: String, _ token: PredicateToken) -> FetchPredicateError {
        FetchPredicateError(.argument, "argument \(argumentIndex) for \(token.text) \(message)", format: format, offset: token.offset)
    }

    func value(fromArgument argument: Any?, token: PredicateToken) throws -> Value {
        guard let value = Self.value(of: argument) else {
            throw argumentError("is a \(Self.typeName(argument)), which a predicate cannot compare; pass a String, an integer, a Double, a Bool, a Date, Data or nil", token)
        }
        if case .double(let d) = value, d.isNaN {
            throw argumentError("is NaN, which equals nothing; pass nil to test for a missing value", token)
        }
        if case .date(let date) = value, date.timeIntervalSinceReferenceDate.isNaN {
            throw argumentError("is an invalid date (NaN)", token)
        }
        return value
    }

    func integer(fromArgument argument: Any?, token: PredicateToken) throws -> Value {
        guard let value = Self.value(of: argument), case .integer = value else {
            throw argumentError("must be an integer (Int, Int64…); got \(Self.typeName(argument)). Use %f for a Double, %@ for other values", token)
        }
        return value
    }

    func double(fromArgument argument: Any?, token: PredicateToken) throws -> Value {
        switch Self.value(of: argument) {
        case .double(let d)? where !d.isNaN: return .double(d)
        case .integer(let i)?: return .double(Double(i))
        default:
            throw argumentError("must be a number (Double, Float or an integer), not NaN; got \(Self.typeName(argument)). Use %@ for other values", token)
        }
    }

    func keyPath(fromArgument argument: Any?, token: PredicateToken) throws -> [String] {
        guard let path = argument as? String ?? (argument as? Substring).map(String.init) else {
            throw argumentError("must be a String key path such as \"details.closeDate\"; got \(Self.typeName(argument))", token)
        }
        let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (position, component) in components.enumerated() {
            let isName = component.first.map { $0.isASCII && ($0.isLetter || $0 == "_") } == true
                && component.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
            let isCount = component == countComponent && position == components.count - 1 && position > 0
            let isOperator = CollectionOperator(rawValue: component) != nil && position == components.count - 2 && position > 0
            guard isName || isCount || isOperator else {
                throw argumentError("is not a key path: \"\(path)\"; use key names of letters, digits and _, separated by dots (with @count last, or @sum, @avg, @min, @max before the last key)", token)
            }
        }
        return components
    }

    /// The ID of an object argument (a ``ManagedObject`` or an ``ObjectID``), for `SELF`.
    static func objectID(of argument: Any?) -> ObjectID? {
        if let id = argument as? ObjectID { return id }
        return (argument as? ManagedObject)?.objectID
    }

    /// The value of a `%@`, `%d` or `%f` argument: nil, `NSNull`, or a
    /// ``PredicateValueConvertible`` (optionals included); nil for any other type.
    static func value(of argument: Any?) -> Value? {
        guard let argument else { return .null }
        if argument is NSNull { return .null }
        return (argument as? any PredicateValueConvertible)?.predicateValue
    }

    /// The elements of an array or set argument; nil for anything else (strings and data
    /// are single values even though they are collections).
    static func elements(of argument: Any?) -> [Any?]? {
        guard let argument = unwrapped(argument), !(argument is String), !(argument is Substring), !(argument is Data),
              let collection = argument as? any Collection
        else { return nil }
        return elements(collection)
    }

    static func elements<C: Collection>(_ collection: C) -> [Any?] {
        collection.map { unwrapped($0) }
    }

    static func typeName(_ argument: Any?) -> String {
        argument.map { String(describing: type(of: $0)) } ?? "nil"
    }
}
