import Foundation
import GRDB
import Logging
import ObjectStore
import PostgresNIO

extension SharingEngine {

    /// Pushes every local change: a push of counters whose end was lost first, under its
    /// identity; then the counters that changed (up to 1,000 objects, recorded as in flight
    /// in the transaction that reads them, see ``SharingState/PushInFlight``), and every
    /// other change, 1,000 objects a server transaction.
    ///
    /// The changes are read in passes of ``passLimit`` objects (see ``Outbox/Scan``), each
    /// pushed before the scan ends: a store's first push of a million objects commits
    /// piece by piece, each piece progress that a round given up, or a process killed,
    /// does not lose.
    ///
    /// The store and the server work at the same time: while a pass's pieces are sent, the
    /// store reads the next pass and takes in what the pieces before left (their bases, up
    /// to ``takesInFlight`` pieces behind). The scan's end
    /// (``SharingState/Key/pushedThrough``) is written only once every piece is taken in.
    ///
    /// - Parameter known: Where the push starts, when the round's pull read it in its last
    ///   write (see ``PushStart``); nil to read it.
    func pushAll(on connection: PostgresConnection, from known: PushStart? = nil) async throws {
        var known = known
        var scans = 0
        var scan: Outbox.Scan?
        var deferred = false
        var sentInScan = 0
        // The next pass of the scan, read while this one is sent; what the last piece sent
        // left, being taken in while the next is sent.
        var readAhead: Task<Pass, Error>?
        var taking: [Task<Void, Error>] = []
        do {
            while true {
                let pass: Pass
                if let readAhead {
                    pass = try await readAhead.value
                } else {
                    // In flight here: lost (this process was killed before its end) or being
                    // sent by another process on the file; sending it again is safe either
                    // way. (Not looked for before a pass read ahead: that pass was read after
                    // the pass before took its counters in, and any it recorded are its own.)
                    let start = try known ?? readNow { db in try PushStart(in: db) }
                    known = nil
                    let (lost, pushed, current) = (start.inFlight, start.pushedThrough, start.current)
                    if let lost {
                        try await push(replaying: lost, on: connection)
                    } else if scan == nil, let pushed, pushed >= current {
                        // Nothing written since the last push (a pull moves the pushed token
                        // over the rows it took, see `passOverOwnWrites`): no scan to make.
                        sentHistory(through: current)
                        pending = 0
                        return
                    }
                    pass = try await nextPass(of: scan)
                }
                let (operations, next, inFlight) = pass
                scan = next
                readAhead = nil
                madeProgress()
                pending = operations.count + next.remaining
                // Counters go only under the identity of the push recorded for them; the
                // others wait for the next scan.
                let counted = operations.filter { inFlight?.deltas[$0.id] != nil }
                var others = operations.filter { inFlight?.deltas[$0.id] == nil }
                deferred = deferred || others.contains { !$0.counterDeltas.isEmpty }
                for index in others.indices { others[index].counterDeltas = [:] }
                others.removeAll { $0.kind == .update && $0.changedKeys.isEmpty }
                // A long push (more passes to come, or passes made) says how far it got.
                let total = sentInRound + operations.count + next.remaining
                let long = !next.isFinished || sentInRound > 0
                if let inFlight {
                    try await push(counted, identity: inFlight.id, on: connection)
                    sentInRound += counted.count
                }
                // Read once this pass's counters are taken in: the next pass can then record
                // its own (a pass finding a push of counters in flight leaves its counters
                // to the next scan).
                if !next.isFinished { readAhead = Task(executorPreference: executor) { try await self.nextPass(of: next) } }
                for chunk in stride(from: 0, to: others.count, by: 1000).map({ Array(others[$0..<min($0 + 1000, others.count)]) }) {
                    let sent = try await send(chunk, identity: nil, on: connection)
                    // (Pieces refused for permission were sent one by one, and counted so.)
                    if sent != nil { pending = max(0, pending - chunk.count) }
                    // Started before the others are waited for: a piece sent is taken in
                    // even when a take before it failed.
                    if let sent { taking.append(Task(executorPreference: executor) { try await self.take(sent, of: chunk, identity: nil) }) }
                    // Up to two pieces sent and not yet taken in: a take waits on the store's
                    // writer while it reads the next pass, and the next piece need not.
                    while taking.count > Self.takesInFlight { try await taking.removeFirst().value }
                    sentInRound += chunk.count
                    if long { report(SharingStatus.Transfer(direction: .sending, done: sentInRound, total: total)) }
                }
                sentInScan += operations.count
                guard next.isFinished else { continue }
                while !taking.isEmpty { try await taking.removeFirst().value }
                // Deferred counters go in the next scan; a few scans a round (the rest wait
                // for the next round), so that a delta the server never absorbs cannot spin here.
                scans += 1
                scan = nil
                if deferred {
                    deferred = false
                    if scans < 8 { continue } else { return }
                }
                let through = next.through
                try await write { db in
                    // Written only when it moved (most rounds, a pull woken by another desktop,
                    // have nothing to push), and only if no other round pushed further meanwhile.
                    if try SharingState.value(.pushedThrough, in: db) == nil || SharingState.pushedThrough(in: db) < through {
                        try SharingState.set(.pushedThrough, String(through), in: db)
                        try self.pruneHistory(in: db)
                    }
                }
                // What the store's history holds up to there is on the server: a commit
                // there (a take of this scan) needs no round.
                sentHistory(through: through)
                pending = 0
                if sentInScan == 0 { return }
                sentInScan = 0
            }
        } catch {
            // Nothing of the round goes on behind it: a pass read ahead is kept (its global
            // IDs; a push of counters it recorded is sent as lost by the next round), a
            // piece sent is taken in.
            _ = try? await readAhead?.value
            for take in taking { _ = try? await take.value }
            throw error
        }
    }

    /// A pass's operations, the scan moved past them, and the push of counters recorded for
    /// it (see ``nextPass(of:)``).
    private typealias Pass = ([Outbox.Operation], Outbox.Scan, SharingState.PushInFlight?)

    /// The next pass of `scan` (of a new scan when nil), its counters (up to 1,000 objects)
    /// recorded as in flight in the transaction that reads them, unless a push of counters
    /// is in flight already.
    private func nextPass(of scan: Outbox.Scan?) async throws -> Pass {
        let ownWrites = self.ownWrites
        let pass: Pass = try await write { db in
            var next = try scan ?? outbox.scan(everything: try SharingState.value(.pushedThrough, in: db) == nil, excluding: ownWrites, in: db)
            let operations = try outbox.pass(of: &next, limit: Self.passLimit, in: db)
            let counted = operations.filter { !$0.counterDeltas.isEmpty }.prefix(1000)
            guard !counted.isEmpty, try SharingState.pushInFlight(in: db) == nil else { return (operations, next, nil) }
            let inFlight = SharingState.PushInFlight(counted)
            try SharingState.setPushInFlight(inFlight, in: db)
            return (operations, next, inFlight)
        }
        if scan == nil { scanned(pass.1.keys.reduce(0) { $0 + $1.count }) }
        return pass
    }

    /// Moves the pushed token over a write transaction of this engine that began at history
    /// token `before` (a pulled page taken in), when everything between the pushed token and
    /// `before` is quiet: the engine's own or sent (``QuietHistory``, `quietThrough` its
    /// ``QuietHistory/through`` when the transaction began). Rows the engine took in hold
    /// the server's values, and the store had no edit left to push that they could keep, so
    /// the round's push need not scan them (a write transaction, and another to move the
    /// token, for every change pulled).
    nonisolated func passOverOwnWrites(from before: Int64, quietThrough: Int64, in db: Database) throws {
        guard try SharingState.value(.pushedThrough, in: db) != nil else { return }
        let pushed = try SharingState.pushedThrough(in: db)
        guard before <= max(pushed, quietThrough) else { return }
        let now = try PersistentStore.currentHistoryToken(in: db)
        if now > pushed { try SharingState.set(.pushedThrough, String(now), in: db) }
    }

    /// How many objects a pass of ``pushAll(on:)`` reads and pushes before the next.
    static let passLimit = 5000

    /// How many pieces ``pushAll(on:)`` may have sent and not taken in yet when it sends the
    /// next.
    static let takesInFlight = 2

    /// Sends `operations` in one server transaction and takes what they left into the store;
    /// a push with an `identity` (it adds to counters) is then no longer in flight.
    func push(_ operations: [Outbox.Operation], identity: UUID?, on connection: PostgresConnection) async throws {
        if let sent = try await send(operations, identity: identity, on: connection) {
            try await take(sent, of: operations, identity: identity)
            pending = max(0, pending - operations.count)
        }
    }

    /// What a push left on the server: its rows as they are now, the conflicts it settled,
    /// and the server transaction that wrote them.
    struct Sent: Sendable {
        var written: [ServerWriter.Written]
        var conflicts: [SharingConflict]
        var transaction: UInt64?
    }

    /// Sends `operations` in one server transaction; ``take(_:of:identity:)`` then takes what
    /// they left into the store. Nil when the server's row-level security refused some of
    /// them: then each was sent on its own, and taken in.
    ///
    /// Row-level security refuses rows, not pushes: when the server refuses a push with
    /// changes of an entity with an ``Ownership`` for permission, each change is sent on its
    /// own, and those refused again are undone here (see ``refuse(_:because:on:)``) while
    /// the others go through.
    private func send(_ operations: [Outbox.Operation], identity: UUID?, on connection: PostgresConnection) async throws -> Sent? {
        do {
            let (written, conflicts, transaction) = try await connection.withTransaction(logger: logger) { connection in
                let (written, conflicts) = try await self.writer.push(operations, identity: identity, on: connection)
                return (written, conflicts, try await self.log.currentTransaction(on: connection, logger: self.logger))
            }
            madeProgress()
            return Sent(written: written, conflicts: conflicts, transaction: transaction)
        } catch where identity == nil && serverError(error)?.sqlState == Self.insufficientPrivilege
                        && operations.contains(where: { $0.entity.ownership != nil }) {
            guard operations.count == 1, let operation = operations.first, operation.entity.ownership != nil else {
                // In the order the server needs: an item's list before the item.
                for operation in writer.ordered(operations) { try await push([operation], identity: nil, on: connection) }
                return nil
            }
            try await refuse(operation, because: serverError(error)?.message ?? "permission denied", on: connection)
            return nil
        }
    }

    /// Takes what a push of `operations` left (``Sent``) into the store; a push with an
    /// `identity` is then no longer in flight.
    private func take(_ sent: Sent, of operations: [Outbox.Operation], identity: UUID?) async throws {
        try await write { db in
            // A push of counters whose end was taken already (its record gone) left rows
            // to take like any pulled change: its deltas are in the bases.
            let taken = try identity.map { try SharingState.pushInFlight(in: db)?.id != $0 } ?? false
            try takeWritten(sent.written, sent: taken ? [] : operations, conflicts: sent.conflicts, in: db)
            if identity != nil, !taken { try SharingState.setPushInFlight(nil, in: db) }
            // The store holds what the push left: the pull need not bring its changes back.
            if let transaction = sent.transaction { try SharingState.addTakenPush(transaction, in: db) }
        }
        madeProgress()
    }

    /// Sends again a push of counters whose end the store did not take (the process was
    /// killed, or the connection dropped, in between): the server finds its identity if it
    /// had it, and adds nothing twice.
    func push(replaying lost: SharingState.PushInFlight, on connection: PostgresConnection) async throws {
        let operations = try await store.database.read { db in
            try lost.deltas.keys.sorted().compactMap { id -> Outbox.Operation? in
                guard let entity = lost.entities[id].flatMap(self.model.entity(named:)),
                      let base = try SharingState.base(of: id, entity: entity, model: self.model, in: db)?.values else { return nil }
                return Outbox.Operation(entity: entity, id: id, kind: .update, values: base, changedKeys: [], base: base,
                                        counterDeltas: lost.deltas(of: id, entity: entity))
            }
        }
        logger.info("sharing: sending again push \(lost.id) of \(operations.count) counters, whose end was not recorded")
        try await push(operations, identity: lost.id, on: connection)
    }

    /// Merges the server rows a push left into the store, taking the values sent as the
    /// base of the fields sent (an edit made here since then stays an edit), and records the
    /// conflicts the push settled.
    nonisolated func takeWritten(_ written: [ServerWriter.Written], sent operations: [Outbox.Operation], conflicts: [SharingConflict], in db: Database) throws {
        let sentByID = Dictionary(operations.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        var merge = ServerRowMerge(model: model, policy: sharing.mergePolicy, limits: sharing.limits)
        merge.arriving = Set(written.map(\.id))
        // What a row was pushed against: the base it was read with, and the values sent
        // that the server took.
        func assumedBase(of row: ServerWriter.Written, sent operation: Outbox.Operation) -> [String: Value] {
            var assumed = operation.base ?? [:]
            for key in row.sentKeys(of: operation) { assumed[key] = operation.values[key] }
            return assumed
        }
        // Rows the server holds as sent: a first push's every insert, and an update no other
        // desktop wrote in between (most of a busy desktop's pushes). Merged, such a row
        // writes nothing to the local row (it holds the row already, or an edit made since,
        // which stays one) and has no conflict, and it holds nothing the model has not
        // checked (the base taken and the values saved here): its base is all there is to
        // take. Their bases are read and written together, not merged one by one.
        let asSent = written.filter { row in
            guard let operation = sentByID[row.id], let values = row.values else { return false }
            switch operation.kind {
            case .insert: return values == operation.values
            case .update: return operation.counterDeltas.isEmpty && values == assumedBase(of: row, sent: operation)
            case .delete: return false
            }
        }
        try SharingState.setBases(asSent.map { ($0.id, $0.entity, SharingState.Base(version: $0.version, values: $0.values)) }, keepingNewer: true, in: db)
        let takenAsSent = Set(asSent.map(\.id))
        var changes: [(change: ServerChange, assumed: [String: Value]?)] = []
        for row in written where !takenAsSent.contains(row.id) {
            let change = ServerChange(cursor: .start, entity: row.entity, object: row.id, kind: row.values == nil ? .delete : .update,
                                      version: row.values == nil ? (row.version == 0 ? .max : row.version) : row.version,
                                      changedProperties: [], values: row.values ?? [:])
            var assumed: [String: Value]?
            if let operation = sentByID[row.id], operation.kind != .delete {
                assumed = assumedBase(of: row, sent: operation)
                // What the push added is this store's: taken into the base as it is now (a pull
                // by another process on the file may have moved it since the push was read),
                // not added again.
                if !operation.counterDeltas.isEmpty {
                    let now = try SharingState.base(of: row.id, entity: operation.entity, model: model, in: db)?.values ?? operation.base ?? [:]
                    for (key, delta) in operation.counterDeltas { assumed![key] = (now[key] ?? .null).adding(delta) }
                }
            }
            changes.append((change, assumed))
        }
        // Their bases, global IDs and rows read together, not one by one.
        try merge.lookUp(changes.map(\.change), in: db)
        for (change, assumed) in changes { try merge.take(change, assumingBase: assumed, in: db) }
        try merge.finish(in: db)
        for conflict in conflicts { try SharingState.record(conflict, in: db) }
    }

    /// Undoes a change that the server's row-level security refused, and records it as a
    /// ``RejectedChange`` (``RejectedChange/Direction/refused``): the object takes the row the
    /// server has, field by field over what this store holds (a delete is undone), or, when
    /// this role does not see it on the server, leaves the store as a hidden object does.
    /// Its other edits would be refused again; the server's is what every desktop agrees on.
    func refuse(_ operation: Outbox.Operation, because message: String, on connection: PostgresConnection) async throws {
        let row = try await writer.rows(of: operation.entity, ids: [operation.id], on: connection).first
        logger.warning("sharing: the server refused a change of \(operation.entity.name) \(operation.id) (\(message)); it is undone in this store")
        try await write { db in
            var merge = ServerRowMerge(model: model, policy: .error, limits: sharing.limits)
            let rows = LocalRows(model: model)
            let local = try GlobalIDs.object(for: operation.id, in: db)
            let current = try local.flatMap { try rows.values(of: operation.entity, keys: [$0.rowKey], in: db)[$0.rowKey] }
            // Forgotten first, so that the server's row is taken even at the version taken last.
            try SharingState.setBase(.init(version: 0, values: nil), of: operation.id, entity: operation.entity.name, in: db)
            if let row, let values = row.values {
                merge.arriving = [operation.id]
                try merge.take(ServerChange(cursor: .start, entity: row.entity, object: row.id, kind: .update, version: row.version,
                                            changedProperties: [], values: values), assumingBase: current, in: db)
            } else {
                try merge.take(ServerChange(cursor: .start, entity: operation.entity.name, object: operation.id, kind: .hide, version: 0,
                                            changedProperties: [], values: [:]), in: db)
            }
            try merge.finish(in: db)
            try SharingState.record(RejectedChange(direction: .refused, entity: operation.entity.name, globalID: operation.id,
                                                   objectID: local, version: row?.version ?? 0, key: nil,
                                                   reason: "\(message); this store took the server's row back"), in: db)
        }
        pending = max(0, pending - 1)
        madeProgress()
    }

    /// How many objects have changes to push (shown while offline).
    func countPending() async throws -> Int {
        try await write { db in
            guard try SharingState.value(.serverIdentity, in: db) != nil else {
                // Not joined yet: every object may go.
                return try model.entities.reduce(0) { $0 + (try Int.fetchOne(db, sql: "SELECT count(*) FROM \($1.name.quotedDatabaseIdentifier)") ?? 0) }
            }
            return try outbox.pending(everything: try SharingState.value(.pushedThrough, in: db) == nil, in: db).count
        }
    }
}

// MARK: Roles that may not write

/// Whether a desktop's changes are sent: not while its role may only read, or after the
/// server refused a push for permission, until the server is asked again.
struct PushPermission {
    /// Why changes are not sent; nil when they are.
    private(set) var readOnlyReason: String?
    /// Since when, to ask the server again after `SharingEngine.refusalRetryDelay` (a grant
    /// or a policy may have changed).
    private(set) var since: ContinuousClock.Instant?

    mutating func refuse(_ reason: String) {
        readOnlyReason = reason
        since = .now
    }

    mutating func allow() {
        readOnlyReason = nil
        since = nil
    }

    /// Asked again: not before another `delay`.
    mutating func asked() { since = .now }
}

extension SharingEngine {
    /// Sends nothing more for `reason` until the server is asked again (logged once).
    func refusePushes(_ reason: String, level: Logger.Level = .error) {
        permission.refuse(reason)
        logOnce(reason, level: level)
    }

    /// Whether this connection may push: not while read-only, but after
    /// ``refusalRetryDelay`` the server is asked again.
    func mayPush(on connection: PostgresConnection) async throws -> Bool {
        guard let since = permission.since else { return true }
        guard ContinuousClock.now - since >= Self.refusalRetryDelay else { return false }
        permission.asked()
        guard try await mayWrite(on: connection) else { return false }
        permission.allow()
        return true
    }

    /// PostgreSQL's `insufficient_privilege`.
    static let insufficientPrivilege = "42501"

    /// Pushes what waits, unless this desktop's role may not write: then its changes stay in
    /// the store, counted as pending. A push the server refuses for permission makes the
    /// connection read-only, said once, instead of failing every round; the server is asked
    /// again after ``refusalRetryDelay``.
    func pushUnlessReadOnly(on connection: PostgresConnection, from known: PushStart? = nil) async throws {
        guard try await mayPush(on: connection) else {
            pending = try await countPending()
            return
        }
        do {
            try await pushAll(on: connection, from: known)
        } catch where serverError(error)?.sqlState == Self.insufficientPrivilege {
            let message = serverError(error)?.message ?? "permission denied"
            refusePushes("the server refused this desktop's changes (\(message)); they stay in this store")
            pending = try await countPending()
        }
    }

    /// Whether the role may insert, update and delete the rows of every entity's table.
    func mayWrite(on connection: PostgresConnection) async throws -> Bool {
        for entity in model.entities {
            let table = ServerNames.quoted(entity.name)
            let rows = try await connection.query("""
                SELECT has_table_privilege('\(unescaped: table)', 'INSERT')
                   AND has_table_privilege('\(unescaped: table)', 'UPDATE')
                   AND has_table_privilege('\(unescaped: table)', 'DELETE')
                """, logger: logger)
            for try await may in rows.decode(Bool.self) where !may { return false }
        }
        return true
    }
}

/// What a push starts from: the push in flight, if any (lost when this process was killed
/// before its end), the history token the last push sent through (nil before the first),
/// and the history's newest token.
///
/// A round's pull reads it at the end of the last page it takes in, in the same write
/// transaction, and hands it to the push: the store is not read again in between. Only a
/// round records or ends a push, and no other round runs meanwhile (``RoundLock``), so the
/// first two cannot change in between. A local save committed in between leaves `current`
/// behind: this push does not send it, and its commit wakes the next round, which does (as
/// for a save that commits while the push is sent).
struct PushStart: Sendable {
    var inFlight: SharingState.PushInFlight?
    var pushedThrough: Int64?
    var current: Int64

    init(in db: Database) throws {
        inFlight = try SharingState.pushInFlight(in: db)
        pushedThrough = try SharingState.value(.pushedThrough, in: db).map { Int64($0) ?? 0 }
        current = try PersistentStore.currentHistoryToken(in: db)
    }
}
