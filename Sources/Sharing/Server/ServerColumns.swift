import Foundation
import ObjectStore
import PostgresNIO

/// The columns of an entity's server table that hold its values, and how a row of them is
/// read: as typed columns, not as JSON row images, wherever a desktop reads the tables
/// themselves (a push reading back what it wrote, a join's or a resync's snapshot). The
/// change log's rows are row images (``RowImage``); a row read either way gives the same
/// values.
struct ServerColumns: Sendable {
    let entity: EntityDescription
    /// The attributes' columns, then the stored to-one relationships' (as
    /// ``ServerSchema`` makes them).
    let names: [String]
    /// What each of `names` holds (``type(of:in:)``).
    private let types: [AttributeType?]

    init(_ entity: EntityDescription, model: Model) {
        self.entity = entity
        names = entity.attributes.map(\.name) + entity.relationships.filter { model.storesForeignKey($0, of: entity) }.map(\.name)
        types = names.map { Self.type(of: $0, in: entity) }
    }

    /// What the column `name` of `entity`'s table holds: its attribute's type, or nil for a
    /// stored to-one relationship (its destination's global ID, a `uuid`).
    static func type(of name: String, in entity: EntityDescription) -> AttributeType? {
        entity.relationship(named: name) == nil ? entity.attribute(named: name)?.type : nil
    }

    /// A row `t`'s ID, version and ``names``, for a `SELECT` or `RETURNING` list, in the
    /// order ``values(of:)`` reads them. The columns, not the row's image: no JSON to make
    /// on the server and parse here (a fifth of an insert's time on the server, measured
    /// with psql, and most of the reading).
    var selection: String {
        ([ServerNames.objectID, ServerNames.version] + names).map { "t." + ServerNames.quoted($0) }.joined(separator: ", ")
    }

    /// The values of a row of ``selection`` (its cells after the ID and the version): each
    /// column read as its attribute's type, a stored to-one relationship as its
    /// destination's global ID in lowercase, no value as `Value.null`. The values the row
    /// image of the same row gives (``RowImage/values(ofJSON:entity:model:)``).
    ///
    /// Throws ``RowImage/Unreadable``, naming the column, for a value of another type: a
    /// column whose type was changed on the server.
    func values(of cells: PostgresRandomAccessRow) throws -> [String: Value] {
        var values: [String: Value] = [:]
        values.reserveCapacity(names.count)
        for (offset, name) in names.enumerated() {
            let cell = cells[offset + 2]
            do {
                switch types[offset] {
                case nil: values[name] = try cell.decode(UUID?.self).map { .string($0.uuidString.lowercased()) } ?? .null
                case .string?: values[name] = try cell.decode(String?.self).map(Value.string) ?? .null
                case .integer?: values[name] = try cell.decode(Int64?.self).map(Value.integer) ?? .null
                case .double?: values[name] = try cell.decode(Double?.self).map(Value.double) ?? .null
                case .date?: values[name] = try cell.decode(Double?.self).map { .date(Date(timeIntervalSinceReferenceDate: $0)) } ?? .null
                case .bool?: values[name] = try cell.decode(Bool?.self).map(Value.bool) ?? .null
                case .binary?: values[name] = try cell.decode(Data?.self).map(Value.binary) ?? .null
                }
            } catch {
                let expected = types[offset].map { "\($0.withArticle) (\($0.serverType))" } ?? "a global ID (uuid)"
                throw RowImage.Unreadable(key: name, reason: "is not \(expected): its column on the server holds \(String(describing: cell.dataType).lowercased()); give the column back its type")
            }
        }
        return values
    }

    /// How many bytes the cells of a row hold, as the server sent them.
    static func bytes(of cells: PostgresRandomAccessRow) -> Int {
        cells.reduce(0) { $0 + ($1.bytes?.readableBytes ?? 0) }
    }
}
