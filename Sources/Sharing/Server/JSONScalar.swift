import Foundation
import ObjectStore

/// A value of a row image in the change log, as `to_jsonb` wrote it.
enum JSONScalar: Decodable, Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Int64.self) { self = .integer(value) }
        else if let value = try? container.decode(Double.self) { self = .double(value) }
        else { self = .string(try container.decode(String.self)) }
    }

    /// The value as an attribute of `type`, or nil when it is not one. PostgreSQL writes a
    /// `double precision` that JSON cannot hold (NaN, ±Infinity) as a string, and `bytea`
    /// as a string of hex digits after `\x`.
    func value(as type: AttributeType) -> Value? {
        switch (self, type) {
        case (.null, _): return .null
        case (.string(let v), .string): return .string(v)
        case (.integer(let v), .integer): return .integer(v)
        case (.bool(let v), .bool): return .bool(v)
        case (.integer(let v), .double): return .double(Double(v))
        case (.double(let v), .double): return .double(v)
        case (.string(let v), .double): return Double(v).map(Value.double)
        case (.integer(let v), .date): return .date(Date(timeIntervalSinceReferenceDate: Double(v)))
        case (.double(let v), .date): return .date(Date(timeIntervalSinceReferenceDate: v))
        case (.string(let v), .binary): return Self.bytes(fromHex: v).map(Value.binary)
        default: return nil
        }
    }

    private static func bytes(fromHex text: String) -> Data? {
        guard text.hasPrefix("\\x") else { return nil }
        let digits = Array(text.utf8.dropFirst(2))
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes = Data(capacity: digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    /// The value as JSON writes it; a long string clipped, so that a message stays short.
    var description: String {
        switch self {
        case .null: return "null"
        case .bool(let v): return String(v)
        case .integer(let v): return String(v)
        case .double(let v): return String(v)
        case .string(let v): return "\"\(Self.clipped(v))\""
        }
    }

    /// `text`, or its first 40 characters and how long it is.
    static func clipped(_ text: String) -> String {
        text.count <= 40 ? text : "\(text.prefix(40))… (\(text.utf8.count) bytes)"
    }
}
