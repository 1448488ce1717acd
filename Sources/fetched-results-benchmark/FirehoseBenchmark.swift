import Foundation
import GRDB
import GtkBinding
import ObjectStore
import PostgresNIO
import Sharing

/// Sustained changes from four writer desktops, followed by a fifth (#29): each writer a
/// process of its own with its own store, saving stamped teams at `--firehose-rate` (2,600
/// a second each; 0: as fast as it can) for `--firehose-seconds`; the fifth is this process, its store shared
/// through the same database and followed by a controller on the main queue, in a GLib main
/// loop whose stalls are timed as in `--only live`.
func firehoseBenchmark(_ options: Options, folder: URL, report: inout Report) throws {
    guard let url = ProcessInfo.processInfo.environment["FETCHED_RESULTS_POSTGRES_URL"] else {
        print("firehose: FETCHED_RESULTS_POSTGRES_URL is not set (scripts/benchmark starts a server); skipped")
        return
    }
    let rate = options.firehoseRate > 0 ? "\(options.firehoseRate) changes/s each" : "as fast as they can"
    print("measuring \(FirehoseRun.writers) writer desktops saving \(options.firehoseBatch) teams a save, \(rate), for \(options.firehoseSeconds) s, followed by a fifth...")
    let run = FirehoseRun(serverURL: url, folder: folder, seconds: Double(options.firehoseSeconds),
                          batch: options.firehoseBatch, rate: options.firehoseRate)
    let figures = try MainActor.assumeIsolated { try run.run() }
    reportFirehose(figures, run: run, report: &report)
}

/// The firehose's figures.
struct FirehoseFigures: Sendable {
    /// Changes the writers saved, and the longest writer's saving time.
    var saved = 0
    var savingSeconds = 0.0
    /// A writer's save, p50 and p95 (of writer 0).
    var saveTimes = (p50: 0.0, p95: 0.0)
    /// Seconds from `go` until every writer's changes were on the server.
    var pushedSeconds = 0.0
    /// Updates the server's rows took (their versions' rise): a team saved again before its
    /// writer pushed it goes once.
    var serverUpdates = 0
    /// … of which while the writers were still saving (until the last said `saved`).
    var serverUpdatesWhileSaving = 0
    var follower = StampFollower.Figures()
    /// Seconds from `go` to the follower's last batch.
    var followedSeconds = 0.0
    /// The main loop's stalls from `go` until the follower had every change.
    var stalls: [Double] = []
    var residentStart = 0
    var residentEnd = 0
    /// Teams, and those whose stamp in the follower's store or controller differs from the server's at the end.
    var teams = 0
    var differing = 0
    var mostConnections = 0
}

/// One firehose run: the database, the follower's store (which seeds it with the writers'
/// teams), the writer processes, the main loop.
struct FirehoseRun: Sendable {
    static let writers = 4
    /// Teams each writer changes, in turn (a team is saved again after this many of its writer's changes).
    static let teamsPerWriter = 10_000

    var serverURL: String
    var folder: URL
    var seconds: Double
    var batch: Int
    var rate: Int

    /// Runs the firehose; the main thread runs the GLib main loop meanwhile.
    @MainActor func run() throws -> FirehoseFigures {
        let server = try ServerConfiguration(url: serverURL)
        let database = try blocking { try await scratchDatabase(server, logger: Logger(label: "benchmark")) }
        let store = try PersistentStore(url: URL(fileURLWithPath: try storeInFolderOfItsOwn(folder, "firehose-follower")), model: WorldCupStore.model)
        try Self.fillTeams(store, count: Self.writers * Self.teamsPerWriter)
        var sharing = PostgresSharing(database)
        sharing.logger.logLevel = .warning
        let session = try store.share(through: sharing)
        try blocking { try await synchronized(session, within: 600) }
        MainQueueSource.attach()
        let follower = try StampFollower(store: store, queue: .main)
        let driver = FirehoseDriver(run: self, database: database, store: store, follower: follower)
        Thread { driver.drive() }.start()
        let ticks = MainLoopTiming.ticks { _ in !driver.isDone }
        follower.stop()
        try? blocking { await session.stop() }
        var outcome = try driver.outcome()
        let from = Date(timeIntervalSince1970: outcome.goTime).timeIntervalSinceReferenceDate
        let timed = ticks.filter { $0 >= from && $0 <= from + outcome.endSeconds }
        outcome.figures.stalls = MainLoopTiming.gaps(timed)
        print("  longest main-loop stalls: \(MainLoopTiming.longestGaps(timed))")
        return outcome.figures
    }

    /// `count` teams named `Team 000000` … in order (writer `i` takes every `writers`-th by
    /// name, from the `i`-th), in the six zones, without stamps.
    static func fillTeams(_ store: PersistentStore, count: Int) throws {
        try store.database.write { db in
            let insert = try db.makeStatement(sql: #"INSERT INTO "Team" ("teamName", "qualifyingZone", "imageName", "wins") VALUES (?, ?, 'seed', ?)"#)
            for n in 0..<count {
                try insert.execute(arguments: [String(format: "Team %06d", n), WorldCupStore.zones[n % WorldCupStore.zones.count], n % 51])
            }
        }
    }
}

/// The firehose's steps beside the main loop, on a thread of their own: they wait for the
/// writer processes, which the main loop must not.
final class FirehoseDriver: @unchecked Sendable {
    private let run: FirehoseRun
    private let database: ServerConfiguration
    private let store: PersistentStore
    private let follower: StampFollower
    private let lock = NSLock()
    private var done = false
    private var result: Result<(figures: FirehoseFigures, goTime: Double, endSeconds: Double), any Error>?

    init(run: FirehoseRun, database: ServerConfiguration, store: PersistentStore, follower: StampFollower) {
        self.run = run
        self.database = database
        self.store = store
        self.follower = follower
    }

    var isDone: Bool { lock.withLock { done } }

    /// What the run measured: its figures, when the writers were told to go (seconds since
    /// 1970) and how long from then until the follower had every change.
    func outcome() throws -> (figures: FirehoseFigures, goTime: Double, endSeconds: Double) {
        try lock.withLock { result! }.get()
    }

    /// Starts the writers, waits for them and for the follower, and ends them, however it ends.
    func drive() {
        var writers: [DesktopProcess] = []
        let outcome = Result { () throws -> (figures: FirehoseFigures, goTime: Double, endSeconds: Double) in
            for index in 0..<FirehoseRun.writers {
                let plan = DesktopPlan(role: .writer, database: database.database,
                                       store: try storeInFolderOfItsOwn(run.folder, "firehose-writer-\(index)"),
                                       index: index, writers: FirehoseRun.writers, desktops: FirehoseRun.writers + 1,
                                       seconds: run.seconds, batch: run.batch, rate: run.rate)
                writers.append(try DesktopProcess(name: "firehose writer \(index)", plan: plan,
                                                  errorLog: run.folder.appendingPathComponent("firehose-writer-\(index).log")))
            }
            return try measure(writers)
        }
        writers.stop()
        lock.withLock {
            result = outcome
            done = true
        }
    }

    /// The timed part: `go` to every writer, their saves and pushes, until the follower has them all.
    private func measure(_ writers: [DesktopProcess]) throws -> (figures: FirehoseFigures, goTime: Double, endSeconds: Double) {
        _ = try writers.wait(for: "ready", within: 900)
        let probe = try blocking { [database] in try await ServerProbe(server: database, database: database.database) }
        defer { try? blocking { await probe.close() } }
        probe.startCounting()
        var figures = FirehoseFigures()
        let versionsBefore = try blocking { [database] in try await versionSum(database) }
        figures.residentStart = Measure.residentBytes()
        let go = Date().timeIntervalSince1970
        try writers.send("go")
        let saved = try writers.wait(for: "saved", within: run.seconds + 300).map { $0.split(separator: " ").compactMap { Double($0) } }
        figures.saved = saved.reduce(0) { $0 + Int($1.first ?? 0) }
        figures.savingSeconds = saved.map { $0.count > 1 ? $0[1] : 0 }.max() ?? 0
        if let first = saved.first, first.count == 4 { figures.saveTimes = (first[2], first[3]) }
        figures.serverUpdatesWhileSaving = try blocking { [database] in try await versionSum(database) } - versionsBefore
        let pushed = try writers.wait(for: "pushed", within: 900).compactMap { Double($0) }
        figures.pushedSeconds = (pushed.max() ?? go) - go
        try awaitFollower(&figures, within: 300)
        let end = Date().timeIntervalSince1970
        figures.serverUpdates = try blocking { [database] in try await versionSum(database) } - versionsBefore
        figures.residentEnd = Measure.residentBytes()
        figures.follower = follower.seen
        figures.followedSeconds = figures.follower.lastDelivery - go
        figures.mostConnections = (try? blocking { await probe.stopCounting() }) ?? -1
        return (figures, go, end - go)
    }

    /// Waits until the follower's store holds every team as the server does and its
    /// controller delivered each team's last stamp; throws after `seconds`.
    private func awaitFollower(_ figures: inout FirehoseFigures, within seconds: Double) throws {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while true {
            let server = try blocking { [database] in try await serverStamps(database) }
            let local = try store.database.read { db in
                try Row.fetchAll(db, sql: #"SELECT Z_PK, "teamName", "imageName" FROM "Team""#)
            }
            let seen = follower.newestStamps
            figures.teams = server.count
            figures.differing = abs(server.count - local.count) + local.filter { row in
                let key: Int64 = row[0], name: String = row[1], stamp: String? = row[2]
                guard server[name] == stamp else { return true }
                return stamp.flatMap(Stamp.parse).map { seen[key] != $0.micros } ?? false
            }.count
            if figures.differing == 0 { return }
            guard Date() < deadline else {
                throw OptionsError("firehose: the follower still differs from the server in \(figures.differing) of \(server.count) teams after \(Int(seconds)) s")
            }
            usleep(250_000)
        }
    }
}

/// Every team's stamp on the server, by name.
private func serverStamps(_ database: ServerConfiguration) async throws -> [String: String?] {
    let logger = Logger(label: "benchmark")
    let connection = try await PostgresConnection.connect(configuration: try database.connection, id: 8, logger: logger)
    var stamps: [String: String?] = [:]
    do {
        for try await (name, stamp) in try await connection.query(#"SELECT "teamName", "imageName" FROM "Team""#, logger: logger)
            .decode((String, String?).self) { stamps[name] = stamp }
    } catch {
        try? await connection.close()
        throw error
    }
    try await connection.close()
    return stamps
}

/// The sum of the server's team versions: each update raises one by one.
private func versionSum(_ database: ServerConfiguration) async throws -> Int {
    let logger = Logger(label: "benchmark")
    let connection = try await PostgresConnection.connect(configuration: try database.connection, id: 9, logger: logger)
    var sum = 0
    do {
        for try await value in try await connection.query(#"SELECT sum("Z_VERSION")::bigint FROM "Team""#, logger: logger)
            .decode(Int.self) { sum = value }
    } catch {
        try? await connection.close()
        throw error
    }
    try await connection.close()
    return sum
}

/// The firehose's lines of the report, each beside what it is measured against.
private func reportFirehose(_ figures: FirehoseFigures, run: FirehoseRun, report: inout Report) {
    let follower = figures.follower
    let savedRate = Double(figures.saved) / max(figures.savingSeconds, 1e-9)
    let followedRate = Double(follower.delivered) / max(figures.followedSeconds, 1e-9)
    let seenStamps = follower.seenByDesktop.values.reduce(0, +)
    report.add(.init(figure: "\(FirehoseRun.writers) writer desktops, \(run.batch) teams a save: changes saved",
                     measured: "\(figures.saved.formatted()) in \(duration(figures.savingSeconds)), \(Int(savedRate))/s",
                     baseline: "a save p50 \(duration(figures.saveTimes.p50)), p95 \(duration(figures.saveTimes.p95))"))
    report.add(.init(figure: "  pushed: updates of the server's rows", measured: "\(figures.serverUpdates.formatted()), all in by \(duration(figures.pushedSeconds))",
                     baseline: "\(figures.serverUpdatesWhileSaving.formatted()) while the writers saved; a team saved again before its push goes once"))
    report.add(.init(figure: "changes followed by a fifth desktop's controller",
                     measured: "\(Int(followedRate))/s (\(follower.delivered.formatted()) in \(duration(figures.followedSeconds)))",
                     baseline: "pushed \(Int(Double(figures.serverUpdates) / max(figures.pushedSeconds, 1e-9)))/s",
                     target: "≥ 10,000/s", passed: followedRate >= 10_000))
    let p95 = follower.latencies.quantile(0.95)
    report.add(.init(figure: "  change to batch, p95 of \(follower.latencies.count.formatted()) stamps", measured: duration(p95),
                     baseline: "median \(duration(follower.latencies.quantile(0.5))), max \(duration(follower.latencies.longest))",
                     target: "≤ 500 ms", passed: p95 <= 0.5))
    let longest = figures.stalls.max() ?? .nan
    report.add(.init(figure: "  longest main-loop stall (\(follower.batches.formatted()) batches)", measured: duration(longest),
                     baseline: "p99 \(duration(Measure.quantile(figures.stalls, 0.99))); reading stamps ≤ \(duration(follower.longestRead))",
                     target: "≤ 50 ms", passed: longest <= 0.050))
    let grown = figures.residentEnd - figures.residentStart
    report.add(.init(figure: "  follower's resident memory, start to end", measured: "\(grown >= 0 ? "+" : "")\(megabytes(grown))",
                     baseline: "at the start \(megabytes(figures.residentStart))", target: "flat (≤ +32 MB)", passed: grown <= 32 << 20))
    report.add(.init(figure: "  follower's store and controller equal the server at the end",
                     measured: "\(figures.teams - figures.differing) of \(figures.teams.formatted()) teams; \(seenStamps.formatted()) stamps seen",
                     baseline: "\(follower.reloads) reloads; \(figures.mostConnections) connections at most",
                     target: "every change", passed: figures.differing == 0 && follower.reloads == 0))
}
