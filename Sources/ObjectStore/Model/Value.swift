import Foundation

/// A value of an attribute: what a managed object holds and what a predicate compares.
///
/// `Value` is the one currency between the object graph, predicates and SQLite. Each
/// case maps to one ``AttributeType``; ``null`` stands for a missing optional value.
///
/// ## Topics
/// - ``init(_:)-(Any?)``
/// - ``isNull``
/// - ``type``
public enum Value: Sendable, Hashable, CustomStringConvertible {
    case null
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case date(Date)
    case binary(Data)

    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The attribute type of this value, or nil for ``null``.
    public var type: AttributeType? {
        switch self {
        case .null: return nil
        case .string: return .string
        case .integer: return .integer
        case .double: return .double
        case .bool: return .bool
        case .date: return .date
        case .binary: return .binary
        }
    }

    /// Wraps a Swift value (`String`, any integer, `Double`, `Float`, `Bool`, `Date`,
    /// `Data`, `Value`, `nil` or `NSNull`); returns nil for anything else.
    public init?(_ any: Any?) {
        guard let any else { self = .null; return }
        switch any {
        case let value as Value: self = value
        case let value as String: self = .string(value)
        case let value as Substring: self = .string(String(value))
        case let value as Bool: self = .bool(value)
        case let value as Int: self = .integer(Int64(value))
        case let value as Int64: self = .integer(value)
        case let value as Int32: self = .integer(Int64(value))
        case let value as Int16: self = .integer(Int64(value))
        case let value as Int8: self = .integer(Int64(value))
        case let value as UInt8: self = .integer(Int64(value))
        case let value as UInt16: self = .integer(Int64(value))
        case let value as UInt32: self = .integer(Int64(value))
        case let value as Double: self = .double(value)
        case let value as Float: self = .double(Double(value))
        case let value as Date: self = .date(value)
        case let value as Data: self = .binary(value)
        case is NSNull: self = .null
        case let value as AnyOptional:
            // A doubly wrapped optional (`Int??` passed as `Any?`): unwrap one level.
            guard let inner = value.wrapped else { self = .null; return }
            self.init(inner)
        default: return nil
        }
    }

    /// The value as a plain Swift value (`nil` for ``null``).
    public var anyValue: Any? {
        switch self {
        case .null: return nil
        case .string(let v): return v
        case .integer(let v): return Int(truncatingIfNeeded: v)
        case .double(let v): return v
        case .bool(let v): return v
        case .date(let v): return v
        case .binary(let v): return v
        }
    }

    public var description: String {
        switch self {
        case .null: return "nil"
        case .string(let v): return "\"\(v)\""
        case .integer(let v): return String(v)
        case .double(let v): return String(v)
        case .bool(let v): return v ? "true" : "false"
        case .date(let v): return ISO8601DateFormatter().string(from: v)
        case .binary(let v): return "<\(v.count) bytes>"
        }
    }

    /// Converts the value to `type` where no information is lost (an integer to a double,
    /// 0/1 to a bool, a whole double to an integer); nil when it cannot.
    public func converted(to type: AttributeType) -> Value? {
        if isNull || self.type == type { return self }
        switch (self, type) {
        case (.integer(let v), .double): return .double(Double(v))
        case (.double(let v), .integer):
            guard v.rounded() == v, let i = Int64(exactly: v) else { return nil }
            return .integer(i)
        case (.integer(let v), .bool) where v == 0 || v == 1: return .bool(v == 1)
        case (.bool(let v), .integer): return .integer(v ? 1 : 0)
        case (.double(let v), .date): return .date(Date(timeIntervalSince1970: v))
        case (.integer(let v), .date): return .date(Date(timeIntervalSince1970: Double(v)))
        default: return nil
        }
    }
}

/// The type of an attribute.
public enum AttributeType: String, Sendable, Hashable, Codable, CaseIterable {
    case string, integer, double, bool, date, binary
}

/// Lets ``Value/init(_:)`` see through an optional stored in an `Any`.
private protocol AnyOptional {
    var wrapped: Any? { get }
}

extension Optional: AnyOptional {
    var wrapped: Any? { self.map { $0 as Any } }
}

extension Date {
    /// The day of a date attribute as the store, section names and the viewer write it:
    /// `2014-06-12` (ISO 8601, in UTC).
    package static func dayString(_ date: Date) -> String { dayFormatter.string(from: date) }

    // ISO8601DateFormatter is thread-safe.
    nonisolated(unsafe) private static let dayFormatter: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter
    }()
}
