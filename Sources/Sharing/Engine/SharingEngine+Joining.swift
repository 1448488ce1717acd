import Foundation
import GRDB
import Logging
import ObjectStore
import PostgresNIO

extension SharingEngine {
    /// Joins the database: an empty one gets this store's objects, the first of them pushed
    /// under a lock so that two desktops joining at once do not both seed it; a store
    /// holding only its initial contents gives them up for the server's objects; a store
    /// with data of its own keeps it and pushes it beside the server's.
    func join(on connection: PostgresConnection, identity: String) async throws {
        if try await seedIfEmpty(on: connection, identity: identity) {
            logger.info("sharing: seeded \(sharing.configuration) with this store's objects")
            return
        }
        // Page by page, each in a transaction of its own: the list fills as they come, and a
        // join cut short (the process killed) starts again and skips the pages taken, by
        // their versions. The store counts as joined once the last is in.
        var seedOnly: Bool?
        // With a seed given up: the history token through which the store holds nothing of
        // its own to push (the seed's deletes, the server's rows). It follows the pages until
        // a save made here comes in between two of them; that save, and what follows, is
        // pushed.
        var pushedThrough: Int64?
        var taken = 0
        // The IDs of the objects a relationship may name only: a relationship of a page may
        // name one of a later page.
        let named = Set(model.entities.flatMap { entity in
            entity.relationships.filter { model.storesForeignKey($0, of: entity) }.map(\.destinationEntity)
        })
        let (cursor, objects) = try await store.database.withLargeWriteCheckpoints { try await onThePool {
            try await log.snapshot(on: connection, identifying: named, logger: logger) { changes, objects in
                (seedOnly, pushedThrough) = try await self.write { [seedOnly, pushedThrough] db in try db.withLargeWriteCache {
                    let before = try PersistentStore.currentHistoryToken(in: db)
                    // Checked in the transaction that gives the seed up (the first page's): a
                    // save made before it is data of the store's own, kept and pushed.
                    let giveUp = try seedOnly ?? self.store.holdsOnlyInitialContents(in: db)
                    if giveUp && seedOnly == nil {
                        for entity in self.model.entities { try db.execute(sql: "DELETE FROM \(entity.name.quotedDatabaseIdentifier)") }
                    }
                    var merge = ServerRowMerge(model: self.model, policy: self.sharing.mergePolicy, limits: self.sharing.limits)
                    merge.arriving = objects.ids
                    try merge.lookUp(changes, in: db)
                    for change in changes { try merge.take(change, in: db) }
                    try merge.finish(in: db)
                    let nothingOwnSince = seedOnly == nil || pushedThrough == before
                    let through = giveUp && nothingOwnSince ? try PersistentStore.currentHistoryToken(in: db) : pushedThrough
                    // (Without a token, every object is compared with its base: any may go.)
                    try self.store.pruneHistoryIfNeeded(db, keepingAfter: through ?? .max)
                    return (giveUp, through)
                } }
                taken += changes.count
                madeProgress()
                // A snapshot of more than one page is a long transfer: how far it got is shown.
                if objects.count > changes.count { report(SharingStatus.Transfer(direction: .taking, done: taken, total: objects.count)) }
            }
        } }
        try await write { [seedOnly, pushedThrough] db in
            try SharingState.setCursor(cursor, in: db)
            try SharingState.set(.serverIdentity, identity, in: db)
            // A seed given up is not pushed, nor the server's rows; a save made during the
            // join is. Data of the store's own is, all of it (a store whose server was
            // emptied meanwhile keeps what it has and pushes it).
            try SharingState.set(.pushedThrough, seedOnly == true ? pushedThrough.map(String.init) : nil, in: db)
        }
        logger.info("sharing: joined \(sharing.configuration), took \(objects.count) objects")
    }

    /// Seeds the database when it is empty, under an advisory lock: its first pass of
    /// objects only. The server is no longer empty once they commit, and the round's push
    /// sends the rest piece by piece (`pushedThrough` stays unset: every object is compared
    /// with its base, and those sent here have one). False when the server has objects (or
    /// this desktop may not write).
    private func seedIfEmpty(on connection: PostgresConnection, identity: String) async throws -> Bool {
        try await connection.withTransaction(logger: logger) { connection -> Bool in
            try await connection.query("SELECT pg_advisory_xact_lock(\(ServerSchema.advisoryLockKey + 1))", logger: logger)
            // Before the server is found empty, not after: each statement sees the commits
            // made before it, and a transaction that commits in between (another desktop's
            // push) must sort after the cursor. (This one's own push, after it too, is left
            // out of the pulls: its rows are taken here.)
            let cursor = try await self.horizonCursor(connection)
            guard await self.permission.readOnlyReason == nil, try await self.serverIsEmpty(connection) else { return false }
            let operations = try await self.write { db in
                var scan = try self.outbox.scan(everything: true, in: db)
                return try self.outbox.pass(of: &scan, limit: Self.passLimit, in: db)
            }
            let (written, conflicts) = try await self.writer.push(operations, on: connection)
            let transaction = try await self.log.currentTransaction(on: connection, logger: logger)
            await self.sent(operations.count)
            try await self.write { db in
                try self.takeWritten(written, sent: operations, conflicts: conflicts, in: db)
                try SharingState.setCursor(cursor, in: db)
                try SharingState.set(.serverIdentity, identity, in: db)
                // Not pulled back (should the commit fail, no change has that transaction).
                if let transaction { try SharingState.addTakenPush(transaction, in: db) }
            }
            return true
        }
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
}
