import Foundation
import Logging
import ObjectStore
import PostgresNIO

/// Writes a store's changes to the server, each field compared and set against the base
/// the edit started from, and reads back what the server then holds.
struct ServerWriter: Sendable {
    let model: Model
    let policy: MergePolicy
    let logger: Logger

    /// An object's row on the server after a push: its version and values, or nil values
    /// when it is not (or no longer) there.
    struct Written: Sendable {
        var entity: String
        var id: UUID
        var version: Int64
        var values: [String: Value]?
    }

    /// Sends `operations` in the current transaction of `connection`, and returns the rows
    /// they left and the conflicts settled by `MergePolicy.editWins` (those the server
    /// wins are found when the rows are merged back).
    ///
    /// Counters are added to (`wins = wins + 1`), not compared: concurrent taps add up.
    /// A push that adds to counters has an `identity`, recorded on the server in the same
    /// transaction (`"Z_PUSHES"`): sent again (its end was not recorded in the store), it
    /// finds it there and adds nothing twice; its other writes are compare-and-set or
    /// "insert if missing", which come to the same thing when repeated.
    func push(_ operations: [Outbox.Operation], identity: UUID? = nil, on connection: PostgresConnection) async throws -> (written: [Written], conflicts: [SharingConflict]) {
        var addsToCounters = false
        if let identity, operations.contains(where: { !$0.counterDeltas.isEmpty }) {
            var bindings = PostgresBindings()
            bindings.append(identity)
            let rows = try await connection.query(PostgresQuery(
                unsafeSQL: "INSERT INTO \(ServerNames.quoted(ServerNames.pushes)) (id) VALUES ($1) ON CONFLICT (id) DO NOTHING RETURNING id", binds: bindings),
                logger: logger)
            for try await _ in rows.decode(UUID.self) { addsToCounters = true }
            if addsToCounters {
                // The log records the identity with each change of this transaction.
                try await connection.query("SELECT set_config(\(ServerNames.pushSetting), \(identity.uuidString.lowercased()), true)", logger: logger)
            } else {
                logger.info("sharing: push \(identity) was applied before; its counters are not added to again")
            }
        }
        var conflicts: [SharingConflict] = []
        var written: [Written] = []
        var reread: [String: [UUID]] = [:]
        var inserts: [String: [Outbox.Operation]] = [:]
        for operation in ordered(operations) {
            switch operation.kind {
            case .insert:
                // Sent below, many rows a statement.
                inserts[operation.entity.name, default: []].append(operation)
            case .update:
                // Deleted on the server: the pull brings the delete, and the merge reports
                // the edits it drops.
                guard try await update(operation, addingToCounters: addsToCounters, conflicts: &conflicts, on: connection) else { continue }
                reread[operation.entity.name, default: []].append(operation.id)
            case .delete:
                written.append(try await delete(operation, on: connection))
            }
        }
        for (entityName, group) in inserts.sorted(by: { (inherits($0.key), $0.key) < (inherits($1.key), $1.key) }) {
            let inserted = try await insert(group, on: connection)
            written += inserted
            // Those already there (a push that reached the server, not the store) are read.
            let returned = Set(inserted.map(\.id))
            reread[entityName, default: []] += group.map(\.id).filter { !returned.contains($0) }
        }
        for (entityName, ids) in reread {
            guard let entity = model.entity(named: entityName) else { continue }
            written += try await rows(of: entity, ids: ids, on: connection)
        }
        return (written, conflicts)
    }

    /// `operations` in the order row-level security needs (see ``Ownership``): inserts of
    /// objects that inherit their visibility after those of the objects they inherit it
    /// from (an item's list must be there, and seen, when the item goes in), updates, then
    /// deletes of inheriting objects before the others (an item whose list is gone is seen
    /// by no one, so its delete would find no row).
    func ordered(_ operations: [Outbox.Operation]) -> [Outbox.Operation] {
        let rank = { (operation: Outbox.Operation) -> Int in
            let inherits = inherits(operation.entity.name)
            switch operation.kind {
            case .insert: return inherits
            case .update: return 2
            case .delete: return 4 - inherits
            }
        }
        return operations.enumerated().sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }.map(\.element)
    }

    /// 1 for an entity whose objects inherit their visibility from another's, else 0.
    private func inherits(_ entityName: String) -> Int {
        if case .inherited? = model.entity(named: entityName)?.ownership { 1 } else { 0 }
    }

    /// Sends an update: each changed field set unless the server's value moved from the
    /// edit's base (a conflict: kept only under `.editWins`), each counter added to.
    /// False when the row is gone from the server.
    private func update(_ operation: Outbox.Operation, addingToCounters addsToCounters: Bool, conflicts: inout [SharingConflict],
                        on connection: PostgresConnection) async throws -> Bool {
        guard let server = try await currentRow(of: operation, on: connection) else { return false }
        let table = ServerNames.quoted(operation.entity.name)
        var assignments: [String] = []
        var bindings = PostgresBindings()
        bindings.append(operation.id)
        var conflicting: [String] = []
        for name in operation.changedKeys {
            let mine = operation.values[name] ?? .null
            let theirs = server[name] ?? .null
            let base = operation.base?[name] ?? .null
            if theirs != base && theirs != mine {
                conflicting.append("\(name) is \(theirs) on the server (it was \(base) when the edit here began, which set \(mine))")
                guard policy == .editWins else { continue }
            }
            guard theirs != mine else { continue }
            try bind(mine, of: name, entity: operation.entity, into: &bindings)
            assignments.append("\(ServerNames.quoted(name)) = $\(assignments.count + 2)")
        }
        for (name, delta) in operation.counterDeltas.sorted(by: { $0.key < $1.key }) where addsToCounters {
            try bind(delta, of: name, entity: operation.entity, into: &bindings)
            let column = ServerNames.quoted(name)
            assignments.append("\(column) = coalesce(\(column), 0) + $\(assignments.count + 2)")
        }
        if !assignments.isEmpty {
            try await connection.query(PostgresQuery(
                unsafeSQL: "UPDATE \(table) SET \(assignments.joined(separator: ", ")) WHERE \(ServerNames.quoted(ServerNames.objectID)) = $1", binds: bindings), logger: logger)
        }
        if policy == .editWins && !conflicting.isEmpty {
            conflicts.append(SharingConflict(entity: operation.entity.name, globalID: operation.id, objectID: nil,
                                             keys: operation.changedKeys, details: conflicting.joined(separator: "; "), resolution: .keptLocal))
        }
        return true
    }

    /// Sends a delete; the row it left (its next version, no values).
    private func delete(_ operation: Outbox.Operation, on connection: PostgresConnection) async throws -> Written {
        let table = ServerNames.quoted(operation.entity.name), id = ServerNames.quoted(ServerNames.objectID)
        var bindings = PostgresBindings()
        bindings.append(operation.id)
        let rows = try await connection.query(PostgresQuery(
            unsafeSQL: "DELETE FROM \(table) WHERE \(id) = $1 RETURNING \(ServerNames.quoted(ServerNames.version))", binds: bindings), logger: logger)
        var version: Int64?
        for try await old in rows.decode(Int64.self) { version = old + 1 }
        // Already gone: the pull brings (or brought) the delete at its own version.
        return Written(entity: operation.entity.name, id: operation.id, version: version ?? 0, values: nil)
    }

    /// Inserts objects of one entity, up to 500 rows a statement, and returns the rows they
    /// made (as the server's triggers left them); an object already there (a push that
    /// reached the server but not the store) is left as it is, and not returned.
    private func insert(_ operations: [Outbox.Operation], on connection: PostgresConnection) async throws -> [Written] {
        guard let entity = operations.first?.entity else { return [] }
        var written: [Written] = []
        let names = entity.attributes.map(\.name) + entity.relationships.filter { model.storesForeignKey($0, of: entity) }.map(\.name)
        let columns = ([ServerNames.objectID] + names).map(ServerNames.quoted).joined(separator: ", ")
        for start in stride(from: 0, to: operations.count, by: 500) {
            let chunk = operations[start..<min(start + 500, operations.count)]
            var bindings = PostgresBindings()
            var rows: [String] = []
            for operation in chunk {
                let first = bindings.count + 1
                bindings.append(operation.id)
                for name in names { try bind(operation.values[name] ?? .null, of: name, entity: entity, into: &bindings) }
                rows.append("(" + (first..<(first + names.count + 1)).map { "$\($0)" }.joined(separator: ", ") + ")")
            }
            let made = try await connection.query(PostgresQuery(
                unsafeSQL: "INSERT INTO \(ServerNames.quoted(entity.name)) AS t (\(columns)) VALUES \(rows.joined(separator: ", ")) ON CONFLICT (\(ServerNames.quoted(ServerNames.objectID))) DO NOTHING RETURNING \(Self.writtenColumns)",
                binds: bindings), logger: logger)
            for try await (id, version, json) in made.decode((UUID, Int64, String).self) {
                written.append(Written(entity: entity.name, id: id, version: version,
                                       values: try RowImage.values(ofJSON: json, entity: entity, model: model)))
            }
        }
        return written
    }

    /// The server's row of an object being updated, locked until the transaction ends.
    private func currentRow(of operation: Outbox.Operation, on connection: PostgresConnection) async throws -> [String: Value]? {
        var bindings = PostgresBindings()
        bindings.append(operation.id)
        let table = ServerNames.quoted(operation.entity.name)
        let rows = try await connection.query(PostgresQuery(
            unsafeSQL: "SELECT \(Self.rowImage) FROM \(table) t WHERE \(ServerNames.quoted(ServerNames.objectID)) = $1 FOR UPDATE", binds: bindings),
            logger: logger)
        var image: String?
        for try await json in rows.decode(String.self) { image = json }
        return try image.map { try RowImage.values(ofJSON: $0, entity: operation.entity, model: model) }
    }

    /// The rows of `ids` of `entity`, with their versions.
    func rows(of entity: EntityDescription, ids: [UUID], on connection: PostgresConnection) async throws -> [Written] {
        var bindings = PostgresBindings()
        bindings.append(ids)
        let table = ServerNames.quoted(entity.name)
        let rows = try await connection.query(PostgresQuery(
            unsafeSQL: "SELECT \(Self.writtenColumns) FROM \(table) t WHERE \(ServerNames.quoted(ServerNames.objectID)) = ANY($1)",
            binds: bindings), logger: logger)
        var result: [Written] = []
        for try await (id, version, json) in rows.decode((UUID, Int64, String).self) {
            result.append(Written(entity: entity.name, id: id, version: version,
                                  values: try RowImage.values(ofJSON: json, entity: entity, model: model)))
        }
        return result
    }

    /// An entity table's row `t` as a ``Written``: its object's ID, version and row image.
    static let writtenColumns = "t.\(ServerNames.quoted(ServerNames.objectID)), t.\(ServerNames.quoted(ServerNames.version)), \(rowImage)"

    /// The row image of an entity table's row `t`, as the change log writes it.
    static let rowImage = "(to_jsonb(t) - '\(ServerNames.objectID)' - '\(ServerNames.version)')::text"

    /// Appends `value`, a value of the attribute or relationship `name`, typed as its column.
    private func bind(_ value: Value, of name: String, entity: EntityDescription, into bindings: inout PostgresBindings) throws {
        if entity.relationship(named: name) != nil {
            if case .string(let text) = value, let id = UUID(uuidString: text) { bindings.append(id) } else { bindings.append(UUID?.none) }
            return
        }
        switch value {
        case .null:
            switch entity.attribute(named: name)?.type {
            case .string?: bindings.append(String?.none)
            case .integer?: bindings.append(Int64?.none)
            case .double?, .date?: bindings.append(Double?.none)
            case .bool?: bindings.append(Bool?.none)
            case .binary?: try bindings.append(Data?.none)
            case nil: bindings.appendNull()
            }
        case .string(let v): bindings.append(v)
        case .integer(let v): bindings.append(v)
        case .double(let v): bindings.append(v)
        case .bool(let v): bindings.append(v)
        case .date(let v): bindings.append(v.timeIntervalSinceReferenceDate)
        case .binary(let v): try bindings.append(v)
        }
    }
}
