import Foundation
import GRDB
import ObjectStore

/// Takes server rows into the store, inside one local transaction: what a pull, a resync and
/// the end of a push do.
///
/// Each object's server row is merged field by field against its base (the server row this
/// store took last) and the local row:
///
/// | local vs base | server vs base | result |
/// |---|---|---|
/// | same | any | the server's value |
/// | changed | same | the local value (an edit not pushed yet) |
/// | changed | changed, to the local value | unchanged |
/// | changed | changed, to another value | a conflict: `MergePolicy` decides, and it is recorded |
///
/// (but for a counter, `AttributeMerge.add`, which takes the server's value plus what this
/// store added since its base, `server + (local - base)`, and never conflicts), and the
/// server row becomes the base. A change whose version is not above the base's is
/// skipped: it is older than what the store took (versions follow commit order, the log's
/// order need not), or it is this store's own push coming back.
///
/// Nothing from the server is trusted: a change that does not fit the model (see
/// ``problem(with:entity:inserting:in:)``) is not taken and is recorded as a ``RejectedChange``; its
/// base stays, so that a later version that fits is taken as usual.
struct ServerRowMerge {
    let model: Model
    let policy: MergePolicy
    let limits: SharingLimits
    let rows: LocalRows
    /// Objects a relationship may name besides those this store has: the other objects of
    /// the page or snapshot being taken, and those the server was asked about and has.
    var arriving: Set<UUID> = []
    /// This store's push that adds to counters and whose end it has not taken yet, and the
    /// version from which the server's rows hold it (``ServerChangeLog/versions(ofPush:on:logger:)``):
    /// a change at that version or later, pulled before the push's end was taken (by this
    /// process or another on the file), counts the push's additions in its base, so that
    /// they are not added twice. The objects taken so leave the record at ``finish(in:)``.
    var pushInFlight: SharingState.PushInFlight?
    var pushVersions: [UUID: Int64] = [:]
    private var tookFromPush: Set<UUID> = []
    /// Conflicts found so far.
    private(set) var conflicts: [SharingConflict] = []
    /// Changes refused so far.
    private(set) var rejected: [RejectedChange] = []
    /// Objects inserted, whose waiting references are set at ``finish(in:)``.
    private var inserted: [(id: UUID, key: Int64)] = []
    /// What ``lookUp(_:in:)`` read for a page's objects at once, each used by the object's
    /// first change of the page (a later one reads the store, which holds the first's writes).
    private var known = Known()

    /// The bases, global IDs and local rows of a page's objects, read a few hundred a
    /// statement: a pull of a thousand changes otherwise asked the store four questions a
    /// change, and the statements cost more than SQLite's work.
    private struct Known {
        /// The objects looked up and not taken yet.
        var objects: Set<UUID> = []
        /// Their bases as stored: the version and the row's JSON (nil for a tombstone).
        var bases: [UUID: (version: Int64, json: String?)] = [:]
        /// Their local objects, for those that have a global ID.
        var local: [UUID: ObjectID] = [:]
        /// The values of those local objects whose rows exist.
        var rows: [ObjectID: [String: Value]] = [:]
    }

    /// Bases and global IDs taken and not written yet: written a few hundred a statement
    /// (``writePending(in:)``) before anything reads either from the store, and at
    /// ``finish(in:)``. A join writes one of each for every object of the server.
    private var pendingBases: [(id: UUID, entity: String, base: SharingState.Base)] = []
    private var pendingIDs: [String: [(rowKey: Int64, id: UUID)]] = [:]
    /// New objects taken and not written yet, by entity: rows with every column and no
    /// relationship to resolve (a join's, a pull's new objects), written a hundred a
    /// statement (``LocalRows/insert(_:rows:in:)``) before their global IDs, when the bases
    /// and IDs are. A join inserts a row for every object of the server: a statement a row
    /// took the writer about a third more time for a 200,000-row join than a hundred rows a
    /// statement (its processor time, four joins each, alternating in one process).
    private var pendingInserts: [String: [(id: UUID, values: [String: Value])]] = [:]
    /// Rows merged and not written yet, by entity: written a hundred a statement
    /// (``LocalRows/update(_:rows:in:)``) when the rest is, before anything reads a row
    /// (an object changes at most once between two writes: its second change in a page
    /// is not looked up with the page, and writes what is pending first).
    private var pendingUpdates: [String: [LocalRows.RowUpdate]] = [:]

    init(model: Model, policy: MergePolicy, limits: SharingLimits) {
        self.model = model
        self.policy = policy
        self.limits = limits
        rows = LocalRows(model: model)
    }

    /// Takes one change of the server's log (or a row of a snapshot, as an update at its
    /// version), unless it does not fit the model: then it is recorded as rejected.
    ///
    /// - Parameter assumed: The base to merge against instead of the stored one: after a
    ///   push, the stored base with the values the push sent.
    mutating func take(_ change: ServerChange, assumingBase assumed: [String: Value]? = nil, in db: Database) throws {
        guard let entity = model.entity(named: change.entity), change.problem == nil else { return reject(change, change.problem) }
        // Looked up with its page: what it has comes from there (nothing, for a join's
        // every object).
        let isKnown = known.objects.remove(change.object) != nil
        // What follows reads bases or global IDs from the store: an object's second change
        // of the page, and the relationships of a change (their destinations' IDs).
        if !isKnown || !rows.foreignKeys(of: entity).isEmpty { try writePending(in: db) }
        let base = try isKnown ? known.bases[change.object].map { try SharingState.base(version: $0.version, json: $0.json, entity: entity, model: model) }
            : SharingState.base(of: change.object, entity: entity, model: model, in: db)
        // A hide comes at the version the object has (its owner's change is one this role
        // does not see): only an older one is skipped.
        if let base, change.version < base.version || (change.version == base.version && change.kind != .hide) { return }
        let object = try isKnown ? known.local[change.object] : GlobalIDs.object(for: change.object, in: db)
        let local = object.flatMap { $0.entityName == entity.name ? $0.rowKey : nil }
        // The local row's values, when it exists.
        let current: [String: Value]? = try local.flatMap { key in
            try isKnown ? known.rows[ObjectID(entityName: entity.name, rowKey: key)] : rows.values(of: entity, keys: [key], in: db)[key]
        }
        let localExists = current != nil
        if !change.kind.removes, let problem = try problem(with: change, entity: entity, inserting: !localExists, in: db) {
            return reject(change, problem)
        }
        switch change.kind {
        case .delete, .hide:
            if let local, localExists {
                if let baseValues = base?.values, let current {
                    // Taps on a counter are no edit a delete loses: it has no value left to add to.
                    let edited = current.keys.filter { current[$0] != (baseValues[$0] ?? .null) && entity.attribute(named: $0)?.isCounter != true }.sorted()
                    if !edited.isEmpty {
                        let what = change.kind == .hide ? "no longer shared with this desktop's role (its owner unshared it, or it moved under an object this role does not see)"
                            : "deleted on another desktop"
                        record(SharingConflict(entity: entity.name, globalID: change.object, objectID: ObjectID(entityName: entity.name, rowKey: local),
                                               keys: edited, details: "\(what) while \(edited.joined(separator: ", ")) had edits here",
                                               resolution: .deleted))
                    }
                }
                try rows.delete(entity, key: local, in: db)
            }
            // A hidden object's tombstone is at version 0: if it is shared again, its row comes
            // back at the version it has, which may be the one this store took last.
            pendingBases.append((change.object, entity.name, .init(version: change.kind == .hide ? 0 : change.version, values: nil)))
        case .insert, .update:
            if let local, localExists {
                var mergeBase = assumed ?? base?.values
                if let push = pushInFlight, let pushed = pushVersions[change.object], change.version >= pushed,
                   !tookFromPush.contains(change.object) {
                    tookFromPush.insert(change.object)
                    for (key, delta) in push.deltas(of: change.object, entity: entity) {
                        let was = mergeBase?[key] ?? .null
                        mergeBase?[key] = was.adding(delta)
                    }
                }
                try merge(change, into: local, current: current ?? [:], entity: entity, base: mergeBase, in: db)
            } else if local != nil, base == nil || base?.values != nil {
                // Deleted here, not pushed yet (perhaps before the push of its insert came
                // back): the delete goes out with the next push, against this base.
            } else if rows.holdsEveryColumn(change.values, of: entity) {
                pendingInserts[entity.name, default: []].append((change.object, change.values))
            } else {
                let key = try rows.insert(entity, values: change.values, in: db)
                pendingIDs[entity.name, default: []].append((key, change.object))
                inserted.append((change.object, key))
            }
            if let baseValues = base?.values, !baseValues.keys.allSatisfy({ change.values[$0] != nil }) {
                // A column dropped on the server: the base keeps the fields the row lacks.
                pendingBases.append((change.object, entity.name, .init(version: change.version, values: baseValues.merging(change.values) { $1 })))
            } else {
                // The server's row whole, with its JSON as pulled or made with the page.
                pendingBases.append((change.object, entity.name, .init(version: change.version, values: change.values, json: change.valuesJSON)))
            }
        }
    }

    /// Merges `change` into the row `key`, whose values are `current`.
    private mutating func merge(_ change: ServerChange, into key: Int64, current: [String: Value], entity: EntityDescription,
                                base: [String: Value]?, in db: Database) throws {
        // No base: this store's own insert whose push was not taken back (the process
        // ended in between); its values are this store's edits.
        guard let base else { return }
        var writes: [String: Value] = [:]
        var conflicting: [(key: String, base: Value, server: Value, local: Value)] = []
        for (name, server) in change.values {
            let mine = current[name] ?? .null
            let was = base[name] ?? .null
            // A counter: the server's value and what this store added to it since its base,
            // never a conflict.
            if entity.attribute(named: name)?.isCounter == true {
                let sum = server.adding(mine.subtracting(was))
                if sum != mine { writes[name] = sum }
                continue
            }
            guard mine != server else { continue }
            if mine == was {
                writes[name] = server
            } else if server == was {
                continue
            } else {
                conflicting.append((name, was, server, mine))
                if policy != .editWins { writes[name] = server }
            }
        }
        if let update = try rows.rowUpdate(entity, key: key, values: writes, in: db) { pendingUpdates[entity.name, default: []].append(update) }
        if !conflicting.isEmpty {
            conflicting.sort { $0.key < $1.key }
            let details = conflicting.map { "\($0.key) is \($0.server) on the server (it was \($0.base) when the edit here began, which set \($0.local))" }
            record(SharingConflict(entity: entity.name, globalID: change.object, objectID: ObjectID(entityName: entity.name, rowKey: key),
                                   keys: conflicting.map(\.key), details: details.joined(separator: "; "),
                                   resolution: policy == .editWins ? .keptLocal : .tookServer))
        }
    }

    private mutating func record(_ conflict: SharingConflict) {
        conflicts.append(conflict)
    }

    /// Reads, in a few statements, the bases, global IDs and local rows of the objects of
    /// `changes`, so that ``take(_:assumingBase:in:)`` does not read them one by one. Call
    /// it before taking a page of changes (a pull's, a snapshot's, a push's end).
    mutating func lookUp(_ changes: [ServerChange], in db: Database) throws {
        try writePending(in: db)
        known = Known()
        let all = Set(changes.map(\.object))
        (known.bases, known.local) = try SharingState.storedBasesAndObjects(of: all, in: db)
        var keys: [String: [Int64]] = [:]
        for object in known.local.values { keys[object.entityName, default: []].append(object.rowKey) }
        for (entityName, entityKeys) in keys {
            guard let entity = model.entity(named: entityName) else { continue }
            for (key, values) in try rows.values(of: entity, keys: entityKeys, in: db) {
                known.rows[ObjectID(entityName: entityName, rowKey: key)] = values
            }
        }
        known.objects = all
    }

    /// Writes the rows merged, new objects, bases and global IDs taken so far.
    private mutating func writePending(in db: Database) throws {
        guard !pendingBases.isEmpty || !pendingIDs.isEmpty || !pendingInserts.isEmpty || !pendingUpdates.isEmpty else { return }
        for (entityName, updates) in pendingUpdates {
            guard let entity = model.entity(named: entityName) else { continue }
            try rows.update(entity, rows: updates, in: db)
        }
        pendingUpdates = [:]
        for (entityName, objects) in pendingInserts {
            guard let entity = model.entity(named: entityName) else { continue }
            let keys = try rows.insert(entity, rows: objects.map(\.values), in: db)
            for (object, key) in zip(objects, keys) {
                pendingIDs[entityName, default: []].append((key, object.id))
                inserted.append((object.id, key))
            }
        }
        pendingInserts = [:]
        for (entity, ids) in pendingIDs { try GlobalIDs.map(ids, to: entity, in: db) }
        try SharingState.setBases(pendingBases, in: db)
        pendingIDs = [:]
        pendingBases = []
    }

    /// What keeps the model from taking an insert or update, or nil when it fits: a value
    /// over ``SharingLimits/valueBytes`` or against the model's rules (the ones a save
    /// checks: required, lengths, ranges), a required attribute an insert lacks, or a to-one
    /// relationship to an object that neither this store, the page being taken nor the
    /// server has.
    func problem(with change: ServerChange, entity: EntityDescription, inserting: Bool, in db: Database) throws -> RowImage.Unreadable? {
        for attribute in entity.attributes {
            guard let value = change.values[attribute.name] else {
                if inserting && !attribute.isOptional && attribute.defaultValue.isNull { return .init(key: attribute.name, reason: "is missing from the row") }
                continue
            }
            if let failure = attribute.sharingFailure(of: value, limits: limits) { return .init(key: attribute.name, reason: failure) }
        }
        for relationship in rows.foreignKeys(of: entity) {
            switch change.values[relationship.name] {
            case nil: continue
            case .string(let text)?:
                guard let id = UUID(uuidString: text), !arriving.contains(id) else { continue }
                if let object = try GlobalIDs.object(for: id, in: db), object.entityName == relationship.destinationEntity,
                   let destination = model.entity(named: object.entityName), try rows.exists(destination, key: object.rowKey, in: db) { continue }
                return .init(key: relationship.name, reason: "names the \(relationship.destinationEntity) \(id.uuidString.lowercased()), which does not exist")
            case _? where !relationship.isOptional:
                return .init(key: relationship.name, reason: "is required; the row names no \(relationship.destinationEntity)")
            default: continue
            }
        }
        return nil
    }

    private mutating func reject(_ change: ServerChange, _ problem: RowImage.Unreadable?) {
        let reason = problem?.description ?? "this model has no entity \(change.entity)"
        rejected.append(RejectedChange(direction: .pulled, entity: change.entity, globalID: change.object, version: change.version,
                                       key: problem?.key, reason: reason))
    }

    /// Sets the relationships that waited for the objects inserted, and records the
    /// conflicts found and the changes refused.
    mutating func finish(in db: Database) throws {
        try writePending(in: db)
        // Most pages have no reference waiting for an object (one arrived before its target).
        if !inserted.isEmpty, try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(SharingState.referenceTable))") == true {
            for (id, key) in inserted { try rows.resolveReferences(to: id, key: key, in: db) }
        }
        inserted = []
        known = Known()
        for conflict in conflicts { try SharingState.record(conflict, in: db) }
        for change in rejected { try SharingState.record(change, in: db) }
        if var push = pushInFlight, !tookFromPush.isEmpty {
            for object in tookFromPush { push.deltas[object] = nil; push.entities[object] = nil }
            try SharingState.setPushInFlight(push.deltas.isEmpty ? nil : push, in: db)
        }
    }
}
