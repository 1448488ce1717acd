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

extension JSONScalar {
    /// Not a JSON object of scalars; `offset` is the byte where reading stopped.
    struct NotAnObject: Error {
        var offset: Int
    }

    /// A JSON object whose values are scalars (a row image, a base), read by hand:
    /// `JSONDecoder` took most of the time of taking a million rows. Strict JSON: no
    /// trailing commas, no raw control characters in strings. A number is an integer when
    /// it is a whole number in `Int64`'s range, else a double, as `JSONDecoder` reads it.
    ///
    /// The fields come in the object's order, a repeated key as often as it is written:
    /// ``field(_:in:)`` finds the first, as `JSONDecoder` reads it. Not a dictionary: the
    /// caller looks up each of its columns once, and for a row of a few columns a look
    /// through them costs less than hashing every key twice (a pull, a push's pass and a
    /// merge each read a row image or a base of every object they take).
    static func fields(fromJSON json: String) throws -> [(key: String, value: JSONScalar)] {
        var json = json
        return try json.withUTF8 { bytes in
            var reader = Reader(bytes: bytes)
            return try reader.object()
        }
    }

    /// The value of the first field named `key` of `fields` (``fields(fromJSON:)``).
    static func field(_ key: String, in fields: [(key: String, value: JSONScalar)]) -> JSONScalar? {
        for field in fields where field.key == key { return field.value }
        return nil
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        mutating func object() throws -> [(key: String, value: JSONScalar)] {
            var object: [(key: String, value: JSONScalar)] = []
            try expect(UInt8(ascii: "{"))
            skipSpace()
            if peek() == UInt8(ascii: "}") {
                index += 1
            } else {
                while true {
                    skipSpace()
                    let key = try string()
                    try expect(UInt8(ascii: ":"))
                    skipSpace()
                    let value = try scalar()
                    object.append((key, value))
                    skipSpace()
                    let next = peek()
                    index += 1
                    if next == UInt8(ascii: "}") { break }
                    guard next == UInt8(ascii: ",") else { throw NotAnObject(offset: index - 1) }
                }
            }
            skipSpace()
            guard index == bytes.count else { throw NotAnObject(offset: index) }
            return object
        }

        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func expect(_ byte: UInt8) throws {
            skipSpace()
            guard peek() == byte else { throw NotAnObject(offset: index) }
            index += 1
        }

        mutating func literal(_ text: StaticString, _ value: JSONScalar) throws -> JSONScalar {
            let count = text.utf8CodeUnitCount
            guard index + count <= bytes.count,
                  UnsafeBufferPointer(rebasing: bytes[index..<index + count]).elementsEqual(UnsafeBufferPointer(start: text.utf8Start, count: count))
            else { throw NotAnObject(offset: index) }
            index += count
            return value
        }

        mutating func scalar() throws -> JSONScalar {
            switch peek() {
            case UInt8(ascii: "n"): return try literal("null", .null)
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "\""): return .string(try string())
            default: return try number()
            }
        }

        mutating func number() throws -> JSONScalar {
            let start = index
            var integral = true
            scan: while let byte = peek() {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"): break
                case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): integral = false
                default: break scan
                }
                index += 1
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            guard let first = text.utf8.first, first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first)
            else { throw NotAnObject(offset: start) }
            if integral, let value = Int64(text) { return .integer(value) }
            guard let value = Double(text), value.isFinite else { throw NotAnObject(offset: start) }
            // A whole number in Int64's range is an integer, however written (`-2.5e3`), as
            // `JSONDecoder` reads it.
            if value == value.rounded(), value >= -0x1p63, value < 0x1p63 { return .integer(Int64(value)) }
            return .double(value)
        }

        mutating func string() throws -> String {
            guard peek() == UInt8(ascii: "\"") else { throw NotAnObject(offset: index) }
            index += 1
            let start = index
            // Most strings have no escape: taken as they are.
            while let byte = peek(), byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                guard byte >= 0x20 else { throw NotAnObject(offset: index) }
                index += 1
            }
            var scalars = String.UnicodeScalarView()
            var text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            while let byte = peek(), byte == UInt8(ascii: "\\") {
                index += 1
                guard let escaped = peek() else { throw NotAnObject(offset: index) }
                index += 1
                switch escaped {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{8}")
                case UInt8(ascii: "f"): scalars.append("\u{C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"): scalars.append(try unicodeEscape())
                default: throw NotAnObject(offset: index - 1)
                }
                let run = index
                while let byte = peek(), byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                    guard byte >= 0x20 else { throw NotAnObject(offset: index) }
                    index += 1
                }
                text.unicodeScalars.append(contentsOf: scalars)
                scalars = String.UnicodeScalarView()
                text += String(decoding: UnsafeBufferPointer(rebasing: bytes[run..<index]), as: UTF8.self)
            }
            guard peek() == UInt8(ascii: "\"") else { throw NotAnObject(offset: index) }
            index += 1
            return text
        }

        /// The character of `\uXXXX` (after the `u`), a surrogate pair's two escapes as one.
        mutating func unicodeEscape() throws -> Unicode.Scalar {
            let high = try hexQuad()
            if (0xD800..<0xDC00).contains(high) {
                guard peek() == UInt8(ascii: "\\") else { throw NotAnObject(offset: index) }
                index += 1
                guard peek() == UInt8(ascii: "u") else { throw NotAnObject(offset: index) }
                index += 1
                let low = try hexQuad()
                guard (0xDC00..<0xE000).contains(low), let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)) else {
                    throw NotAnObject(offset: index)
                }
                return scalar
            }
            guard let scalar = Unicode.Scalar(high) else { throw NotAnObject(offset: index) }
            return scalar
        }

        mutating func hexQuad() throws -> UInt32 {
            guard index + 4 <= bytes.count,
                  let value = UInt32(String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<index + 4]), as: UTF8.self), radix: 16)
            else { throw NotAnObject(offset: index) }
            index += 4
            return value
        }
    }
}
