import GRDB
#if canImport(Glibc)
import Glibc
#endif

extension Database {
    /// The page cache a write of many rows gets, in KiB: a join's page of 5,000 objects
    /// writes a row, a global ID, a base and a history entry for each, into indexes all over
    /// the file.
    static let largeWriteCacheKiB = 65_536

    /// Runs `body`, a write of many rows, with a page cache of ``largeWriteCacheKiB``, and
    /// then gives the cache back to its size before.
    ///
    /// With SQLite's default cache (2 MiB), a transaction that changes more pages than fit
    /// spills them to the WAL while it runs and reads them back for later rows: a join of
    /// 200,000 objects took 17 s instead of 12.6 s, each page longer than the one before.
    /// The cache is given back at the end, so that a desktop that joined once does not keep
    /// 64 MiB for the small writes that follow. The thread runs `body` as a batch job
    /// (``asBatchJob(_:)``): a window following the store keeps the processor when it wakes.
    func withLargeWriteCache<T>(_ body: () throws -> T) throws -> T {
        let before = try Int.fetchOne(self, sql: "PRAGMA cache_size") ?? -2_000
        try execute(sql: "PRAGMA cache_size = -\(Self.largeWriteCacheKiB)")
        defer { try? execute(sql: "PRAGMA cache_size = \(before)") }
        return try asBatchJob(body)
    }
}

extension DatabaseWriter {
    /// Runs `body`, many transactions of many rows (a join's or a resync's pages), with the
    /// writer checkpointing the WAL into the database file every 16,384 pages (64 MiB), not
    /// every 1,000 (SQLite's default); then as before.
    ///
    /// A page of 5,000 objects writes about 1.5 MiB: with SQLite's default, every second or
    /// third page's commit copied into the file again the pages it shares with the pages
    /// before (the b-trees' last pages, their parents). Taking the pages of a 200,000-object
    /// join took 2.93–3.30 s so, 2.56–2.59 s with this. The WAL file keeps its size after,
    /// for later writes, as SQLite's does.
    func withFewerCheckpoints<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async throws -> T {
        let before = try await write { db in try Self.setCheckpointPages(16_384, in: db) }
        do {
            let result = try await body()
            try await write { db in _ = try Self.setCheckpointPages(before, in: db) }
            return result
        } catch {
            _ = try? await write { db in try Self.setCheckpointPages(before, in: db) }
            throw error
        }
    }

    /// Sets how many WAL pages a commit lets build up before it checkpoints them (`PRAGMA
    /// wal_autocheckpoint`, the writer's connection), and returns the number before.
    private static func setCheckpointPages(_ pages: Int, in db: Database) throws -> Int {
        let before = try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? 1_000
        try db.execute(sql: "PRAGMA wal_autocheckpoint = \(pages)")
        return before
    }
}

/// Runs `body` on the calling thread scheduled as a batch job (Linux's `SCHED_BATCH`), then
/// as before: it never preempts a thread that wakes (a window's main loop), which takes the
/// processor from it at once.
func asBatchJob<T>(_ body: () throws -> T) rethrows -> T {
    #if os(Linux)
    let SCHED_BATCH: Int32 = 3   // <sched.h>, _GNU_SOURCE only: not imported
    let before = sched_getscheduler(0)
    var parameters = sched_param(sched_priority: 0)
    guard before == SCHED_OTHER, sched_setscheduler(0, SCHED_BATCH, &parameters) == 0 else { return try body() }
    defer { _ = sched_setscheduler(0, SCHED_OTHER, &parameters) }
    #endif
    return try body()
}
