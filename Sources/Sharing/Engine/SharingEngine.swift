import Foundation
import GRDB
import Logging
import ObjectStore
import PostgresNIO

/// The work of a ``SharingSession``: one round at a time (connect and join if needed, pull
/// everything committed, push everything local), started by a wake-up of the server's
/// listener, a local commit, the safety timer or ``synchronize()``; several wake-ups during
/// a round make one more round.
actor SharingEngine {
    let store: PersistentStore
    let sharing: PostgresSharing
    let model: Model
    let log: ServerChangeLog
    let writer: ServerWriter
    let outbox: Outbox
    let roundLock: RoundLock
    private var logger: Logger { sharing.logger }

    private var connection: PostgresConnection?
    private var connectionNumber = 0
    private let wake: AsyncStream<Void>.Continuation
    private let wakeUps: AsyncStream<Void>
    /// Callers of ``synchronize()`` waiting for the next round to end.
    private var waiters: [CheckedContinuation<Void, any Error>] = []
    private var report: (@Sendable (SharingStatus) -> Void)?
    private var pending = 0
    private var lastPrune = ContinuousClock.now - .seconds(3600)
    /// Rounds that failed in a row, and when the next may try to connect.
    private var failures = 0
    private var retryAt: ContinuousClock.Instant?
    private var retryTask: Task<Void, Never>?
    private var lastState: SharingStatus.State = .connecting

    init(store: PersistentStore, sharing: PostgresSharing) {
        self.store = store
        self.sharing = sharing
        model = store.model
        log = ServerChangeLog(model: store.model, limits: sharing.limits)
        writer = ServerWriter(model: store.model, policy: sharing.mergePolicy, logger: sharing.logger)
        outbox = Outbox(store: store, limits: sharing.limits)
        roundLock = RoundLock(store: store.url)
        (wakeUps, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Runs rounds until the task is cancelled.
    func run(report: @escaping @Sendable (SharingStatus) -> Void) async {
        self.report = report
        let wake = self.wake
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.listen() }
            group.addTask { await self.watchLocalCommits() }
            group.addTask {
                // A round now, then after each wake-up; retries after a failure.
                wake.yield()
                for await _ in self.wakeUps {
                    if Task.isCancelled { break }
                    await self.runRound()
                }
            }
            while !Task.isCancelled {
                if (try? await Task.sleep(for: .seconds(3600))) == nil { break }
            }
            wake.finish()
            group.cancelAll()
        }
        retryTask?.cancel()
        await closeConnection()
        for waiter in waiters { waiter.resume(throwing: CancellationError()) }
        waiters = []
    }

    private func notice(_ message: String) {
        logger.notice("sharing: \(message)")
    }

    func synchronize() async throws {
        try await withCheckedThrowingContinuation { continuation in
            waiters.append(continuation)
            wake.yield()
        }
    }

    // MARK: Rounds

    private func runRound() async {
        // Offline: until the next try, a wake-up (a local commit) only counts what waits.
        if let retryAt, ContinuousClock.now < retryAt, waiters.isEmpty {
            pending = (try? await countPending()) ?? pending
            status(lastState)
            return
        }
        let waiting = waiters
        waiters = []
        do {
            try await roundWithWatchdog()
            failures = 0
            retryAt = nil
            status(.connected)
            for waiter in waiting { waiter.resume() }
        } catch {
            await closeConnection()
            let reason = Self.reason(error)
            if failures == 0 { logger.info("sharing: \(reason)") }
            pending = (try? await countPending()) ?? pending
            status(.offline(reason: reason))
            for waiter in waiting { waiter.resume(throwing: error) }
            // Try again later, waiting longer after each failure (up to 30 s, or the delay
            // itself when it is longer); a synchronize() call tries at once.
            failures += 1
            let delay = min(sharing.reconnectDelay * (1 << min(failures - 1, 10)), max(sharing.reconnectDelay, .seconds(30)))
            retryAt = ContinuousClock.now + delay
            retryTask?.cancel()
            let wake = self.wake
            retryTask = Task {
                guard (try? await Task.sleep(for: delay)) != nil else { return }
                wake.yield()
            }
        }
    }

    /// How long a round may go without progress (a page pulled, a chunk pushed) before it
    /// is given up: postgres-nio 1.33 can leave a query's rows unfinished forever when the
    /// server ends the connection while they arrive (`pg_terminate_backend`), and a round
    /// waiting on them would stop every later one, and the session's `stop()`.
    static let stallLimit: Duration = .seconds(20)

    /// Runs a round in a task of its own, given up (and its connection dropped) when it
    /// makes no progress for ``stallLimit``; while no other process runs a round on the
    /// store file (see ``RoundLock``).
    private func roundWithWatchdog() async throws {
        let held = await roundLock.acquire()
        defer { held?.release() }
        progress = .now
        let outcome = Outcome()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            outcome.continuation = continuation
            let work = Task {
                do { try await self.round(); outcome.resume(nil) } catch { outcome.resume(error) }
            }
            Task {
                while !outcome.isResumed {
                    try? await Task.sleep(for: .seconds(1))
                    if await ContinuousClock.now - self.progress > Self.stallLimit {
                        await self.notice("a round made no progress for \(Self.stallLimit); giving it up")
                        work.cancel()
                        outcome.resume(RoundStalled())
                        await self.closeConnection()
                    }
                }
            }
        }
    }

    private var progress = ContinuousClock.now

    private func madeProgress() { progress = .now }

    private func round() async throws {
        logger.trace("sharing: round: connecting")
        let connection = try await connected()
        madeProgress()
        logger.trace("sharing: round: pulling")
        try await pullAll(on: connection)
        logger.trace("sharing: round: pushing")
        try await pushAll(on: connection)
        logger.trace("sharing: round: done")
        if ContinuousClock.now - lastPrune > .seconds(300) {
            lastPrune = .now
            try await log.prune(keepingLast: sharing.logLimit, on: connection, logger: logger)
        }
    }

    private func status(_ state: SharingStatus.State) {
        lastState = state
        let rejected = (try? store.database.read { db in try SharingState.rejectedCount(in: db) }) ?? 0
        report?(SharingStatus(state: state, pendingChanges: pending, server: sharing.configuration.description, rejectedChanges: rejected))
    }

    private static func reason(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            return "cannot reach the server (\(error.code))"
        }
        return String(describing: error)
    }

    /// Closes the connection without waiting for it: closing one the server already cut
    /// can wait forever.
    private func closeConnection() async {
        if let connection { Task { try? await connection.close() } }
        connection = nil
    }

    // MARK: Connecting and joining

    /// The open connection, or a new one: the schema made, the store joined or resynced.
    private func connected() async throws -> PostgresConnection {
        if let connection, !connection.isClosed { return connection }
        if connection != nil { await closeConnection() }
        // Not while offline: each try would flip the status, and its lines, back and forth.
        if case .offline = lastState {} else { status(.connecting) }
        connectionNumber += 1
        let connection = try await PostgresConnection.connect(configuration: sharing.configuration.connection, id: connectionNumber, logger: logger)
        do {
            // A round never waits long on the server: a lock held by a desktop that hangs
            // ends the statement with an error, and the round is tried again.
            try await connection.query("SET lock_timeout = '10s'", logger: logger)
            try await connection.query("SET statement_timeout = '60s'", logger: logger)
            logger.trace("sharing: round: creating the schema")
            try await ServerSchema(model: model).create(on: connection, logger: logger)
            let identity = try await log.identity(on: connection, logger: logger) ?? ""
            let known = try await store.database.read { db in try SharingState.value(.serverIdentity, in: db) }
            if known != identity {
                if known != nil {
                    logger.notice("sharing: \(sharing.configuration) is another database than the one this store shared with; joining it afresh")
                    try await forgetServer()
                }
                try await join(on: connection, identity: identity)
            }
            self.connection = connection
            return connection
        } catch {
            Task { try? await connection.close() }
            throw error
        }
    }

    /// Forgets what the store knew of another database: its bases and cursor. Global IDs stay.
    private func forgetServer() async throws {
        try await store.database.write { db in
            try db.execute(sql: "DELETE FROM \(SharingState.baseTable)")
            try db.execute(sql: "DELETE FROM \(SharingState.referenceTable)")
            for key in [SharingState.Key.serverIdentity, .cursor, .pushedThrough, .pushInFlight] { try SharingState.set(key, nil, in: db) }
        }
    }

    /// Joins the database: an empty one gets this store's objects, pushed once under a lock
    /// so that two desktops joining at once do not both seed it; a store holding only its
    /// initial contents gives them up for the server's objects; a store with data of its own
    /// keeps it and pushes it beside the server's.
    private func join(on connection: PostgresConnection, identity: String) async throws {
        let store = self.store
        let seedOnly = try await Task.detached { try store.holdsOnlyInitialContents() }.value
        let serverWasEmpty = try await connection.withTransaction(logger: logger) { connection -> Bool in
            try await connection.query("SELECT pg_advisory_xact_lock(\(ServerSchema.advisoryLockKey + 1))", logger: logger)
            guard try await self.serverIsEmpty(connection) else { return false }
            let (operations, through) = try await self.store.database.write { db in try self.outbox.pending(everything: true, in: db) }
            let (written, conflicts) = try await self.writer.push(operations, on: connection)
            let cursor = try await self.horizonCursor(connection)
            try await self.store.database.write { db in
                try self.takeWritten(written, sent: operations, conflicts: conflicts, in: db)
                try SharingState.set(.pushedThrough, String(through), in: db)
                try SharingState.setCursor(cursor, in: db)
                try SharingState.set(.serverIdentity, identity, in: db)
            }
            return true
        }
        if serverWasEmpty {
            logger.info("sharing: seeded \(sharing.configuration) with this store's objects")
            return
        }
        let snapshot = try await log.snapshot(on: connection, logger: logger)
        try await store.database.write { db in
            if seedOnly {
                for entity in model.entities { try db.execute(sql: "DELETE FROM \(entity.name.quotedDatabaseIdentifier)") }
            }
            var merge = self.merge(arriving: snapshot.changes)
            for change in snapshot.changes { try merge.take(change, in: db) }
            try merge.finish(in: db)
            try SharingState.setCursor(snapshot.cursor, in: db)
            try SharingState.set(.serverIdentity, identity, in: db)
            // A seed given up is not pushed; data of the store's own is, all of it.
            try SharingState.set(.pushedThrough, seedOnly ? String(try PersistentStore.currentHistoryToken(in: db)) : nil, in: db)
        }
        logger.info("sharing: joined \(sharing.configuration), took \(snapshot.changes.count) objects")
    }

    private func serverIsEmpty(_ connection: PostgresConnection) async throws -> Bool {
        for entity in model.entities {
            let rows = try await connection.query(PostgresQuery(unsafeSQL: "SELECT EXISTS (SELECT 1 FROM \(ServerNames.quoted(entity.name)))"), logger: logger)
            for try await exists in rows.decode(Bool.self) where exists { return false }
        }
        return true
    }

    /// A cursor before every change of a transaction that had not ended when the current
    /// transaction's snapshot was taken.
    private func horizonCursor(_ connection: PostgresConnection) async throws -> ServerCursor {
        var xmin: UInt64 = 1
        for try await text in try await connection.query("SELECT pg_snapshot_xmin(pg_current_snapshot())::text", logger: logger).decode(String.self) {
            xmin = UInt64(text) ?? 1
        }
        return ServerCursor(transaction: max(xmin, 1) - 1, sequence: .max)
    }

    // MARK: Pulling

    private func pullAll(on connection: PostgresConnection) async throws {
        while true {
            let cursor = try await store.database.read { db in try SharingState.cursor(in: db) } ?? .start
            if let pruned = try await log.prunedThrough(on: connection, logger: logger), cursor < pruned {
                try await resync(on: connection)
                continue
            }
            let page = try await log.pull(after: cursor, limit: 1000, on: connection, logger: logger)
            madeProgress()
            guard !page.changes.isEmpty else { return }
            // Relationships to objects neither the page nor the store has: the server is
            // asked whether it has them (a push of many objects commits in several
            // transactions); those it lacks make their changes rejected.
            let (unknown, inFlight) = try await store.database.read { db in
                (try self.unknownTargets(of: page.changes, in: db), try SharingState.pushInFlight(in: db))
            }
            let onServer = try await existingObjects(unknown, on: connection)
            // A push of this store's counters whose end is not taken yet: from which version
            // the page's changes hold it (asked after the page was read, so a change the
            // page holds that came after the push finds the push committed).
            let pushVersions = if let inFlight, page.changes.contains(where: { inFlight.deltas[$0.object] != nil }) {
                try await log.versions(ofPush: inFlight.id, on: connection, logger: logger)
            } else {
                [UUID: Int64]()
            }
            try await store.database.write { db in
                // Another round of this process, or another process on the file, may have
                // taken it already.
                guard try SharingState.cursor(in: db) ?? .start == cursor else { return }
                var merge = self.merge(arriving: page.changes)
                merge.arriving.formUnion(onServer)
                // The record as it is now: another process may have taken it meanwhile.
                merge.pushInFlight = try SharingState.pushInFlight(in: db).flatMap { $0.id == inFlight?.id ? $0 : nil }
                merge.pushVersions = pushVersions
                for change in page.changes { try merge.take(change, in: db) }
                try merge.finish(in: db)
                try SharingState.setCursor(page.cursor, in: db)
            }
        }
    }

    /// A merge of `changes` into the store, whose relationships may name any of them.
    nonisolated private func merge(arriving changes: [ServerChange]) -> ServerRowMerge {
        var merge = ServerRowMerge(model: model, policy: sharing.mergePolicy, limits: sharing.limits)
        merge.arriving = Set(changes.lazy.filter { $0.kind != .delete && $0.problem == nil }.map(\.object))
        return merge
    }

    /// The objects that relationships in `changes` name and that neither `changes` nor the
    /// store has, by entity.
    nonisolated private func unknownTargets(of changes: [ServerChange], in db: Database) throws -> [String: Set<UUID>] {
        let arriving = Set(changes.lazy.filter { $0.kind != .delete }.map(\.object))
        var unknown: [String: Set<UUID>] = [:]
        for change in changes where change.kind != .delete {
            guard let entity = model.entity(named: change.entity) else { continue }
            for relationship in entity.relationships where model.storesForeignKey(relationship, of: entity) {
                guard case .string(let text)? = change.values[relationship.name], let id = UUID(uuidString: text),
                      !arriving.contains(id), try GlobalIDs.object(for: id, in: db) == nil else { continue }
                unknown[relationship.destinationEntity, default: []].insert(id)
            }
        }
        return unknown
    }

    /// Which of `objects` the server's tables hold.
    private func existingObjects(_ objects: [String: Set<UUID>], on connection: PostgresConnection) async throws -> Set<UUID> {
        var found: Set<UUID> = []
        for (entityName, ids) in objects {
            guard let entity = model.entity(named: entityName) else { continue }
            for row in try await writer.rows(of: entity, ids: Array(ids), on: connection) { found.insert(row.id) }
        }
        return found
    }

    /// Takes every object from the server's tables afresh, because the log no longer holds
    /// every change after this store's cursor. Objects with a base that the server no longer
    /// has were deleted there; local changes not pushed yet are kept and merged.
    private func resync(on connection: PostgresConnection) async throws {
        status(.resyncing)
        logger.notice("sharing: the server's log was pruned past this store's cursor; resyncing from its tables")
        let inFlight = try await store.database.read { db in try SharingState.pushInFlight(in: db) }
        let snapshot = try await log.snapshot(on: connection, logger: logger)
        // A push of counters whose end is not taken yet, which the server applied before
        // the snapshot (its identity recorded): every row of the snapshot holds it.
        let applied = if let inFlight, try await log.pushWasApplied(inFlight.id, on: connection, logger: logger) { inFlight } else { nil as SharingState.PushInFlight? }
        try await store.database.write { db in
            var merge = self.merge(arriving: snapshot.changes)
            merge.pushInFlight = try SharingState.pushInFlight(in: db).flatMap { $0.id == applied?.id ? $0 : nil }
            merge.pushVersions = (applied?.deltas.keys).map { Dictionary(uniqueKeysWithValues: $0.map { ($0, Int64.min) }) } ?? [:]
            let onServer = Set(snapshot.changes.map(\.object))
            for change in snapshot.changes { try merge.take(change, in: db) }
            for (entityName, id) in try SharingState.basedObjects(in: db) where !onServer.contains(id) {
                guard let entity = model.entity(named: entityName),
                      let base = try SharingState.base(of: id, entity: entity, model: model, in: db) else { continue }
                try merge.take(ServerChange(cursor: .start, entity: entityName, object: id, kind: .delete, version: base.version + 1,
                                            changedProperties: [], values: [:]), in: db)
            }
            try merge.finish(in: db)
            try SharingState.setCursor(snapshot.cursor, in: db)
        }
    }

    // MARK: Pushing

    /// Pushes every local change: a push of counters whose end was lost first, under its
    /// identity; then the counters that changed (up to 1,000 objects, recorded as in flight
    /// in the transaction that reads them, see ``SharingState/PushInFlight``), and every
    /// other change, 1,000 objects a server transaction.
    private func pushAll(on connection: PostgresConnection) async throws {
        var passes = 0
        while true {
            // In flight here: lost (this process was killed before its end) or being sent
            // by another process on the file; sending it again is safe either way.
            if let lost = try await store.database.read({ db in try SharingState.pushInFlight(in: db) }) {
                try await push(replaying: lost, on: connection)
            }
            let (operations, through, inFlight) = try await store.database.write { db in
                let (operations, through) = try outbox.pending(everything: try SharingState.value(.pushedThrough, in: db) == nil, in: db)
                let counted = operations.filter { !$0.counterDeltas.isEmpty }.prefix(1000)
                guard !counted.isEmpty, try SharingState.pushInFlight(in: db) == nil else { return (operations, through, nil as SharingState.PushInFlight?) }
                let inFlight = SharingState.PushInFlight(counted)
                try SharingState.setPushInFlight(inFlight, in: db)
                return (operations, through, inFlight)
            }
            pending = operations.count
            if operations.isEmpty {
                // Written only when it moved: most rounds (a pull woken by another desktop)
                // have nothing to push.
                try await store.database.write { db in
                    if try SharingState.value(.pushedThrough, in: db) != String(through) {
                        try SharingState.set(.pushedThrough, String(through), in: db)
                    }
                }
                return
            }
            // Counters go only under the identity of the push recorded for them; the others
            // wait for the next turn of this loop.
            let counted = operations.filter { inFlight?.deltas[$0.id] != nil }
            var others = operations.filter { inFlight?.deltas[$0.id] == nil }
            let deferred = others.contains { !$0.counterDeltas.isEmpty }
            for index in others.indices { others[index].counterDeltas = [:] }
            others.removeAll { $0.kind == .update && $0.changedKeys.isEmpty }
            if let inFlight { try await push(counted, identity: inFlight.id, on: connection) }
            for chunk in stride(from: 0, to: others.count, by: 1000).map({ Array(others[$0..<min($0 + 1000, others.count)]) }) {
                try await push(chunk, identity: nil, on: connection)
            }
            // Deferred counters go in the next pass; a few passes a round (the rest wait for
            // the next round), so that a delta the server never absorbs cannot spin here.
            passes += 1
            guard !deferred else { if passes < 8 { continue } else { return } }
            try await store.database.write { db in
                // Set only if no other round pushed further meanwhile.
                if try SharingState.pushedThrough(in: db) < through { try SharingState.set(.pushedThrough, String(through), in: db) }
            }
            pending = 0
        }
    }

    /// Sends `operations` in one server transaction and takes what they left into the store;
    /// a push with an `identity` (it adds to counters) is then no longer in flight.
    private func push(_ operations: [Outbox.Operation], identity: UUID?, on connection: PostgresConnection) async throws {
        let (written, conflicts) = try await connection.withTransaction(logger: logger) { connection in
            try await self.writer.push(operations, identity: identity, on: connection)
        }
        try await store.database.write { db in
            // A push of counters whose end was taken already (its record gone) left rows
            // to take like any pulled change: its deltas are in the bases.
            let taken = try identity.map { try SharingState.pushInFlight(in: db)?.id != $0 } ?? false
            try takeWritten(written, sent: taken ? [] : operations, conflicts: conflicts, in: db)
            if let identity, !taken { try SharingState.setPushInFlight(nil, in: db) }
        }
        pending = max(0, pending - operations.count)
        madeProgress()
    }

    /// Sends again a push of counters whose end the store did not take (the process was
    /// killed, or the connection dropped, in between): the server finds its identity if it
    /// had it, and adds nothing twice.
    private func push(replaying lost: SharingState.PushInFlight, on connection: PostgresConnection) async throws {
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
    nonisolated private func takeWritten(_ written: [ServerWriter.Written], sent operations: [Outbox.Operation], conflicts: [SharingConflict], in db: Database) throws {
        let sentByID = Dictionary(operations.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        var merge = ServerRowMerge(model: model, policy: sharing.mergePolicy, limits: sharing.limits)
        merge.arriving = Set(written.map(\.id))
        for row in written {
            let change = ServerChange(cursor: .start, entity: row.entity, object: row.id, kind: row.values == nil ? .delete : .update,
                                      version: row.values == nil ? (row.version == 0 ? .max : row.version) : row.version,
                                      changedProperties: [], values: row.values ?? [:])
            var assumed: [String: Value]?
            if let operation = sentByID[row.id], operation.kind != .delete {
                assumed = operation.base ?? [:]
                for key in row.sentKeys(of: operation) { assumed![key] = operation.values[key] }
                // What the push added is this store's: taken into the base as it is now (a pull
                // by another process on the file may have moved it since the push was read),
                // not added again.
                if !operation.counterDeltas.isEmpty {
                    let now = try SharingState.base(of: row.id, entity: operation.entity, model: model, in: db)?.values ?? operation.base ?? [:]
                    for (key, delta) in operation.counterDeltas { assumed![key] = (now[key] ?? .null).adding(delta) }
                }
            }
            try merge.take(change, assumingBase: assumed, in: db)
        }
        try merge.finish(in: db)
        for conflict in conflicts { try SharingState.record(conflict, in: db) }
    }

    /// How many objects have changes to push (shown while offline).
    private func countPending() async throws -> Int {
        try await store.database.write { db in
            guard try SharingState.value(.serverIdentity, in: db) != nil else {
                // Not joined yet: every object may go.
                return try model.entities.reduce(0) { $0 + (try Int.fetchOne(db, sql: "SELECT count(*) FROM \($1.name.quotedDatabaseIdentifier)") ?? 0) }
            }
            return try outbox.pending(everything: try SharingState.value(.pushedThrough, in: db) == nil, in: db).operations.count
        }
    }

    // MARK: Wake-ups

    private func listen() async {
        let listener = ServerListener(configuration: sharing.configuration, reconnectDelay: sharing.reconnectDelay,
                                      safetyInterval: sharing.safetyInterval, logger: logger)
        for await event in listener.events() {
            if case .disconnected(let reason) = event { logger.debug("sharing: listener: \(reason)") }
            wake.yield()
        }
    }

    /// Wakes a round whenever the store's history grows (any writer on the file): told by
    /// the store's change feed, at this process's commits and, through inotify, at other
    /// processes'; `localInterval` is its safety look where the kernel cannot tell.
    private func watchLocalCommits() async {
        let (commits, committed) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let fallback = DispatchTimeInterval.nanoseconds(Int(sharing.localInterval / .nanoseconds(1)))
        let subscription = store.feed.subscribe(since: nil, queue: .global(), fallback: fallback) { committed.yield() }
        for await _ in commits { wake.yield() }
        subscription.cancel()
    }
}

extension ServerWriter.Written {
    /// The fields the push wrote of `operation`: every field of an insert; the changed
    /// fields of an update that the server now holds as sent (a conflict the server won
    /// keeps its base, so that the merge reports it).
    func sentKeys(of operation: Outbox.Operation) -> [String] {
        guard let values else { return [] }
        return operation.changedKeys.filter { values[$0] == operation.values[$0] }
    }
}

/// A round given up for making no progress.
struct RoundStalled: Error, CustomStringConvertible {
    var description: String { "the server stopped answering in the middle of a round" }
}

/// Resumes a continuation once, from whichever comes first.
private final class Outcome: @unchecked Sendable {
    private let lock = NSLock()
    var continuation: CheckedContinuation<Void, any Error>?
    private var resumed = false

    var isResumed: Bool { lock.withLock { resumed } }

    func resume(_ error: (any Error)?) {
        let continuation: CheckedContinuation<Void, any Error>? = lock.withLock {
            guard !resumed else { return nil }
            resumed = true
            return self.continuation
        }
        if let error { continuation?.resume(throwing: error) } else { continuation?.resume() }
    }
}
