import Foundation
import NIOCore
import ObjectStore
import PostgresNIO

/// One column of many rows, bound as one PostgreSQL array (its binary form, `NULL`s in
/// it allowed), so that a statement takes any number of rows in a parameter a column:
/// `INSERT … SELECT * FROM unnest($1::uuid[], $2::text[], …)`. Against a `VALUES` list of
/// a parameter a value, the server parses and binds a few parameters, not thousands, and
/// one statement holds a piece of any size.
struct ColumnArray: PostgresThrowingDynamicTypeEncodable {
    /// What the column holds: an attribute's type, or nil for a stored to-one relationship
    /// (its destination's global ID, a `uuid`).
    let type: AttributeType?
    /// The column's name, for the error of a value of another type.
    let name: String
    private(set) var count = 0
    private var hasNulls = false
    /// The elements, each its length (-1 for `NULL`) and bytes, as the array's binary form
    /// holds them.
    private var elements = ByteBuffer()

    init(_ name: String, type: AttributeType?) {
        self.name = name
        self.type = type
    }

    /// The SQL type of the array, for a cast: `uuid[]`, `text[]`, ….
    var sqlType: String { (type?.serverType ?? "uuid") + "[]" }

    var psqlType: PostgresDataType {
        switch type {
        case nil: .uuidArray
        case .string?: .textArray
        case .integer?: .int8Array
        case .double?, .date?: .float8Array
        case .bool?: .boolArray
        case .binary?: .byteaArray
        }
    }

    var psqlFormat: PostgresFormat { .binary }

    private var elementType: PostgresDataType {
        switch type {
        case nil: .uuid
        case .string?: .text
        case .integer?: .int8
        case .double?, .date?: .float8
        case .bool?: .bool
        case .binary?: .bytea
        }
    }

    /// Appends `value` as the column's type holds it: a relationship's destination as its
    /// global ID (NULL when it is not one), a number as the column's kind of number, a date
    /// as seconds since 2001-01-01 (``AttributeType/serverType``).
    mutating func append(_ value: Value) throws {
        count += 1
        switch (type, value) {
        case (_, .null): appendNull()
        case (nil, .string(let text)):
            if let id = UUID(uuidString: text) { try appendElement(id) } else { appendNull() }
        case (nil, _): appendNull()
        case (.string?, .string(let v)): try appendElement(v)
        case (.integer?, .integer(let v)): try appendElement(v)
        case (.integer?, .double(let v)) where v.rounded() == v && abs(v) < 9.2e18: try appendElement(Int64(v))
        case (.double?, .double(let v)), (.date?, .double(let v)): try appendElement(v)
        case (.double?, .integer(let v)), (.date?, .integer(let v)): try appendElement(Double(v))
        case (.date?, .date(let v)), (.double?, .date(let v)): try appendElement(v.timeIntervalSinceReferenceDate)
        case (.bool?, .bool(let v)): try appendElement(v)
        case (.binary?, .binary(let v)): try appendElement(v)
        case (let type?, _):
            count -= 1
            throw Mismatch(field: name, value: value, column: type.serverType)
        }
    }

    /// A value that its column cannot hold (a string in an integer attribute's column,
    /// written into the store's file by something other than this library): the push that
    /// holds it fails, naming it, as the server's own refusal of it would.
    struct Mismatch: Error, CustomStringConvertible {
        var field: String
        var value: Value
        var column: String
        var entity = ""
        var object: UUID?

        var description: String {
            "\(entity) \(object?.uuidString.lowercased() ?? "")'s \(field) holds \(value), which a \(column) column on the server "
                + "cannot hold; correct it in the store (until then, the push that holds it is not sent)"
        }
    }

    private mutating func appendNull() {
        hasNulls = true
        elements.writeInteger(-1, as: Int32.self)
    }

    private mutating func appendElement(_ value: some PostgresEncodable) throws {
        let start = elements.writerIndex
        elements.writeInteger(0, as: Int32.self)
        try value.encode(into: &elements, context: .default)
        elements.setInteger(Int32(elements.writerIndex - start - 4), at: start)
    }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) throws {
        // A one-dimensional array from index 1 (an empty one has no dimension), as
        // PostgreSQL's `array_send` writes it.
        buffer.writeInteger(count == 0 ? 0 : 1, as: Int32.self)
        buffer.writeInteger(hasNulls ? 1 : 0, as: Int32.self)
        buffer.writeInteger(elementType.rawValue)
        guard count > 0 else { return }
        buffer.writeInteger(Int32(count))
        buffer.writeInteger(1, as: Int32.self)
        buffer.writeImmutableBuffer(elements)
    }
}
