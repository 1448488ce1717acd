import Foundation
import ObjectStore

/// An object's row as the server holds it: each attribute's ``Value`` and each stored to-one
/// relationship as the destination's global ID (a lowercase UUID in a `Value.string`, or
/// `Value.null`). Written as JSON the way PostgreSQL's `to_jsonb` writes the server row
/// (dates as seconds since 2001, data as `\x` and hex digits, NaN and infinities as
/// strings), so that a base kept in the store and a row image from the change log read
/// alike.
enum RowImage {
    /// Why a row image cannot be read as the model's: the field at fault (nil for the
    /// row as a whole) and what is wrong with it.
    struct Unreadable: Error, Sendable, Hashable, CustomStringConvertible {
        var key: String?
        var reason: String
        var description: String { key.map { "\($0) \(reason)" } ?? reason }
    }

    /// The values of a row image: each attribute and stored to-one relationship of `entity`
    /// that it holds, read as its type. Columns of a newer model are left out. Throws
    /// ``Unreadable`` for a row that is not a JSON object or a value of another type.
    static func values(ofJSON json: String, entity: EntityDescription, model: Model) throws -> [String: Value] {
        let fields: [(key: String, value: JSONScalar)]
        do {
            fields = try JSONScalar.fields(fromJSON: json)
        } catch {
            throw Unreadable(reason: "its row is not a JSON object of scalars (\(JSONScalar.clipped(json)))")
        }
        // A wide row's fields are looked up in a dictionary (the first of a repeated key).
        let byKey = fields.count > 24 ? Dictionary(fields, uniquingKeysWith: { first, _ in first }) : nil
        let row = { (key: String) in byKey.map { $0[key] } ?? JSONScalar.field(key, in: fields) }
        var values: [String: Value] = [:]
        values.reserveCapacity(fields.count)
        for attribute in entity.attributes {
            guard let scalar = row(attribute.name) else { continue }
            guard let value = scalar.value(as: attribute.type) else {
                throw Unreadable(key: attribute.name, reason: "= \(scalar) is not \(attribute.type.withArticle)")
            }
            values[attribute.name] = value
        }
        for relationship in entity.relationships where model.storesForeignKey(relationship, of: entity) {
            switch row(relationship.name) {
            case nil: continue
            case .null?: values[relationship.name] = .null
            case .string(let id)? where UUID(uuidString: id) != nil: values[relationship.name] = .string(id.lowercased())
            case let other?:
                throw Unreadable(key: relationship.name, reason: "= \(other) is not a global ID")
            }
        }
        return values
    }

    /// `values` as a JSON object, its keys sorted. Written by hand: a first push of a
    /// million objects writes a million bases, and `JSONEncoder` took most of that time.
    static func json(_ values: [String: Value]) -> String {
        var json = "{"
        for (index, key) in values.keys.sorted().enumerated() {
            if index > 0 { json += "," }
            appendString(key, to: &json)
            json += ":"
            switch JSONScalar(values[key]!) {
            case .null: json += "null"
            case .bool(let v): json += v ? "true" : "false"
            case .integer(let v): json += String(v)
            case .double(let v):
                if v.isNaN { json += "\"NaN\"" } else if v.isInfinite { json += v < 0 ? "\"-Infinity\"" : "\"Infinity\"" } else { json += "\(v)" }
            case .string(let v): appendString(v, to: &json)
            }
        }
        return json + "}"
    }

    /// `text` as a JSON string: quoted, with quotes, backslashes and control characters escaped.
    private static func appendString(_ text: String, to json: inout String) {
        json += "\""
        // Most text needs no escape: it goes in whole, not scalar by scalar.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            json += text
            json += "\""
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": json += "\\\""
            case "\\": json += "\\\\"
            case "\n": json += "\\n"
            case "\r": json += "\\r"
            case "\t": json += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                json += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: json.unicodeScalars.append(scalar)
            }
        }
        json += "\""
    }
}

extension JSONScalar: Encodable {
    /// A value as the server's JSON writes it.
    init(_ value: Value) {
        switch value {
        case .null: self = .null
        case .string(let v): self = .string(v)
        case .integer(let v): self = .integer(v)
        case .double(let v): self = .double(v)
        case .bool(let v): self = .bool(v)
        case .date(let v): self = .double(v.timeIntervalSinceReferenceDate)
        case .binary(let v): self = .string("\\x" + v.map { String(format: "%02x", $0) }.joined())
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let v): try container.encode(v)
        case .integer(let v): try container.encode(v)
        case .double(let v): try container.encode(v)
        case .string(let v): try container.encode(v)
        }
    }
}
