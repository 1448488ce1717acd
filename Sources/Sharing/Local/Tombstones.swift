import Foundation
import GRDB
import ObjectStore

/// Forgets the tombstones of deleted objects once no change the store may still pull can
/// need them, and the global IDs of those objects with them: a store that shares a list of
/// a million rows inserted and deleted ends about as small as one that never held them.
///
/// A tombstone (a base without a row, in `Z_SHARED_BASE`) keeps an older change of a deleted
/// object from bringing it back when it arrives after the delete: the log is in the order
/// of transaction IDs, and a transaction that wrote the object before it was deleted may
/// have a higher ID than the delete's. Such a transaction ended before the delete did (the
/// row's lock orders them), so before any server snapshot in which the delete had ended:
/// the snapshot of the pull that took the delete, or any snapshot taken after this store's
/// push of it. Its ID is below that snapshot's `xmax` (every transaction at or above it was
/// still to end). So, each time a pull finds nothing more to take (or takes a page that held
/// every change its snapshot had):
///
/// 1. ``mark(horizon:in:)`` gives every tombstone without one that pull snapshot's `xmax`:
///    every change that could bring it back is in a transaction below it.
/// 2. The store now holds every change of every transaction below the snapshot's `xmin`
///    (the oldest one still running): ``prune(consumedBelow:limit:model:in:)`` forgets the
///    tombstones marked at or below it.
///
/// On a server where no transaction is left running, `xmin` is `xmax`, and a tombstone is
/// forgotten at the end of the round that made it (the next round, for a delete this store
/// pushed). A transaction left open holds them all until it ends. One whose object still
/// has a row here is kept. A change of the object that arrives afterwards (its global ID
/// inserted again on the server, whose version starts above every delete it forgot: see
/// ``ServerSchema``) is taken as new.
enum Tombstones {
    /// The horizon column of `Z_SHARED_BASE`, NULL until ``mark(horizon:in:)``, and the
    /// index of tombstones by it (bases with a row are not in it).
    static func install(_ db: Database) throws {
        let base = SharingState.baseTable
        if try !db.columns(in: base).contains(where: { $0.name == "horizon" }) {
            try db.execute(sql: "ALTER TABLE \(base) ADD COLUMN horizon INTEGER")
        }
        try db.execute(sql: "CREATE INDEX IF NOT EXISTS Z_SHARED_TOMBSTONE ON \(base)(horizon) WHERE \"row\" IS NULL")
    }

    /// Whether some tombstone has no horizon yet, or one at or below `consumedBelow` (two
    /// reads of the index: the write is spared when there is nothing to do).
    static func needWork(consumedBelow: UInt64, in db: Database) throws -> Bool {
        let base = SharingState.baseTable
        if try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM \(base) WHERE \"row\" IS NULL AND horizon IS NULL)")) == true {
            return true
        }
        return try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM \(base) WHERE \"row\" IS NULL AND horizon <= ?)"),
                                 arguments: [Int64(clamping: consumedBelow)]) == true
    }

    /// Gives the tombstones that have no horizon yet `horizon`, the `xmax` of a server
    /// snapshot in which each one's delete had ended.
    static func mark(horizon: UInt64, in db: Database) throws {
        try db.cachedStatement(sql: "UPDATE \(SharingState.baseTable) SET horizon = ? WHERE \"row\" IS NULL AND horizon IS NULL")
            .execute(arguments: [Int64(clamping: horizon)])
    }

    /// How many tombstones one transaction forgets at most, unless set otherwise
    /// (`PostgresSharing.tombstonesPerTransaction`, which tests lower).
    static let pruneLimit = 50_000

    /// Forgets at most `limit` tombstones whose horizon is at or below `consumedBelow` (the
    /// store took every change of every transaction below it) and whose objects have no row
    /// here, and those objects' global IDs. Returns how many it forgot.
    @discardableResult
    static func prune(consumedBelow: UInt64, limit: Int, model: Model, in db: Database) throws -> Int {
        let base = SharingState.baseTable, ids = GlobalIDs.table
        var forgotten = 0
        for entity in model.entities {
            let table = entity.name.quotedDatabaseIdentifier
            let candidates = """
                SELECT b.id FROM \(base) b WHERE b."row" IS NULL AND b.horizon <= ?1 AND b.entity = ?2
                AND NOT EXISTS (SELECT 1 FROM \(ids) g JOIN \(table) t ON t.Z_PK = g.rowKey WHERE g.id = b.id AND g.entity = ?2)
                LIMIT ?3
                """
            try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS z_forgotten (id BLOB PRIMARY KEY) WITHOUT ROWID")
            try db.execute(sql: "DELETE FROM z_forgotten")
            try db.execute(sql: "INSERT INTO z_forgotten \(candidates)", arguments: [Int64(clamping: consumedBelow), entity.name, limit - forgotten])
            try db.execute(sql: "DELETE FROM \(ids) WHERE id IN (SELECT id FROM z_forgotten)")
            try db.execute(sql: "DELETE FROM \(base) WHERE id IN (SELECT id FROM z_forgotten)")
            forgotten += db.changesCount
            guard forgotten < limit else { break }
        }
        return forgotten
    }
}
