import Foundation
import Logging
import ObjectStore
import PostgresNIO

/// Reads the server's change log with a commit-safe cursor.
///
/// Sequence numbers and transaction IDs are handed out when a row is written, not when its
/// transaction commits: a transaction that wrote change 7 may commit after another wrote
/// and committed change 8. A reader that had read up to 8 and went on from `seq > 8`
/// would never see 7. ``pull(after:limit:skipping:of:on:logger:)`` therefore reads only
/// changes of transactions older than the oldest one still running
/// (`txid < pg_snapshot_xmin(pg_current_snapshot())`): every such transaction has ended, its
/// changes are all visible or were rolled back, and any change written later belongs to a
/// newer transaction, so it sorts after the cursor. Changes of a transaction that is still
/// running, or that began before one still running, wait for the next pull.
///
/// A pull returns whole transactions: it stops at a transaction's end, even past `limit`,
/// so that a reader can apply each page in one local transaction of its own.
///
/// ## Topics
/// - ``init(model:limits:)``
/// - ``pull(after:limit:skipping:of:on:logger:)``
/// - ``Page``
package struct ServerChangeLog: Sendable {
    /// The changes of one pull, and the cursor to pull from next.
    package struct Page: Sendable, Hashable {
        /// The changes, in the log's order: by transaction ID, then sequence number.
        package var changes: [ServerChange]
        /// The last change's place, or the cursor pulled from when there was none; past the
        /// changes skipped when the page holds every other (see
        /// ``pull(after:limit:skipping:of:on:logger:)``).
        package var cursor: ServerCursor
        /// The pull's snapshot: the oldest transaction still running (every one below it
        /// ended) and the first one that had not ended; nil when the server did not say.
        package var horizon: Horizon?
        /// The newest change deleted from the log when the page was read (see
        /// ``prune(keepingLast:on:logger:)``), nil when none was: a page pulled after a cursor
        /// older than it misses changes, and the reader resyncs instead.
        package var prunedThrough: ServerCursor?
    }

    /// Where a snapshot of the server stands among its transactions (`pg_snapshot_xmin` and
    /// `pg_snapshot_xmax`): every transaction below `xmin` had ended; none at or above `xmax` had.
    package struct Horizon: Sendable, Hashable {
        package var xmin: UInt64
        package var xmax: UInt64
    }

    /// The model that tells the types of the values in the log.
    package let model: Model
    /// The largest row taken; a larger one is read as a change this model refuses.
    package let limits: SharingLimits

    package init(model: Model, limits: SharingLimits = SharingLimits()) {
        self.model = model
        self.limits = limits
    }

    /// The changes after `cursor` of every transaction that can no longer add any, in
    /// whole transactions: at least `limit` changes when there are that many, more when the
    /// last transaction goes on past them.
    ///
    /// The changes that the transactions `skipping` made to the entities `skippedEntities`
    /// are left out: a desktop's own pushes, whose rows it took from the push itself (see
    /// ``SharingEngine``). Only changes of entities without an ownership may be: a push that
    /// changes an owned row may also hide it, or the rows that follow it, from the pusher.
    /// A page that holds every other change there is then ends past the skipped ones too
    /// (its ``Page/cursor``), so that they are not read again.
    package func pull(after cursor: ServerCursor, limit: Int = 1000, skipping: [UInt64] = [], of skippedEntities: [String] = [],
                      on connection: PostgresConnection, logger: Logger) async throws -> Page {
        let statement = PullStatement(cursor: cursor, limit: limit, skipping: skippedEntities.isEmpty ? [] : skipping, skippedEntities: skippedEntities)
        var changes: [ServerChange] = []
        var horizon: Horizon?
        var prunedThrough: ServerCursor?
        var lastSkipped: ServerCursor?
        for try await (xmin, xmax, pruned, skippedTransaction, skippedSequence, txid, seq, entity, object, op, version, changed, row)
            in try await connection.execute(statement, logger: logger) {
            if horizon == nil, let xmin = UInt64(xmin), let xmax = UInt64(xmax) { horizon = Horizon(xmin: xmin, xmax: xmax) }
            if prunedThrough == nil, let pruned { prunedThrough = ServerCursor(pruned) }
            if lastSkipped == nil, let skippedTransaction = skippedTransaction.flatMap(UInt64.init), let skippedSequence {
                lastSkipped = ServerCursor(transaction: skippedTransaction, sequence: skippedSequence)
            }
            guard let txid, let seq, let entity, let object, let op, let version else { continue }
            guard let transaction = UInt64(txid) else {
                throw SharingError.unreadableChange(entity: entity, object: object, reason: "transaction \(txid)")
            }
            changes.append(change(at: ServerCursor(transaction: transaction, sequence: seq), entity: entity, object: object,
                                  operation: op, version: version, changed: changed ?? [], row: row))
        }
        var next = changes.last?.cursor ?? cursor
        // A page short of `limit` holds every change not skipped: none lies before the last skipped.
        if changes.count < limit, let lastSkipped, next < lastSkipped { next = lastSkipped }
        return Page(changes: changes, cursor: next, horizon: horizon, prunedThrough: prunedThrough)
    }

    /// The pull's query, prepared once a connection: every desktop runs it at each wake-up,
    /// and planning it anew each time cost the server about 0.7 ms, most of its processor
    /// time per change with twenty desktops.
    ///
    /// One statement, so one snapshot: the horizon and the rows agree. The horizon comes on
    /// one row of its own when there are no changes, with the last change skipped. The
    /// transactions skipped are read into a set once (`own`), not cast again for each row
    /// of the log: a pull past a 200,000-object push of one's own took a second longer so.
    /// The last change skipped matters only to a page short of `limit` (see
    /// ``pull(after:limit:skipping:of:on:logger:)``) and is looked for only then: looked for
    /// at every pull, it read each change after the cursor from the log's end back (the plan
    /// made for any arguments does not see that nothing is skipped), 35 to 80 ms a pull of a
    /// desktop 100,000 changes behind.
    private struct PullStatement: PostgresPreparedStatement {
        static let sql = """
            WITH horizon AS MATERIALIZED (
                SELECT pg_snapshot_xmin(s) AS xmin, pg_snapshot_xmax(s) AS xmax,
                    (SELECT value FROM \(ServerNames.quoted(ServerNames.state)) WHERE key = 'prunedThrough') AS pruned
                FROM pg_current_snapshot() s
            ),
            own AS MATERIALIZED (
                SELECT t::xid8 AS txid FROM unnest($4::text[]) t
            ),
            page AS (
                SELECT c.txid FROM \(ServerNames.quoted(ServerNames.changeLog)) c, horizon
                WHERE (c.txid, c.seq) > ($1::xid8, $2) AND c.txid < horizon.xmin
                    AND NOT (c.entity = ANY($5) AND c.txid IN (SELECT txid FROM own))
                ORDER BY c.txid, c.seq LIMIT $3
            ),
            changes AS (
                SELECT c.* FROM \(ServerNames.quoted(ServerNames.changeLog)) c, horizon
                WHERE (c.txid, c.seq) > ($1::xid8, $2) AND c.txid < horizon.xmin AND c.txid <= (SELECT max(txid) FROM page)
                    AND NOT (c.entity = ANY($5) AND c.txid IN (SELECT txid FROM own))
            ),
            skipped AS (
                SELECT c.txid, c.seq FROM \(ServerNames.quoted(ServerNames.changeLog)) c, horizon
                WHERE (SELECT count(*) FROM page) < $3 AND cardinality($4::text[]) > 0 AND cardinality($5::text[]) > 0
                    AND (c.txid, c.seq) > ($1::xid8, $2) AND c.txid < horizon.xmin
                    AND c.entity = ANY($5) AND c.txid IN (SELECT txid FROM own)
                ORDER BY c.txid DESC, c.seq DESC LIMIT 1
            )
            SELECT h.xmin::text, h.xmax::text, h.pruned, (SELECT txid::text FROM skipped), (SELECT seq FROM skipped),
                c.txid::text, c.seq, c.entity, c.object, c.op, c.version, c.changed, c."row"::text
            FROM horizon h LEFT JOIN changes c ON true
            ORDER BY c.txid, c.seq
            """

        typealias Row = (String, String, String?, String?, Int64?, String?, Int64?, String?, UUID?, String?, Int64?, [String]?, String?)

        var cursor: ServerCursor
        var limit: Int
        var skipping: [UInt64]
        var skippedEntities: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 5)
            bindings.append(String(cursor.transaction))
            bindings.append(cursor.sequence)
            bindings.append(Int64(max(1, limit)))
            bindings.append(skipping.map(String.init))
            bindings.append(skippedEntities)
            return bindings
        }

        /// Each cell decoded as its own type. `PostgresRow.decode(_:)` of the whole tuple goes
        /// through parameter packs, which the compiler leaves generic: the type of every cell
        /// of every row was looked up at run time, 6% of the processor time of five desktops
        /// following a firehose (each decoding every change it pulled).
        func decodeRow(_ row: PostgresRow) throws -> Row {
            let cells = row.makeRandomAccess()
            // The statement's own columns (as `decode(_:)` checks).
            precondition(cells.count == 13)
            return (try cells[0].decode(String.self), try cells[1].decode(String.self), try cells[2].decode(String?.self),
                    try cells[3].decode(String?.self), try cells[4].decode(Int64?.self), try cells[5].decode(String?.self),
                    try cells[6].decode(Int64?.self), try cells[7].decode(String?.self), try cells[8].decode(UUID?.self),
                    try cells[9].decode(String?.self), try cells[10].decode(Int64?.self), try cells[11].decode([String]?.self),
                    try cells[12].decode(String?.self))
        }
    }

    /// The ID of the transaction `connection` is in (one is given to it if it had none).
    func currentTransaction(on connection: PostgresConnection, logger: Logger) async throws -> UInt64? {
        let rows = try await connection.query("SELECT pg_current_xact_id()::text", logger: logger)
        for try await id in rows.decode(String.self) { return UInt64(id) }
        return nil
    }

    /// The version each object had once the push `identity` wrote it (none while the push
    /// is not committed): a change of the object at that version or later holds what the
    /// push added.
    func versions(ofPush identity: UUID, on connection: PostgresConnection, logger: Logger) async throws -> [UUID: Int64] {
        let rows = try await connection.query(
            "SELECT object, min(version) FROM \(unescaped: ServerNames.quoted(ServerNames.changeLog)) WHERE push = \(identity) GROUP BY object", logger: logger)
        var versions: [UUID: Int64] = [:]
        for try await (object, version) in rows.decode((UUID, Int64).self) { versions[object] = version }
        return versions
    }

    /// Whether the server applied the push `identity` (it records the identity of every
    /// push that adds to counters, for 30 days).
    func pushWasApplied(_ identity: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            "SELECT EXISTS (SELECT 1 FROM \(unescaped: ServerNames.quoted(ServerNames.pushes)) WHERE id = \(identity))", logger: logger)
        for try await exists in rows.decode(Bool.self) { return exists }
        return false
    }

    /// A row of the log as a change. One that this model cannot read (an unknown entity or
    /// operation, a value of another type, a row over ``limits``) is a change all the same,
    /// with its ``ServerChange/problem``: the merge refuses it and the cursor moves past it,
    /// so that one bad row stops nothing.
    func change(at cursor: ServerCursor, entity entityName: String, object: UUID, operation: String, version: Int64,
                changed: [String], row: String?) -> ServerChange {
        var change = ServerChange(cursor: cursor, entity: entityName, object: object, kind: ServerChange.Kind(rawValue: operation) ?? .update,
                                  version: version, changedProperties: changed, values: [:])
        if ServerChange.Kind(rawValue: operation) == nil {
            change.problem = .init(reason: "its operation \"\(JSONScalar.clipped(operation))\" is none of insert, update and delete")
        } else if let entity = model.entity(named: entityName) {
            guard let row else {
                if !change.kind.removes { change.problem = .init(reason: "its \(change.kind.rawValue) has no row") }
                return change
            }
            if let problem = oversized(bytes: row.utf8.count) {
                change.problem = problem
            } else {
                do {
                    change.values = try RowImage.values(ofJSON: row, entity: entity, model: model)
                    // The image is the whole row, written as a base is: it is kept as the base.
                    change.valuesJSON = row
                } catch let error as RowImage.Unreadable { change.problem = error } catch { change.problem = .init(reason: "\(error)") }
            }
        } else {
            change.problem = .init(reason: "this model has no entity \(JSONScalar.clipped(entityName)); a desktop with a newer model wrote it")
        }
        return change
    }

    /// Why a row of `bytes` is not taken: over ``SharingLimits/rowBytes``; nil when it fits.
    private func oversized(bytes: Int) -> RowImage.Unreadable? {
        bytes > limits.rowBytes ? .init(reason: "its row is \(bytes) bytes, over the limit of \(limits.rowBytes) (SharingLimits.rowBytes)") : nil
    }
}

extension ServerChangeLog {
    /// Deletes all but the newest `count` changes of transactions that ended, and records the
    /// newest one deleted: a reader whose cursor is older resyncs from the tables (see
    /// ``SharingSession``) instead of pulling, since changes it needed are gone. Returns how
    /// many changes it deleted.
    ///
    /// The deletes of transactions that ended are forgotten too (`"Z_DELETED"`), and the
    /// highest version among them kept as `deletedFloor`, above which every later insert
    /// starts (see ``ServerSchema``): a desktop that still holds the tombstone of such a
    /// delete takes an object inserted again under its global ID.
    ///
    /// The mark only moves forward: a prune that keeps more than one before it (another
    /// desktop's, with a larger `count` or a cursor further back) leaves it where it is, so
    /// that a reader between the two still learns that changes it needed are gone.
    ///
    /// - Parameter cursor: The pruning desktop's own cursor: no change after it is deleted,
    ///   whatever `count`. Its pull reads only the transactions below its snapshot's
    ///   horizon, so a transaction open anywhere on the server hides from it the changes of
    ///   those that began later. When that transaction ends between the pull and the prune,
    ///   the prune sees them all, and the newest `count` could all be changes the desktop
    ///   had not read: it would delete the others and send its own store to resync.
    @discardableResult
    package func prune(keepingLast count: Int, notPast cursor: ServerCursor? = nil, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        let log = ServerNames.quoted(ServerNames.changeLog)
        let state = ServerNames.quoted(ServerNames.state)
        return try await connection.withTransaction(logger: logger) { connection in
            // Ordered by the column, `c.txid`: a bare `txid` names the output column, the
            // text, and "999" sorts after "1000".
            let rows = try await connection.query("""
                SELECT c.txid::text, c.seq FROM \(unescaped: log) c
                WHERE c.txid < pg_snapshot_xmin(pg_current_snapshot())
                ORDER BY c.txid DESC, c.seq DESC OFFSET \(max(0, count)) LIMIT 1
                """, logger: logger)
            var through: ServerCursor?
            for try await (txid, seq) in rows.decode((String, Int64).self) {
                through = UInt64(txid).map { ServerCursor(transaction: $0, sequence: seq) }
            }
            if let cursor, let found = through, cursor < found { through = cursor }
            // Pushes that added to counters are remembered for a month: a desktop killed
            // between a push and its end sends it again within that, or resyncs.
            try await connection.query("DELETE FROM \(unescaped: ServerNames.quoted(ServerNames.pushes)) WHERE at < now() - interval '30 days'", logger: logger)
            try await forgetDeletes(on: connection, logger: logger)
            guard let through else { return 0 }
            // Recorded first: a reader that sees the log without these changes sees the mark.
            // Never moved back (another desktop, its cursor further, may have pruned
            // further): a reader between the two would not see that it missed changes. A
            // value that is no cursor (written by hand) is replaced, as readers ignore it.
            try await connection.query("""
                INSERT INTO \(unescaped: state) AS s (key, value) VALUES ('prunedThrough', \(through.description))
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                WHERE CASE WHEN s.value ~ '^[0-9]{1,19}:-?[0-9]{1,18}$'
                    THEN (split_part(s.value, ':', 1)::xid8, split_part(s.value, ':', 2)::bigint)
                        < (split_part(excluded.value, ':', 1)::xid8, split_part(excluded.value, ':', 2)::bigint)
                    ELSE true END
                """, logger: logger)
            let deleted = try await connection.query("""
                WITH gone AS (DELETE FROM \(unescaped: log) WHERE (txid, seq) <= ('\(unescaped: String(through.transaction))'::xid8, \(through.sequence)) RETURNING 1)
                SELECT count(*) FROM gone
                """, logger: logger)
            var total = 0
            for try await n in deleted.decode(Int.self) { total = n }
            return total
        }
    }

    /// Forgets the deletes of the transactions that ended, raising `deletedFloor` to the
    /// highest version among them (in the same transaction: an insert sees either).
    private func forgetDeletes(on connection: PostgresConnection, logger: Logger) async throws {
        let deleted = ServerNames.quoted(ServerNames.deleted), state = ServerNames.quoted(ServerNames.state)
        try await connection.query("""
            WITH gone AS (DELETE FROM \(unescaped: deleted) WHERE txid < pg_snapshot_xmin(pg_current_snapshot()) RETURNING version),
            highest AS (SELECT max(version) AS version FROM gone)
            INSERT INTO \(unescaped: state) (key, value) SELECT \(ServerNames.deletedFloorKey), version::text FROM highest WHERE version IS NOT NULL
            ON CONFLICT (key) DO UPDATE SET value = greatest(\(unescaped: state).value::bigint, excluded.value::bigint)::text
            """, logger: logger)
    }

    /// The identity of the server's database (see ``ServerSchema``).
    package func identity(on connection: PostgresConnection, logger: Logger) async throws -> String? {
        let rows = try await connection.query(
            "SELECT value FROM \(unescaped: ServerNames.quoted(ServerNames.state)) WHERE key = 'identity'", logger: logger)
        for try await value in rows.decode(String.self) { return value }
        return nil
    }

    /// Every object on the server, as changes at their versions, read in one snapshot
    /// (a `REPEATABLE READ` transaction) and handed to `take` in pages of `pageSize`, each
    /// with what the snapshot holds (``SnapshotObjects``): how many objects, and the IDs of
    /// those of the entities `identifying` names (nil: every entity), since a relationship
    /// may name an object of a later page. Returns those, and the cursor to pull from
    /// afterwards: every change the snapshot does not hold sorts after it (changes it holds
    /// that sort after it too are skipped by their versions).
    package func snapshot(on connection: PostgresConnection, pageSize: Int = 5_000,
                          identifying: Set<String>? = nil, logger: Logger,
                          isolation: isolated (any Actor)? = #isolation,
                          take: ([ServerChange], _ objects: SnapshotObjects) async throws -> Void) async throws -> (cursor: ServerCursor, objects: SnapshotObjects) {
        try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
        do {
            var xmin: UInt64 = 0
            for try await text in try await connection.query("SELECT pg_snapshot_xmin(pg_current_snapshot())::text", logger: logger).decode(String.self) {
                xmin = UInt64(text) ?? 0
            }
            var objects = SnapshotObjects()
            for entity in model.entities {
                let table = ServerNames.quoted(entity.name)
                // Only counted where no relationship needs the IDs: a million of them took a
                // second and more before the first page.
                guard identifying?.contains(entity.name) ?? true else {
                    for try await count in try await connection.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)"), logger: logger).decode(Int.self) {
                        objects.count += count
                    }
                    continue
                }
                try await ids(of: table, into: &objects, on: connection, logger: logger)
            }
            for entity in model.entities {
                let columns = ServerColumns(entity, model: model)
                try await connection.query(PostgresQuery(unsafeSQL: """
                    DECLARE z_snapshot NO SCROLL CURSOR FOR
                    SELECT \(columns.selection) FROM \(ServerNames.quoted(entity.name)) t
                    """), logger: logger)
                // The next page is read from the server while this one is taken.
                var changes = try await page(of: columns, size: pageSize, on: connection, logger: logger)
                while !changes.isEmpty {
                    async let next = page(of: columns, size: pageSize, on: connection, logger: logger)
                    try await take(changes, objects)
                    changes = try await next
                }
                try await connection.query("CLOSE z_snapshot", logger: logger)
            }
            try await connection.query("COMMIT", logger: logger)
            // Every transaction below xmin ended before the snapshot: its changes are in it.
            return (ServerCursor(transaction: max(xmin, 1) - 1, sequence: .max), objects)
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }
}

/// What a snapshot of the server holds, known before its first page.
package struct SnapshotObjects: Sendable {
    /// How many objects, of every entity.
    package var count = 0
    /// The IDs of the objects of the entities asked for: those a relationship may name.
    package var ids: Set<UUID> = []
}

extension ServerChangeLog {
    /// Adds the IDs of the objects of `table` to `objects`.
    ///
    /// Not isolated, as ``page(of:size:on:logger:)`` is not: the rows are read where the
    /// task runs. Read in ``snapshot(on:pageSize:identifying:logger:isolation:take:)``, which
    /// runs on its caller's actor, each row went from that actor to the task's executor
    /// and back: a resync of 100,000 boards took 15.2 s so, and takes 6.4 s (debug build).
    private func ids(of table: String, into objects: inout SnapshotObjects, on connection: PostgresConnection, logger: Logger) async throws {
        let rows = try await connection.query(PostgresQuery(unsafeSQL: "SELECT \(ServerNames.quoted(ServerNames.objectID)) FROM \(table)"), logger: logger)
        for try await id in rows.decode(UUID.self) { objects.ids.insert(id); objects.count += 1 }
    }

    /// The next `size` rows from the snapshot's cursor (of `columns`' entity), as changes at
    /// their versions; none once it is read through. The rows are read as columns, not
    /// row images: the server makes no JSON of a million rows, nor the desktop parses it.
    /// A row over ``SharingLimits/rowBytes``, or with a value of another type than its
    /// attribute's, is read all the same, with its problem, for the merge to refuse.
    private func page(of columns: ServerColumns, size: Int, on connection: PostgresConnection, logger: Logger) async throws -> [ServerChange] {
        var changes: [ServerChange] = []
        let rows = try await connection.query(PostgresQuery(unsafeSQL: "FETCH \(size) FROM z_snapshot"), logger: logger)
        for try await row in rows {
            let cells = row.makeRandomAccess()
            var change = ServerChange(cursor: .start, entity: columns.entity.name, object: try cells[0].decode(UUID.self), kind: .update,
                                      version: try cells[1].decode(Int64.self), changedProperties: [], values: [:])
            if let problem = oversized(bytes: ServerColumns.bytes(of: cells)) {
                change.problem = problem
            } else {
                do {
                    change.values = try columns.values(of: cells)
                    change.valuesJSON = RowImage.json(change.values)
                } catch let error as RowImage.Unreadable { change.problem = error }
            }
            changes.append(change)
        }
        return changes
    }
}

extension ServerCursor {
    /// Reads `transaction:sequence`, as ``description`` writes it.
    init?(_ text: String) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let transaction = UInt64(parts[0]), let sequence = Int64(parts[1]) else { return nil }
        self.init(transaction: transaction, sequence: sequence)
    }
}
