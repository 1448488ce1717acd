import Foundation
import GRDB
import Logging
import ObjectStore
import PostgresNIO

extension SharingEngine {
    /// Takes every change of the server's log after the store's cursor, page by page (or
    /// everything afresh when the log was pruned past it), then forgets the tombstones no
    /// change can need any more (see ``Tombstones``).
    ///
    /// A page of fewer changes than asked for held every change there was: the pull ends
    /// with it, without asking the server again (a commit after its snapshot wakes the
    /// engine again). Most wake-ups, a change from another desktop, cost one query.
    ///
    /// The changes of this store's own pushes whose ends it took are not brought back (see
    /// ``SharingState/takenPushes(in:)``): a store's first push of a million rows would
    /// otherwise read them all again, to find it holds each.
    ///
    /// A round pulls ``PostgresSharing/pullPagesPerRound`` full pages at most: then it
    /// returns false, the round pushes, and another round takes the rest.
    ///
    /// - Returns: Whether the store took every change there was, and, when the pull ended
    ///   with a page it took in, where the round's push starts (read in that page's write).
    func pullAll(on connection: PostgresConnection) async throws -> (caughtUp: Bool, pushStart: PushStart?) {
        let limit = sharing.pullPageSize
        for _ in 0..<sharing.pullPagesPerRound {
            // With the push in flight: only a round of this engine records or ends one, and
            // no other process's round runs meanwhile (``RoundLock``).
            let (cursor, taken, inFlight) = try readNow { db in
                (try SharingState.cursor(in: db) ?? .start, try SharingState.takenPushes(in: db), try SharingState.pushInFlight(in: db))
            }
            let page = try await log.pull(after: cursor, limit: limit, skipping: taken, of: skippableEntities, on: connection, logger: logger)
            madeProgress()
            // The log lost changes after this store's cursor: the page misses them.
            if let pruned = page.prunedThrough, cursor < pruned {
                try await resync(on: connection)
                continue
            }
            guard !page.changes.isEmpty else {
                if page.cursor > cursor {
                    // Past changes of its own pushes only.
                    try writeNow { db in
                        guard try SharingState.cursor(in: db) ?? .start == cursor else { return }
                        try SharingState.setCursor(page.cursor, in: db)
                    }
                }
                if let horizon = page.horizon { try await forgetTombstones(below: horizon) }
                return (true, nil)
            }
            // Relationships to objects neither the page nor the store has: the server is
            // asked whether it has them (a push of many objects commits in several
            // transactions); those it lacks make their changes rejected.
            let onServer = try await existingObjects(try unknownTargets(of: page.changes), on: connection)
            // A push of this store's counters whose end is not taken yet: from which version
            // the page's changes hold it (asked after the page was read, so a change the
            // page holds that came after the push finds the push committed).
            let pushVersions = if let inFlight, page.changes.contains(where: { inFlight.deltas[$0.object] != nil }) {
                try await log.versions(ofPush: inFlight.id, on: connection, logger: logger)
            } else {
                [UUID: Int64]()
            }
            let quietThrough = quiet.through
            let (moreTombstones, pushStart) = try writeNow { db -> (Bool, PushStart?) in
                // Another round of this process, or another process on the file, may have
                // taken it already.
                guard try SharingState.cursor(in: db) ?? .start == cursor else { return (false, nil) }
                let before = try PersistentStore.currentHistoryToken(in: db)
                var merge = self.merge(arriving: page.changes)
                merge.arriving.formUnion(onServer)
                // The record as it is now: another process may have taken it meanwhile.
                merge.pushInFlight = try SharingState.pushInFlight(in: db).flatMap { $0.id == inFlight?.id ? $0 : nil }
                merge.pushVersions = pushVersions
                try merge.lookUp(page.changes, in: db)
                for change in page.changes { try merge.take(change, in: db) }
                try merge.finish(in: db)
                try SharingState.setCursor(page.cursor, in: db)
                try self.passOverOwnWrites(from: before, quietThrough: quietThrough, in: db)
                try self.pruneHistory(in: db)
                guard page.changes.count < limit else { return (false, nil) }
                // Every change of the snapshot is in: as after a pull that finds nothing.
                let more = try page.horizon.map { try self.forgetTombstones(below: $0, in: db) } ?? false
                // Forgetting tombstones leaves the push's start as it is.
                return (more, try PushStart(in: db))
            }
            if page.changes.count < limit {
                if moreTombstones, let horizon = page.horizon { try await forgetTombstones(below: horizon) }
                return (true, pushStart)
            }
        }
        return (false, nil)
    }

    /// Marks the tombstones made since the last pull with `horizon.xmax` and forgets those
    /// whose mark is at or below `horizon.xmin`: the pull found nothing more, so the store
    /// holds every change of every transaction below it (see ``Tombstones``).
    ///
    /// A transaction forgets at most ``PostgresSharing/tombstonesPerTransaction``, so that other writers of
    /// the store wait for none long; a round does at most ``tombstoneBatchesPerRound`` of
    /// them, and wakes another round for the rest, so that local saves are pushed between
    /// them. (A desktop that took a million deletes used to forget one batch at each pull
    /// that found nothing more, and kept the rest until that many more rounds.)
    private func forgetTombstones(below horizon: ServerChangeLog.Horizon) async throws {
        guard try readNow({ db in try Tombstones.needWork(consumedBelow: horizon.xmin, in: db) }) else { return }
        for _ in 0..<Self.tombstoneBatchesPerRound {
            guard try await write({ db in try self.forgetTombstones(below: horizon, in: db) }) else { return }
            madeProgress()
        }
        wake.yield()
    }

    /// How many transactions of ``PostgresSharing/tombstonesPerTransaction`` tombstones a
    /// round forgets at most.
    static let tombstoneBatchesPerRound = 4

    /// ``forgetTombstones(below:)`` in the current write transaction: one batch. Whether
    /// it was full (more may be left).
    private nonisolated func forgetTombstones(below horizon: ServerChangeLog.Horizon, in db: Database) throws -> Bool {
        guard try Tombstones.needWork(consumedBelow: horizon.xmin, in: db) else { return false }
        try Tombstones.mark(horizon: horizon.xmax, in: db)
        let limit = sharing.tombstonesPerTransaction
        return try Tombstones.prune(consumedBelow: horizon.xmin, limit: limit, model: model, in: db) >= limit
    }

    /// Keeps the store's history to its limit as pulled changes add to it (a save does the
    /// same for its own), but for the local changes not pushed yet: the outbox reads them
    /// there (without a pushed token, it compares every object with its base instead). A
    /// desktop following others for long would otherwise keep every change it took.
    nonisolated func pruneHistory(in db: Database) throws {
        let pushed = try SharingState.value(.pushedThrough, in: db) == nil ? Int64.max : SharingState.pushedThrough(in: db)
        try store.pruneHistoryIfNeeded(db, keepingAfter: pushed)
    }

    /// The entities whose changes by this store's own pushes a pull leaves out: those
    /// without an ownership (a push that changes an owned row may hide it, or rows that
    /// follow it, from this role, in the same transaction).
    nonisolated var skippableEntities: [String] {
        model.entities.filter { $0.ownership == nil }.map(\.name)
    }

    /// A merge of `changes` into the store, whose relationships may name any of them.
    nonisolated func merge(arriving changes: [ServerChange]) -> ServerRowMerge {
        var merge = ServerRowMerge(model: model, policy: sharing.mergePolicy, limits: sharing.limits)
        merge.arriving = Set(changes.lazy.filter { !$0.kind.removes && $0.problem == nil }.map(\.object))
        return merge
    }

    /// The objects that relationships in `changes` name and that neither `changes` nor the
    /// store has, by entity. The store is read only when relationships name objects
    /// outside `changes`: a page of changes to rows that name none costs no read.
    nonisolated func unknownTargets(of changes: [ServerChange]) throws -> [String: Set<UUID>] {
        let arriving = Set(changes.lazy.filter { !$0.kind.removes }.map(\.object))
        var named: [String: Set<UUID>] = [:]
        for change in changes where !change.kind.removes {
            guard let entity = model.entity(named: change.entity) else { continue }
            for relationship in entity.relationships where model.storesForeignKey(relationship, of: entity) {
                guard case .string(let text)? = change.values[relationship.name], let id = UUID(uuidString: text),
                      !arriving.contains(id) else { continue }
                named[relationship.destinationEntity, default: []].insert(id)
            }
        }
        guard !named.isEmpty else { return [:] }
        return try readNow { db in
            try named.mapValues { ids in try ids.filter { try GlobalIDs.object(for: $0, in: db) == nil } }.filter { !$0.value.isEmpty }
        }
    }

    /// Which of `objects` the server's tables hold.
    func existingObjects(_ objects: [String: Set<UUID>], on connection: PostgresConnection) async throws -> Set<UUID> {
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
    func resync(on connection: PostgresConnection) async throws {
        status(.resyncing)
        logger.notice("sharing: the server's log was pruned past this store's cursor; resyncing from its tables")
        let inFlight = try await store.database.read { db in try SharingState.pushInFlight(in: db) }
        var applied: SharingState.PushInFlight?
        var taken = 0
        let (cursor, onServer) = try await store.database.withLargeWriteCheckpoints { try await onThePool {
            try await log.snapshot(on: connection, logger: logger) { changes, objects in
                // A push of counters whose end is not taken yet, which the server applied
                // before the snapshot (its identity recorded): every row of the snapshot holds it.
                if taken == 0, let inFlight, try await log.pushWasApplied(inFlight.id, on: connection, logger: logger) { applied = inFlight }
                try await write { [applied] db in try db.withLargeWriteCache {
                    var merge = ServerRowMerge(model: self.model, policy: self.sharing.mergePolicy, limits: self.sharing.limits)
                    merge.arriving = objects.ids
                    try merge.lookUp(changes, in: db)
                    merge.pushInFlight = try SharingState.pushInFlight(in: db).flatMap { $0.id == applied?.id ? $0 : nil }
                    merge.pushVersions = (applied?.deltas.keys).map { Dictionary(uniqueKeysWithValues: $0.map { ($0, Int64.min) }) } ?? [:]
                    for change in changes { try merge.take(change, in: db) }
                    try merge.finish(in: db)
                    try self.pruneHistory(in: db)
                } }
                taken += changes.count
                madeProgress()
                // A snapshot of more than one page is a long transfer: how far it got is shown.
                if objects.count > changes.count { report(SharingStatus.Transfer(direction: .taking, done: taken, total: objects.count)) }
            }
        } }
        try await write { db in
            var merge = ServerRowMerge(model: self.model, policy: self.sharing.mergePolicy, limits: self.sharing.limits)
            for (entityName, id) in try SharingState.basedObjects(in: db) where !onServer.ids.contains(id) {
                guard let entity = model.entity(named: entityName),
                      let base = try SharingState.base(of: id, entity: entity, model: model, in: db) else { continue }
                // Of an entity with an ownership, it may only be hidden from this role: it
                // may come back at its version when shared again.
                try merge.take(ServerChange(cursor: .start, entity: entityName, object: id, kind: entity.ownership == nil ? .delete : .hide,
                                            version: base.version + 1,
                                            changedProperties: [], values: [:]), in: db)
            }
            try merge.finish(in: db)
            try SharingState.setCursor(cursor, in: db)
        }
    }
}
