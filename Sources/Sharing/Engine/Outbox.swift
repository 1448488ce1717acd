import Foundation
import GRDB
import ObjectStore

/// The local changes not pushed yet, read from the store's history: the objects written
/// since the token up to which pushes went, each compared with its base.
///
/// The history says which objects were written, whoever wrote them (a context, an import,
/// the `sqlite3` shell); the base says what the server had, so the difference is exactly
/// what this store changed. Rows that pulls wrote equal their new bases and send nothing,
/// so no change goes back to where it came from. A push that reached the server but not the
/// store (the process killed in between) is sent again and finds its values there: nothing
/// is written twice.
struct Outbox: Sendable {
    /// One object's change to send.
    struct Operation: Sendable {
        enum Kind: Sendable { case insert, update, delete }
        var entity: EntityDescription
        var id: UUID
        var kind: Kind
        /// The local row in server terms (none for a delete).
        var values: [String: Value]
        /// The fields that differ from the base (every field for an insert), but for
        /// the counters of an update.
        var changedKeys: [String]
        /// The base the edit started from (nil for an insert).
        var base: [String: Value]?
        /// The base's version, for an update: a server row still at it was not written since.
        var baseVersion: Int64?
        /// What an update adds to each counter that differs from its base (local less base).
        var counterDeltas: [String: Value] = [:]
    }

    let store: PersistentStore
    let rows: LocalRows
    let limits: SharingLimits

    init(store: PersistentStore, limits: SharingLimits) {
        self.store = store
        self.limits = limits
        rows = LocalRows(model: store.model)
    }

    /// The objects that may have changes to push, read once and gone through in passes
    /// (see ``pass(of:limit:in:)``), so that a big store's changes (its first push: every
    /// object) commit in pieces that each count.
    struct Scan: Sendable {
        /// The history token the scan covers: what was written up to it. Objects written
        /// later (before the scan's position too) are left to the next scan.
        var through: Int64
        /// The row keys of the candidates, sorted, by entity (the model's order).
        var keys: [[Int64]]
        /// Whether every object was read (joining, or the history was pruned past the
        /// pushed token): then shared objects whose rows are gone are found by their bases,
        /// at the end.
        var everything: Bool
        /// Where the next pass goes on: an entity's number, and an index in its keys.
        var entity = 0, offset = 0
        /// Whether every pass was made.
        var isFinished = false

        /// How many objects the passes to come may find changed (at most).
        var remaining: Int {
            isFinished ? 0 : keys[min(entity, keys.count)...].reduce(0) { $0 + $1.count } - offset
        }
    }

    /// A scan of the objects written since the pushed token, or of `everything`.
    ///
    /// - Parameter excluded: History tokens of writes that left nothing to push: the
    ///   sharing engine's own (rows it took from the server, equal to their new bases). An
    ///   object they wrote is still scanned when another write (an edit) names it.
    func scan(everything: Bool = false, excluding excluded: [ClosedRange<Int64>] = [], in db: Database) throws -> Scan {
        let pushed = try SharingState.pushedThrough(in: db)
        let current = try PersistentStore.currentHistoryToken(in: db)
        guard everything || current > pushed else { return Scan(through: current, keys: [], everything: false, isFinished: true) }
        let (candidates, scannedAll) = try self.candidates(everything: everything, since: pushed, excluding: excluded, in: db)
        return Scan(through: current, keys: store.model.entities.map { (candidates[$0.name] ?? []).sorted() }, everything: scannedAll)
    }

    /// The operations of the next pass of `scan`, about `limit` of them (the last pass
    /// adds the deletes found by bases), and the scan moved past them. Runs in a write
    /// transaction: objects named for the first time get their global IDs in it.
    func pass(of scan: inout Scan, limit: Int = .max, in db: Database) throws -> [Operation] {
        var operations: [Operation] = []
        while scan.entity < scan.keys.count, operations.count < limit {
            let entity = store.model.entities[scan.entity], keys = scan.keys[scan.entity]
            let slice = Array(keys[scan.offset..<min(keys.count, scan.offset + 1000)])
            // The slice's rows, global IDs and bases, each read a few hundred a statement.
            let current = try rows.values(of: entity, keys: slice, in: db)
            var ids = try GlobalIDs.globalIDs(entity: entity.name, rowKeys: slice, in: db)
            let bases = try SharingState.storedBases(of: ids.values, in: db)
            // Rows named for the first time (inserts never shared) get their IDs together.
            let named = slice.filter { ids[$0] == nil && current[$0] != nil }.map { (rowKey: $0, id: GlobalIDs.newGlobalID()) }
            try GlobalIDs.map(named, to: entity.name, in: db)
            for (key, id) in named { ids[key] = id }
            for key in slice {
                let existingID = ids[key]
                let base = try existingID.flatMap { bases[$0] }.map {
                    try SharingState.base(version: $0.version, json: $0.json, entity: entity, model: store.model)
                }
                if let operation = try operation(of: entity, key: key, values: current[key], existingID: existingID, base: base, in: db) {
                    operations.append(operation)
                }
            }
            scan.offset += slice.count
            if scan.offset >= keys.count { (scan.entity, scan.offset) = (scan.entity + 1, 0) }
        }
        if scan.entity >= scan.keys.count {
            if scan.everything {
                // A row deleted since the scan read its key was found by it already.
                let found = Set(operations.map(\.id))
                operations += try deletedByBase(in: db).filter { !found.contains($0.id) }
            }
            scan.isFinished = true
        }
        try leaveInFlightCounters(out: &operations, in: db)
        return try operations.filter { try fitsTheModel($0, in: db) }
    }

    /// Every change to push, in one pass (counting them, say).
    func pending(everything: Bool = false, in db: Database) throws -> [Operation] {
        var scan = try scan(everything: everything, in: db)
        return try pass(of: &scan, in: db)
    }

    /// The deletes of shared objects whose rows are gone, found by their bases.
    private func deletedByBase(in db: Database) throws -> [Operation] {
        var operations: [Operation] = []
        for entity in store.model.entities {
            let ids = try Data.fetchAll(db, sql: """
                SELECT b.id FROM \(SharingState.baseTable) b LEFT JOIN \(GlobalIDs.table) g ON g.id = b.id
                WHERE b.entity = ? AND b."row" IS NOT NULL
                  AND (g.rowKey IS NULL OR NOT EXISTS (SELECT 1 FROM \(entity.name.quotedDatabaseIdentifier) t WHERE t.Z_PK = g.rowKey))
                """, arguments: [entity.name])
            for id in ids.compactMap(UUID.init(bytes:)) {
                let base = try SharingState.base(of: id, entity: entity, model: store.model, in: db)
                operations.append(Operation(entity: entity, id: id, kind: .delete, values: [:], changedKeys: [], base: base?.values))
            }
        }
        return operations
    }

    /// The row keys of the objects that may have changed since the history token `pushed`,
    /// by entity, and whether they are every object (scanning `everything`: joining, or the
    /// history pruned past the token).
    private func candidates(everything: Bool, since pushed: Int64, excluding excluded: [ClosedRange<Int64>],
                            in db: Database) throws -> (keys: [String: Set<Int64>], everything: Bool) {
        var candidates: [String: Set<Int64>] = [:]
        var scanAll = everything
        if !scanAll {
            do {
                // Every object written, an insert then a delete included: the insert may have
                // gone out in a push whose end this store did not record (the process killed).
                for id in try store.objectsWritten(since: pushed, excluding: excluded, in: db).objects {
                    candidates[id.entityName, default: []].insert(id.rowKey)
                }
            } catch is HistoryGap {
                scanAll = true
            }
        }
        if scanAll {
            for entity in store.model.entities {
                candidates[entity.name, default: []].formUnion(try rows.allKeys(of: entity, in: db))
            }
        }
        return (candidates, scanAll)
    }

    /// What to send for the object `key` of `entity`, whose row holds `values` (nil: gone)
    /// and whose base is `base`:
    /// an insert (never shared), an update of the fields that differ from its base (a
    /// counter as what it added), a delete; nil when nothing changed.
    private func operation(of entity: EntityDescription, key: Int64, values: [String: Value]?, existingID: UUID?,
                           base: SharingState.Base?, in db: Database) throws -> Operation? {
        guard let values else {
            guard let existingID, let baseValues = base?.values else { return nil }
            return Operation(entity: entity, id: existingID, kind: .delete, values: [:], changedKeys: [], base: baseValues)
        }
        guard let base else {
            let id = try existingID ?? GlobalIDs.assignedGlobalID(entity: entity.name, rowKey: key, in: db)
            return Operation(entity: entity, id: id, kind: .insert, values: values, changedKeys: values.keys.sorted(), base: nil)
        }
        // A tombstone with a row: the server deleted it after this store named it (the merge
        // deletes such rows): nothing to send.
        guard let baseValues = base.values else { return nil }
        var changed = values.keys.filter { values[$0] != (baseValues[$0] ?? .null) }.sorted()
        guard !changed.isEmpty else { return nil }
        // A counter goes as what it added, never compared: concurrent taps add up.
        var deltas: [String: Value] = [:]
        for key in changed where entity.attribute(named: key)?.isCounter == true {
            deltas[key] = (values[key] ?? .null).subtracting(baseValues[key] ?? .null)
        }
        changed.removeAll { deltas[$0] != nil }
        return Operation(entity: entity, id: existingID!, kind: .update, values: values, changedKeys: changed, base: baseValues,
                         baseVersion: base.version, counterDeltas: deltas)
    }

    /// What a push in flight (another process's on this file, sending now) adds is that
    /// push's to send, not this one's: taken out of `operations`.
    private func leaveInFlightCounters(out operations: inout [Operation], in db: Database) throws {
        guard let inFlight = try SharingState.pushInFlight(in: db) else { return }
        for index in operations.indices where inFlight.deltas[operations[index].id] != nil {
            let sent = inFlight.deltas(of: operations[index].id, entity: operations[index].entity)
            for (key, delta) in sent {
                let rest = (operations[index].counterDeltas[key] ?? .null).subtracting(delta)
                operations[index].counterDeltas[key] = rest == .integer(0) || rest == .double(0) ? nil : rest
            }
        }
        operations.removeAll { $0.kind == .update && $0.changedKeys.isEmpty && $0.counterDeltas.isEmpty }
    }

    /// Whether the values `operation` sends fit the model and the limits a server row is
    /// read with; a desktop never pushes a value its model refuses (a row written with the
    /// `sqlite3` shell can hold one). One that does not is recorded as rejected, not sent.
    private func fitsTheModel(_ operation: Operation, in db: Database) throws -> Bool {
        guard operation.kind != .delete else { return true }
        for key in operation.changedKeys + operation.counterDeltas.keys.sorted() {
            guard let attribute = operation.entity.attribute(named: key), let value = operation.values[key],
                  let failure = attribute.sharingFailure(of: value, limits: limits) else { continue }
            try SharingState.record(RejectedChange(direction: .notPushed, entity: operation.entity.name, globalID: operation.id, version: 0,
                                                   key: key, reason: "\(key) \(failure)"), in: db)
            return false
        }
        return true
    }
}
