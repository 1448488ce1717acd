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
