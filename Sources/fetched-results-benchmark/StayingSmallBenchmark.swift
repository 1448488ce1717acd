import Foundation
import GRDB
import ObjectStore
import PostgresNIO
import Sharing

/// Staying small (#29): `--small-rows` teams inserted on desktop A, shared, and deleted
/// again, with desktop B following, beside two desktops and a database that never held them
/// (the same 1,000 teams that stay). Sizes are what the files hold (SQLite's pages in use;
/// PostgreSQL's tables and indexes after `VACUUM FULL`, which gives the space of deleted
/// rows back), the server's change log apart: it keeps `PostgresSharing.logLimit` changes
/// by design.
func stayingSmallFigures(_ options: Options, folder: URL, report: inout Report) throws {
    guard let url = ProcessInfo.processInfo.environment["FETCHED_RESULTS_POSTGRES_URL"] else {
        print("small: FETCHED_RESULTS_POSTGRES_URL is not set (scripts/benchmark starts a server); skipped")
        return
    }
    let rows = options.smallRows
    print("measuring \(rows.formatted()) teams inserted and deleted through a shared store...")
    let figures = try blocking { try await measureStayingSmall(rows: rows, serverURL: url, folder: folder, seed: options.seed) }
    for (name, churned, fresh) in [("desktop A (inserted and deleted them)", figures.storeA, figures.freshA),
                                   ("desktop B (followed)", figures.storeB, figures.freshB),
                                   ("the server's tables, the log apart", figures.serverTables, figures.freshServerTables)] {
        report.add(.init(figure: "after \(rows.formatted()) inserts and deletes: \(name)", measured: bytes(churned),
                         baseline: "never held them \(bytes(fresh))", target: "≤ 1.1× (\(ratio(Double(churned) / Double(fresh))))",
                         passed: Double(churned) <= 1.1 * Double(fresh)))
    }
    report.add(.init(figure: "  of which the stores' histories (kept to their limit, for their retention)", measured: "A \(bytes(figures.historyA)), B \(bytes(figures.historyB))",
                     baseline: "\(bytes(figures.freshHistory)) each"))
    report.add(.init(figure: "  the server's change log, pruned to its limit", measured: bytes(figures.serverLog),
                     baseline: "never held them \(bytes(figures.freshServerLog))"))
    report.add(.init(figure: "  tombstones and global IDs left on A and B", measured: "\(figures.leftOver)", target: "0", passed: figures.leftOver == 0))
}

private struct StayingSmallFigures: Sendable {
    var storeA = 0, storeB = 0, freshA = 0, freshB = 0
    var historyA = 0, historyB = 0, freshHistory = 0
    var serverTables = 0, freshServerTables = 0, serverLog = 0, freshServerLog = 0
    var leftOver = 0
}

private func measureStayingSmall(rows: Int, serverURL: String, folder: URL, seed: UInt64) async throws -> StayingSmallFigures {
    let server = try ServerConfiguration(url: serverURL)
    let logger = Logger(label: "benchmark")
    var figures = StayingSmallFigures()
    let kept = 1_000

    let churned = try await scratchDatabase(server, logger: logger)
    let (a, b) = try await twoDesktops(on: churned, named: "small", keeping: kept, folder: folder, seed: seed)
    // The churn: inserted in saves of 10,000 (the store's history keeps its limit as a save
    // would), shared, then deleted the same way.
    for start in stride(from: 0, to: rows, by: 10_000) {
        try await a.store.database.write { db in
            let insert = try db.makeStatement(sql: #"INSERT INTO "Team" ("teamName", "qualifyingZone", wins) VALUES (?, 'UEFA', 0)"#)
            for n in start..<min(rows, start + 10_000) { try insert.execute(arguments: ["Churn \(n)"]) }
            try a.store.pruneHistoryIfNeeded(db)
        }
    }
    try await synchronized(a.session)
    try await synchronized(b.session)
    for _ in stride(from: 0, to: rows, by: 10_000) {
        try await a.store.database.write { db in
            try db.execute(sql: #"DELETE FROM "Team" WHERE Z_PK IN (SELECT Z_PK FROM "Team" WHERE "teamName" LIKE 'Churn %' LIMIT 10000)"#)
            try a.store.pruneHistoryIfNeeded(db)
        }
    }
    for _ in 0..<2 {
        try await synchronized(a.session)
        try await synchronized(b.session)
    }
    // What a desktop does every five minutes.
    try await withConnection(churned, logger: logger) { connection in
        _ = try await ServerChangeLog(model: WorldCupStore.model).prune(keepingLast: PostgresSharing(churned).logLimit, on: connection, logger: logger)
    }
    for desktop in [a, b] { try await synchronized(desktop.session) }
    // The baseline: two desktops sharing the same 1,000 teams through a database that never
    // held the others, made now so that the wait below is the same for all four.
    let fresh = try await scratchDatabase(server, logger: logger)
    let (c, d) = try await twoDesktops(on: fresh, named: "small-fresh", keeping: kept, folder: folder, seed: seed)
    // Life goes on: a history's retention later, one tap on A and on C, which B and D follow.
    // That write and the pull's are the first ones the retention after the history's changes
    // (PersistentStore.historyRetention), and prune them.
    let retention = PersistentStore.defaultHistoryRetention
    print("  waiting \(Int(retention)) s, the history's retention, for one more change on each desktop...")
    try await Task.sleep(for: .seconds(retention + 1))
    for (writer, follower) in [(a, b), (c, d)] {
        try tapOnce(writer.store)
        try await synchronized(writer.session)
        try await synchronized(follower.session)
    }
    for desktop in [a, b, c, d] { await desktop.session.stop() }
    for desktop in [a, b] {
        let (tombstones, ids, teams) = try await desktop.store.database.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT (SELECT count(*) FROM Z_SHARED_BASE WHERE \"row\" IS NULL), (SELECT count(*) FROM Z_GLOBAL_ID), (SELECT count(*) FROM \"Team\")")
            return (row?[0] ?? 0, row?[1] ?? 0, row?[2] ?? 0) as (Int, Int, Int)
        }
        figures.leftOver += tombstones + ids - teams
        if tombstones + ids != teams { print("  \(desktop.store.url?.lastPathComponent ?? ""): \(tombstones) tombstones, \(ids) global IDs, \(teams) teams") }
    }
    (figures.storeA, figures.storeB) = (try pagesInUse(a.store), try pagesInUse(b.store))
    (figures.historyA, figures.historyB) = (try historyBytes(a.store), try historyBytes(b.store))
    (figures.serverTables, figures.serverLog) = try await serverSizes(churned, logger: logger)
    (figures.freshA, figures.freshB) = (try pagesInUse(c.store), try pagesInUse(d.store))
    figures.freshHistory = try historyBytes(c.store)
    (figures.freshServerTables, figures.freshServerLog) = try await serverSizes(fresh, logger: logger)
    return figures
}

/// Desktop A, a store of `kept` teams shared with `database`, and desktop B, joined to it.
private func twoDesktops(on database: ServerConfiguration, named name: String, keeping kept: Int, folder: URL,
                         seed: UInt64) async throws -> ((store: PersistentStore, session: SharingSession), (store: PersistentStore, session: SharingSession)) {
    var sharing = PostgresSharing(database)
    sharing.logger.logLevel = .warning
    let a = try PersistentStore(url: folder.appendingPathComponent("\(name)-a.sqlite"), model: WorldCupStore.model)
    try WorldCupStore.fill(a, rows: kept, seed: seed)
    let sessionA = try a.share(through: sharing)
    try await synchronized(sessionA)
    let b = try PersistentStore(url: folder.appendingPathComponent("\(name)-b.sqlite"), model: WorldCupStore.model)
    let sessionB = try b.share(through: sharing)
    try await synchronized(sessionB)
    return ((a, sessionA), (b, sessionB))
}

/// One +1 on the first team by name, saved as the viewer saves a tap.
private func tapOnce(_ store: PersistentStore) throws {
    let context = ObjectContext(store: store, queue: DispatchQueue(label: "tap"))
    try context.performAndWait {
        var request = FetchRequest<ManagedObject>(entityName: "Team", sortDescriptors: [FetchSortDescriptor(key: "teamName")])
        request.fetchLimit = 1
        guard let team = try context.fetch(request).first, case .integer(let wins) = team.attributeValue(forKey: "wins") else {
            throw OptionsError("small: no team to tap")
        }
        try team.setValue(wins + 1, forKey: "wins")
        try context.save()
    }
}

/// The bytes of the store file's pages in use (its free pages are left out: SQLite keeps
/// them for its next writes unless the file is vacuumed).
private func pagesInUse(_ store: PersistentStore) throws -> Int {
    try store.database.read { db in
        let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0, free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
        return (pages - free) * (try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096)
    }
}

/// The bytes of the store's history table and its indexes (the changes it keeps for the
/// controllers and the outbox: at most `historyLimit` and half as many again, and only
/// until `historyRetention` after the last write).
private func historyBytes(_ store: PersistentStore) throws -> Int {
    try store.database.read { db in
        try Int.fetchOne(db, sql: "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name = 'Z_HISTORY')") ?? 0
    }
}

/// The bytes of the database's tables and indexes after `VACUUM FULL`: every table but the
/// change log, and the change log.
private func serverSizes(_ database: ServerConfiguration, logger: Logger) async throws -> (tables: Int, log: Int) {
    try await withConnection(database, logger: logger) { connection in
        try await connection.query("VACUUM FULL", logger: logger)
        let rows = try await connection.query("""
            SELECT coalesce(sum(pg_total_relation_size(c.oid)) FILTER (WHERE c.relname <> 'Z_CHANGES'), 0)::bigint,
                   coalesce(sum(pg_total_relation_size(c.oid)) FILTER (WHERE c.relname = 'Z_CHANGES'), 0)::bigint
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relkind = 'r' AND n.nspname = current_schema()
            """, logger: logger)
        for try await (tables, log) in rows.decode((Int64, Int64).self) { return (Int(tables), Int(log)) }
        return (0, 0)
    }
}

private func withConnection<T>(_ database: ServerConfiguration, logger: Logger, _ body: (PostgresConnection) async throws -> T) async throws -> T {
    let connection = try await PostgresConnection.connect(configuration: try database.connection, id: 1, logger: logger)
    do {
        let result = try await body(connection)
        try await connection.close()
        return result
    } catch {
        try? await connection.close()
        throw error
    }
}

private func bytes(_ count: Int) -> String {
    count >= 1 << 20 ? String(format: "%.1f MB", Double(count) / 1_048_576) : String(format: "%.0f KB", Double(count) / 1024)
}
