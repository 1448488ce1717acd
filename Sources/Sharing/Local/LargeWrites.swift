import GRDB
#if canImport(Glibc)
import Glibc
#endif

extension Database {
    /// The page cache a write of many rows gets, in KiB: a join's page of 5,000 objects
    /// writes a row, a global ID, a base and a history entry for each, into indexes all over
    /// the file.
    static let largeWriteCacheKiB = 65_536

    /// How many pages the WAL may hold before a checkpoint while a join's or a resync's
    /// pages are written (``DatabaseWriter/withLargeWriteCheckpoints(isolation:_:)``):
    /// 64 MiB of 4 KiB pages, as much as their page cache.
    static let largeWriteCheckpointPages = 16_384

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
    /// Runs `body`, which commits many large transactions one after another (a join's or a
    /// resync's pages), with the store's WAL checkpointed once it holds
    /// ``Database/largeWriteCheckpointPages`` pages rather than SQLite's 1,000, and then as
    /// before, also when `body` throws or its task is cancelled.
    ///
    /// SQLite checkpoints at the commit that takes the WAL past the limit, on the writer's
    /// thread: with 1,000 pages, every page of a join (5,000 objects, their rows, indexes,
    /// bases and global IDs: thousands of pages) copied its whole WAL into the database file
    /// and synced it. A third of the writer's time at a million objects was its commits, half
    /// of that the checkpoints. With checkpoints further apart, a database page that several
    /// pages of the join change (an index's leaf, the tables' ends) is copied once for them
    /// all: a million-object join took 33–35 s against 38–43 s (alternating runs on one
    /// machine), its last checkpoint included. At 200,000 objects, whose whole file fits in
    /// 64 MiB, the checkpoint put off comes at the end and the join takes as long either way.
    ///
    /// The setting is the writer connection's, which every save of the store goes through:
    /// saves made meanwhile (a person tapping while the list fills) commit without a
    /// checkpoint too, and the first commit after `body` checkpoints what is left.
    func withLargeWriteCheckpoints<T: Sendable>(isolation: isolated (any Actor)? = #isolation,
                                                _ body: () async throws -> T) async throws -> T {
        let before = try await writeWithoutTransaction { db in
            let before = try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? 1_000
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Database.largeWriteCheckpointPages)")
            return before
        }
        // Given back in a task of its own: in a cancelled task (a session stopped while it
        // joins), GRDB refuses to start a write.
        let giveBack = { [self] in
            try await Task.detached { [self] in
                try await writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = \(before)") }
            }.value
        }
        let result: T
        do {
            result = try await body()
        } catch {
            try? await giveBack()
            throw error
        }
        try await giveBack()
        return result
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
