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
    ///
    /// Each entity's changes of a kind go in a few statements, not one a row: inserts in
    /// one (an array a column); updates as one read that locks their rows, then one statement
    /// for each set of fields they change; deletes in one. A push of 1,000 updates costs
    /// a handful of round trips.
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
        // By kind and entity, in the order `ordered` gives: a few statements a group.
        var groups: [(kind: Outbox.Operation.Kind, entity: EntityDescription, operations: [Outbox.Operation])] = []
        for operation in ordered(operations) {
            if let index = groups.firstIndex(where: { $0.kind == operation.kind && $0.entity.name == operation.entity.name }) {
                groups[index].operations.append(operation)
            } else {
                groups.append((operation.kind, operation.entity, [operation]))
            }
        }
        for group in groups {
            let ids = group.operations.map(\.id)
            switch group.kind {
            case .insert:
                let inserted = try await insert(group.operations, on: connection)
                written += inserted
                // Those already there (a push that reached the server, not the store) are read.
                let returned = Set(inserted.map(\.id))
                reread[group.entity.name, default: []] += ids.filter { !returned.contains($0) }
            case .update:
                // Those deleted on the server are left out: the pull brings the delete, and
                // the merge reports the edits it drops.
                written += try await update(group.operations, addingToCounters: addsToCounters, conflicts: &conflicts, on: connection)
            case .delete:
                written += try await delete(group.operations, on: connection)
            }
        }
        // (Most pieces have none to read: every insert came back. Asking anyway cost a
        // round trip a piece.)
        for (entityName, ids) in reread where !ids.isEmpty {
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
        // Ranked once each, and not sorted at all when they share a rank (a first push's
        // piece, every one an insert of one entity): sorting a piece ranked each operation
        // for every comparison, in the piece's open transaction.
        let ranks = operations.map(rank)
        guard let first = ranks.first, ranks.contains(where: { $0 != first }) else { return operations }
        return ranks.indices.sorted { (ranks[$0], $0) < (ranks[$1], $1) }.map { operations[$0] }
    }

    /// 1 for an entity whose objects inherit their visibility from another's, else 0.
    private func inherits(_ entityName: String) -> Int {
        if case .inherited? = model.entity(named: entityName)?.ownership { 1 } else { 0 }
    }

    /// Sends the updates of one entity's objects: their server rows read and locked in one
    /// statement, then each changed field set unless the server's value moved from the
    /// edit's base (a conflict: kept only under `.editWins`), each counter added to; the
    /// rows that set the same fields go in one statement. Returns the rows of the objects
    /// still on the server: as the updates left them (`RETURNING`), or as read, locked, when
    /// nothing of theirs was set.
    private func update(_ operations: [Outbox.Operation], addingToCounters addsToCounters: Bool, conflicts: inout [SharingConflict],
                        on connection: PostgresConnection) async throws -> [Written] {
        guard let entity = operations.first?.entity else { return [] }
        var rows: [UUID: Written] = [:]
        for row in try await self.rows(of: entity, ids: operations.map(\.id), lockingThem: true, on: connection) { rows[row.id] = row }
        let current = rows.compactMapValues(\.values)
        // By the fields they set (a counter's name after a "+"): each row's ID and values.
        var sets: [[String]: [(id: UUID, values: [Value])]] = [:]
        for operation in operations {
            guard let server = current[operation.id] else { continue }
            // A row still at the base's version was not written since the edit began: a value
            // that differs from the base was changed without a write (a column dropped by
            // hand and added back empty, its type changed), by no desktop, and the edit sets it.
            let writtenSince = operation.baseVersion.map { $0 != rows[operation.id]?.version } ?? true
            var fields: [String] = [], values: [Value] = []
            var conflicting: [(key: String, details: String)] = []
            for name in operation.changedKeys {
                let mine = operation.values[name] ?? .null
                let theirs = server[name] ?? .null
                let base = operation.base?[name] ?? .null
                if writtenSince && theirs != base && theirs != mine {
                    conflicting.append((name, "\(name) is \(theirs) on the server (it was \(base) when the edit here began, which set \(mine))"))
                    guard policy == .editWins else { continue }
                }
                guard theirs != mine else { continue }
                fields.append(name)
                values.append(mine)
            }
            for (name, delta) in operation.counterDeltas.sorted(by: { $0.key < $1.key }) where addsToCounters {
                fields.append("+" + name)
                values.append(delta)
            }
            if !fields.isEmpty { sets[fields, default: []].append((operation.id, values)) }
            if policy == .editWins && !conflicting.isEmpty {
                conflicts.append(SharingConflict(entity: entity.name, globalID: operation.id, objectID: nil, keys: conflicting.map(\.key),
                                                 details: conflicting.map(\.details).joined(separator: "; "), resolution: .keptLocal))
            }
        }
        for (fields, updates) in sets.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            for row in try await set(fields, rows: updates, of: entity, on: connection) { rows[row.id] = row }
        }
        return operations.compactMap { rows[$0.id] }
    }

    /// Sets `fields` (a counter's name after a "+", added to) of each row to its values, in
    /// one statement: `UPDATE … FROM unnest(…)`, an array a column. Returns the rows as the
    /// updates left them.
    private func set(_ fields: [String], rows: [(id: UUID, values: [Value])], of entity: EntityDescription,
                     on connection: PostgresConnection) async throws -> [Written] {
        let names = fields.map { $0.hasPrefix("+") ? String($0.dropFirst()) : $0 }
        let id = ServerNames.quoted(ServerNames.objectID)
        // The version raised here, as the version trigger would: the trigger's function is
        // then not called for each row (see ServerSchema).
        let version = ServerNames.quoted(ServerNames.version)
        let assignments = ["\(version) = t.\(version) + 1"] + zip(fields, names).map { field, name in
            let column = ServerNames.quoted(name)
            return field.hasPrefix("+") ? "\(column) = coalesce(t.\(column), 0) + v.\(column)" : "\(column) = v.\(column)"
        }
        let (bindings, arrays) = try columns(names, of: entity, rows: rows)
        let stored = ServerColumns(entity, model: model)
        let updated = try await connection.query(PostgresQuery(unsafeSQL: """
            UPDATE \(ServerNames.quoted(entity.name)) AS t SET \(assignments.joined(separator: ", "))
            FROM unnest(\(arrays)) AS v(\(([id] + names.map(ServerNames.quoted)).joined(separator: ", ")))
            WHERE t.\(id) = v.\(id)
            RETURNING \(stored.selection)
            """, binds: bindings), logger: logger)
        return try await written(updated, stored)
    }

    /// `rows` bound as arrays, one a column (``ColumnArray``): `$1` their IDs, then the
    /// values of `names` (attributes or stored to-one relationships of `entity`), each row's
    /// in the order of `names`; and those parameters cast to their array types, for
    /// `unnest(…)`. The server parses and binds a few parameters, whatever the number of rows.
    private func columns(_ names: [String], of entity: EntityDescription, rows: [(id: UUID, values: [Value])]) throws -> (PostgresBindings, String) {
        var columns = names.map { ColumnArray($0, type: ServerColumns.type(of: $0, in: entity)) }
        for row in rows {
            do {
                for (index, value) in row.values.enumerated() { try columns[index].append(value) }
            } catch var mismatch as ColumnArray.Mismatch {
                (mismatch.entity, mismatch.object) = (entity.name, row.id)
                throw mismatch
            }
        }
        var bindings = PostgresBindings()
        bindings.append(rows.map(\.id))
        for column in columns { try bindings.append(column) }
        let arrays = (["$1::uuid[]"] + columns.enumerated().map { "$\($0.offset + 2)::\($0.element.sqlType)" }).joined(separator: ", ")
        return (bindings, arrays)
    }

    /// Sends the deletes of one entity's objects in one statement; the rows they left (their
    /// next versions, no values).
    private func delete(_ operations: [Outbox.Operation], on connection: PostgresConnection) async throws -> [Written] {
        guard let entity = operations.first?.entity else { return [] }
        let table = ServerNames.quoted(entity.name), id = ServerNames.quoted(ServerNames.objectID)
        var bindings = PostgresBindings()
        bindings.append(operations.map(\.id))
        let rows = try await connection.query(PostgresQuery(
            unsafeSQL: "DELETE FROM \(table) WHERE \(id) = ANY($1) RETURNING \(id), \(ServerNames.quoted(ServerNames.version))", binds: bindings),
            logger: logger)
        var versions: [UUID: Int64] = [:]
        for try await (deleted, old) in rows.decode((UUID, Int64).self) { versions[deleted] = old + 1 }
        // Already gone: the pull brings (or brought) the delete at its own version.
        return operations.map { Written(entity: entity.name, id: $0.id, version: versions[$0.id] ?? 0, values: nil) }
    }

    /// Inserts objects of one entity in one statement, and returns the rows they made (as
    /// the server's triggers left them); an object already there (a push that reached the
    /// server but not the store) is left as it is, and not returned.
    ///
    /// The rows go as an array a column (``ColumnArray``), unnested by the server: a
    /// statement of a few parameters whatever the number of rows, against a `VALUES` list
    /// of a parameter a value that the server parsed and bound value by value.
    private func insert(_ operations: [Outbox.Operation], on connection: PostgresConnection) async throws -> [Written] {
        guard let entity = operations.first?.entity else { return [] }
        let stored = ServerColumns(entity, model: model)
        let (bindings, arrays) = try columns(stored.names, of: entity, rows: operations.map { operation in
            (operation.id, stored.names.map { operation.values[$0] ?? .null })
        })
        let quotedNames = ([ServerNames.objectID] + stored.names).map(ServerNames.quoted).joined(separator: ", ")
        let made = try await connection.query(PostgresQuery(
            unsafeSQL: "INSERT INTO \(ServerNames.quoted(entity.name)) AS t (\(quotedNames)) SELECT * FROM unnest(\(arrays)) ON CONFLICT (\(ServerNames.quoted(ServerNames.objectID))) DO NOTHING RETURNING \(stored.selection)",
            binds: bindings), logger: logger)
        return try await written(made, stored)
    }

    /// The rows of `ids` of `entity`, with their versions; `lockingThem` (rows about to be
    /// updated) locks them until the transaction ends, in the order of their IDs, the same in
    /// every desktop's push.
    func rows(of entity: EntityDescription, ids: [UUID], lockingThem: Bool = false, on connection: PostgresConnection) async throws -> [Written] {
        var bindings = PostgresBindings()
        bindings.append(ids)
        let table = ServerNames.quoted(entity.name), id = ServerNames.quoted(ServerNames.objectID)
        let lock = lockingThem ? " ORDER BY t.\(id) FOR UPDATE" : ""
        let stored = ServerColumns(entity, model: model)
        let rows = try await connection.query(PostgresQuery(
            unsafeSQL: "SELECT \(stored.selection) FROM \(table) t WHERE \(id) = ANY($1)\(lock)", binds: bindings), logger: logger)
        return try await written(rows, stored)
    }

    /// The rows of a statement that returns ``ServerColumns/selection``, each as the
    /// object's ID, version and values.
    ///
    /// Throws ``RowImage/Unreadable`` for a column whose type was changed on the server,
    /// naming its table too: the round fails with it, and the push waits, kept in the store.
    private func written(_ rows: PostgresRowSequence, _ columns: ServerColumns) async throws -> [Written] {
        var result: [Written] = []
        for try await row in rows {
            let cells = row.makeRandomAccess()
            do {
                result.append(Written(entity: columns.entity.name, id: try cells[0].decode(UUID.self), version: try cells[1].decode(Int64.self),
                                      values: try columns.values(of: cells)))
            } catch let error as RowImage.Unreadable {
                throw RowImage.Unreadable(key: error.key.map { "\(columns.entity.name).\($0)" },
                                          reason: error.reason + "; until then this desktop's edits of \(columns.entity.name) wait in its store, none lost")
            }
        }
        return result
    }
}
