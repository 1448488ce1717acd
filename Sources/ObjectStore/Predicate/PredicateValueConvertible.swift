import Foundation

/// A Swift value a predicate can compare, built with ``Key`` or passed as a `%@`
/// argument: `String`, integers up to 64 bits (`UInt64` and `UInt` excepted), `Double`,
/// `Float`, `Bool`, `Date`, `Data`, ``Value``, and optionals of these (nil is
/// ``Value/null``).
public protocol PredicateValueConvertible {
    /// The value as the predicate holds it.
    var predicateValue: Value { get }
}

extension Value: PredicateValueConvertible {
    public var predicateValue: Value { self }
}

extension String: PredicateValueConvertible {
    public var predicateValue: Value { .string(self) }
}

extension Int: PredicateValueConvertible {
    public var predicateValue: Value { .integer(Int64(self)) }
}

extension Int64: PredicateValueConvertible {
    public var predicateValue: Value { .integer(self) }
}

extension Int32: PredicateValueConvertible {
    public var predicateValue: Value { .integer(Int64(self)) }
}

extension Int16: PredicateValueConvertible {
    public var predicateValue: Value { .integer(Int64(self)) }
}

extension Int8: PredicateValueConvertible {
    public var predicateValue: Value { .integer(Int64(self)) }
}

extension UInt32: PredicateValueConvertible {
    public var predicateValue: Value { .integer(Int64(self)) }
}

extension UInt16: PredicateValueConvertible {
    public var predicateValue: Value { .integer(Int64(self)) }
}

extension UInt8: PredicateValueConvertible {
    public var predicateValue: Value { .integer(Int64(self)) }
}

extension Double: PredicateValueConvertible {
    public var predicateValue: Value { .double(self) }
}

extension Float: PredicateValueConvertible {
    public var predicateValue: Value { .double(Double(self)) }
}

extension Bool: PredicateValueConvertible {
    public var predicateValue: Value { .bool(self) }
}

extension Date: PredicateValueConvertible {
    public var predicateValue: Value { .date(self) }
}

extension Data: PredicateValueConvertible {
    public var predicateValue: Value { .binary(self) }
}

extension Optional: PredicateValueConvertible where Wrapped: PredicateValueConvertible {
    public var predicateValue: Value { self?.predicateValue ?? .null }
}
