import FetchedResults
import Foundation
import GRDB
import ObjectStore
import PostgresNIO
import Sharing

/// Two desktops sharing through PostgreSQL (`$FETCHED_RESULTS_POSTGRES_URL`, which
/// `scripts/benchmark` starts with scripts/with-postgres): how soon a save on one shows in a
/// controller on the other, beside a controller following the same store, and how fast a
/// 10,000-row import is pushed, beside the import itself.
func sharingBenchmark(_ options: Options, folder: URL, report: inout Report) throws {
    guard let url = ProcessInfo.processInfo.environment["FETCHED_RESULTS_POSTGRES_URL"] else {
        print("sharing: FETCHED_RESULTS_POSTGRES_URL is not set (scripts/benchmark starts a server); skipped")
        return
    }
    print("measuring sharing through PostgreSQL...")
    let figures = try blocking { try await measureSharing(serverURL: url, folder: folder) }
    let sorted = figures.latencies.sorted()
    let median = sorted[sorted.count / 2], p95 = sorted[sorted.count * 95 / 100]
    let local = figures.localLatencies.sorted()
    let localMedian = local[local.count / 2], localP95 = local[local.count * 95 / 100]
    let roundTrip = Measure.median(figures.roundTrips)
    report.add(.init(figure: "a save on desktop A shown by a controller on B, median", measured: duration(median),
                     baseline: "same store \(duration(localMedian)); a psql round trip \(duration(roundTrip))", target: "", passed: nil))
    report.add(.init(figure: "  p95 of \(sorted.count) saves", measured: duration(p95), baseline: "same store \(duration(localP95))",
                     target: "≤ 50 ms", passed: p95 <= 0.050))
    let pushRate = Double(figures.importRows) / figures.pushSeconds
    report.add(.init(figure: "push of a \(figures.importRows)-row import", measured: "\(duration(figures.pushSeconds)), \(Int(pushRate)) rows/s",
                     baseline: "the import \(duration(figures.importSeconds))", target: "≥ 1,000 rows/s", passed: pushRate >= 1_000))
    report.add(.init(figure: "  … and on desktop B", measured: duration(figures.pullSeconds)))
    report.add(.init(figure: "\(figures.taps) taps on one team, half on each desktop at once, until both hold the sum",
                     measured: duration(figures.tapsSeconds), baseline: "the taps' saves \(duration(figures.tapSavesSeconds))",
                     target: "every tap counts", passed: figures.tapsCounted == figures.taps))
    try shareScaleFigures(options, serverURL: url, folder: folder, report: &report)
}

struct SharingFigures: Sendable {
    var latencies: [Double] = []
    /// `SELECT 1` on a connection of its own, as psql would send it.
    var roundTrips: [Double] = []
    var localLatencies: [Double] = []
    var importRows = 10_000
    var importSeconds = 0.0
    var pushSeconds = 0.0
    var pullSeconds = 0.0
    var taps = 1_000
    var tapsCounted = 0
    var tapsSeconds = 0.0
    var tapSavesSeconds = 0.0
}

private func measureSharing(serverURL: String, folder: URL) async throws -> SharingFigures {
    let server = try ServerConfiguration(url: serverURL)
    let logger = Logger(label: "benchmark")
    let name = "bench_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    let admin = try await PostgresConnection.connect(configuration: try server.connection, id: 1, logger: logger)
    try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
    try await admin.close()
    defer {
        Task {
            let admin = try await PostgresConnection.connect(configuration: try server.connection, id: 2, logger: logger)
            try await admin.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: logger)
            try await admin.close()
        }
    }
    var configuration = server
    configuration.database = name

    let a = try PersistentStore(url: folder.appendingPathComponent("a.sqlite"), model: WorldCupStore.model)
    try WorldCupStore.fill(a, rows: 1_000, seed: 1)
    let b = try PersistentStore(url: folder.appendingPathComponent("b.sqlite"), model: WorldCupStore.model)
    var sharing = PostgresSharing(configuration)
    sharing.logger.logLevel = .warning
    let sessionA = try a.share(through: sharing)
    try await sessionA.synchronize()
    let sessionB = try b.share(through: sharing)
    try await sessionB.synchronize()

    // A controller on B following its store as `watch` does, and
    // one on A's own store (the baseline: the same follower without a server in between).
    let onB = try Follower(store: b)
    let onA = try Follower(store: a)
    let writer = ObjectContext(store: a, queue: DispatchQueue(label: "writer"))
    var figures = SharingFigures()
    let teams = try writer.performAndWait {
        var request = FetchRequest<ManagedObject>(entityName: "Team", sortDescriptors: [FetchSortDescriptor(key: "teamName")])
        request.fetchLimit = 50
        return Array(try writer.fetch(request))
    }
    figures.roundTrips = try await roundTrips(configuration, logger: sharing.logger)
    try await measureLatencies(of: teams, writer: writer, onA: onA, onB: onB, into: &figures)
    try await measureConcurrentTaps(on: teams[0], writer: writer, stores: (a, b), into: &figures)
    try await measureImport(stores: (a, b), sessions: (sessionA, sessionB), into: &figures)
    await sessionA.stop()
    await sessionB.stop()
    withExtendedLifetime((onA, onB)) {}
    return figures
}

/// 50 round trips of `SELECT 1` to the server.
private func roundTrips(_ configuration: ServerConfiguration, logger: Logger) async throws -> [Double] {
    var roundTrips: [Double] = []
    let probe = try await PostgresConnection.connect(configuration: try configuration.connection, id: 99, logger: logger)
    for _ in 0..<50 {
        let start = ContinuousClock.now
        for try await _ in try await probe.query("SELECT 1", logger: logger).decode(Int.self) {}
        roundTrips.append(seconds(ContinuousClock.now - start))
    }
    try await probe.close()
    return roundTrips
}

/// 200 saves on A, each until both followers showed it: through the server (B) and on A's
/// own store (the baseline).
private func measureLatencies(of teams: [ManagedObject], writer: ObjectContext, onA: Follower, onB: Follower,
                              into figures: inout SharingFigures) async throws {
    for number in 1...200 {
        let (seenB, seenA) = (onB.batches, onA.batches)
        let saved = try writer.performAndWait {
            try teams[number % teams.count].setValue(1_000 + number, forKey: "wins")
            try writer.save()
            return ContinuousClock.now
        }
        let deadline = saved + .seconds(10)
        while onB.batches == seenB || onA.batches == seenA {
            if ContinuousClock.now > deadline { throw OptionsError("sharing: save \(number) did not show on desktop B within 10 s") }
            try await Task.sleep(for: .milliseconds(1))
        }
        figures.latencies.append(seconds(onB.lastBatch - saved))
        figures.localLatencies.append(seconds(onA.lastBatch - saved))
        try await Task.sleep(for: .milliseconds(Int.random(in: 20...60)))
    }
}

/// 1,000 taps on one team, 500 on each desktop at the same time, each a save: until both
/// stores hold all of them (wins are a counter: none is lost to a conflict).
private func measureConcurrentTaps(on team: ManagedObject, writer: ObjectContext, stores: (PersistentStore, PersistentStore),
                                   into figures: inout SharingFigures) async throws {
    let (a, b) = stores
    let tappedName = writer.performAndWait { () -> String in
        if case .string(let name) = team.attributeValue(forKey: "teamName") { return name }
        return ""
    }
    let winsOf = { (store: PersistentStore) in
        try await store.database.read { db in try Int.fetchOne(db, sql: #"SELECT wins FROM "Team" WHERE "teamName" = ?"#, arguments: [tappedName]) ?? 0 }
    }
    let winsBefore = try await winsOf(a)
    let tapsStarted = ContinuousClock.now
    let perDesktop = figures.taps / 2
    let saves = try await withThrowingTaskGroup(of: Duration.self) { group in
        for store in [a, b] {
            group.addTask {
                let context = ObjectContext(store: store, queue: DispatchQueue(label: "taps"))
                return try context.performAndWait {
                    let request = FetchRequest<ManagedObject>(entityName: "Team", predicate: try FetchPredicate(format: "teamName == %@", tappedName))
                    let team = try context.fetch(request)[0]
                    let start = ContinuousClock.now
                    for _ in 0..<perDesktop {
                        guard case .integer(let wins) = team.attributeValue(forKey: "wins") else { break }
                        try team.setValue(wins + 1, forKey: "wins")
                        try context.save()
                    }
                    return ContinuousClock.now - start
                }
            }
        }
        return try await group.reduce(Duration.zero) { max($0, $1) }
    }
    figures.tapSavesSeconds = seconds(saves)
    let sum = winsBefore + figures.taps
    let tapsDeadline = ContinuousClock.now + .seconds(60)
    while ContinuousClock.now < tapsDeadline {
        let counts = [try await winsOf(a), try await winsOf(b)]
        figures.tapsCounted = min(counts[0], counts[1]) - winsBefore
        if counts.allSatisfy({ $0 == sum }) { break }
        try await Task.sleep(for: .milliseconds(5))
    }
    figures.tapsSeconds = seconds(ContinuousClock.now - tapsStarted)
}

/// A 10,000-row import on A, pushed, then pulled by B.
private func measureImport(stores: (PersistentStore, PersistentStore), sessions: (SharingSession, SharingSession),
                           into figures: inout SharingFigures) async throws {
    let (a, b) = stores
    let (sessionA, sessionB) = sessions
    let started = ContinuousClock.now
    let rows = figures.importRows
    try await a.database.write { db in
        let insert = try db.makeStatement(sql: #"INSERT INTO "Team" ("teamName", "qualifyingZone", "wins") VALUES (?, 'Oceania', 0)"#)
        for row in 0..<rows { try insert.execute(arguments: ["Imported \(row)"]) }
    }
    let imported = ContinuousClock.now
    figures.importSeconds = seconds(imported - started)
    try await sessionA.synchronize()
    figures.pushSeconds = seconds(ContinuousClock.now - imported)
    try await sessionB.synchronize()
    while try await b.database.read({ db in try Int.fetchOne(db, sql: #"SELECT count(*) FROM "Team" WHERE "qualifyingZone" = 'Oceania'"#) ?? 0 }) < rows {
        try await Task.sleep(for: .milliseconds(10))
    }
    figures.pullSeconds = seconds(ContinuousClock.now - imported)
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// A controller on its own context following a store every 40 ms; counts its batches.
private final class Follower: FetchedResultsControllerDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var last = ContinuousClock.now
    private let context: ObjectContext
    private var controller: FetchedResultsController<ManagedObject>!
    private var following: ObservationToken?

    init(store: PersistentStore) throws {
        context = ObjectContext(store: store, queue: DispatchQueue(label: "follower"))
        try context.performAndWait {
            controller = FetchedResultsController(
                fetchRequest: FetchRequest<ManagedObject>(entityName: "Team", sortDescriptors: [FetchSortDescriptor(key: "qualifyingZone"), FetchSortDescriptor(key: "wins", ascending: false), FetchSortDescriptor(key: "teamName")]),
                managedObjectContext: context, sectionNameKeyPath: "qualifyingZone")
            controller.delegate = self
            try controller.performFetch()
            following = try context.followStore()
        }
    }

    var batches: Int { lock.withLock { count } }
    var lastBatch: ContinuousClock.Instant { lock.withLock { last } }

    func controller(_ controller: FetchedResultsController<ManagedObject>, didChangeContentWith batch: ChangeBatch) {
        lock.withLock {
            count += 1
            last = .now
        }
    }
}

/// Runs `body` to its end from synchronous code.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var result: Result<T, any Error>?
    Task {
        do { result = .success(try await body()) } catch { result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try result!.get()
}
