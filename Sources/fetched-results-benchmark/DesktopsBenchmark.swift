import Foundation
import GRDB
import ObjectStore
import PostgresNIO
import Sharing

/// Many desktops at once (#29): `--desktops` processes (20), each with its own store shared
/// through one database, each saving one stamped change a second to its own team for
/// `--desktops-seconds` (300), each timing in a controller the other desktops' changes;
/// beside the same with one desktop writing and one watching. Measured beside them: the
/// server's CPU (its processes, from /proc), the database's connections (`pg_stat_activity`)
/// and whether every desktop saw every other's every change.
func desktopsBenchmark(_ options: Options, folder: URL, report: inout Report) throws {
    guard let url = ProcessInfo.processInfo.environment["FETCHED_RESULTS_POSTGRES_URL"] else {
        print("desktops: FETCHED_RESULTS_POSTGRES_URL is not set (scripts/benchmark starts a server); skipped")
        return
    }
    let seconds = Double(options.desktopsSeconds)
    print("measuring 1 desktop saving a change a second for \(options.desktopsSeconds) s, watched by another (the baseline)...")
    let baseline = try DesktopsRun(serverURL: url, folder: folder.appendingPathComponent("desktops-baseline"),
                                   desktops: 2, writers: 1, seconds: seconds).run()
    print("measuring \(options.desktops) desktops saving a change a second each for \(options.desktopsSeconds) s...")
    let many = try DesktopsRun(serverURL: url, folder: folder.appendingPathComponent("desktops"),
                               desktops: options.desktops, writers: options.desktops, seconds: seconds).run()
    reportDesktops(many, baseline: baseline, seconds: options.desktopsSeconds, report: &report)
}

/// What one run of the desktops part measured.
struct DesktopsFigures: Sendable {
    var desktops = 0
    var writers = 0
    /// Every desktop's latencies of the other desktops' changes, save to batch.
    var latencies = LatencyHistogram()
    /// Changes saved by all desktops.
    var saved = 0
    /// CPU seconds of the server's processes from `go` until every desktop had pushed.
    var serverCPU = 0.0
    /// The server's CPU seconds a second with every desktop connected and idle (measured
    /// over 5 s before `go`).
    var idleCPURate = 0.0
    /// Seconds from `go` until every desktop had pushed.
    var activeSeconds = 0.0
    var mostConnections = 0
    /// The fewest changes of one desktop that another saw, of how many it saved, and who.
    var fewestSeen = (seen: Int.max, of: 0, who: "")

    /// The p95 of the slowest desktop, and of the median desktop.
    var desktopP95 = (slowest: 0.0, median: 0.0)

    /// Each change reaches every desktop but its own.
    var deliveries: Int { saved * (desktops - 1) }

    /// The server's CPU seconds above its idle rate (every desktop connected).
    var activeCPU: Double { max(0, serverCPU - idleCPURate * activeSeconds) }
}

/// One run: a new database seeded with 1,000 teams and a team per desktop, the desktops'
/// processes, and what the server spent meanwhile.
struct DesktopsRun {
    var serverURL: String
    var folder: URL
    var desktops: Int
    var writers: Int
    var seconds: Double

    func run() throws -> DesktopsFigures {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let database = try seededDatabase()
        var processes: [DesktopProcess] = []
        defer { processes.stop() }
        for index in 0..<desktops {
            let plan = DesktopPlan(role: .desktop, database: database.database, store: try storeInFolderOfItsOwn(folder, "desktop-\(index)"),
                                   index: index, writers: writers, desktops: desktops, seconds: seconds)
            processes.append(try DesktopProcess(name: "desktop \(index)", plan: plan, errorLog: folder.appendingPathComponent("desktop-\(index).log")))
        }
        _ = try processes.wait(for: "ready", within: 900)
        let probe = try blocking { try await ServerProbe(server: database, database: database.database) }
        defer { try? blocking { await probe.close() } }
        var figures = DesktopsFigures(desktops: desktops, writers: writers)
        let idleStart = probe.cpuSeconds()
        usleep(5_000_000)
        let cpuBefore = probe.cpuSeconds()
        figures.idleCPURate = (cpuBefore - idleStart) / 5
        probe.startCounting()
        let go = Date().timeIntervalSince1970
        try processes.send("go \(go + 2)")
        let saves = try processes.wait(for: "pushed", within: seconds + 300).map { Int($0) ?? 0 }
        usleep(1_000_000)
        figures.serverCPU = probe.cpuSeconds() - cpuBefore
        figures.activeSeconds = Date().timeIntervalSince1970 - go
        figures.mostConnections = (try? blocking { await probe.stopCounting() }) ?? -1
        figures.saved = saves.reduce(0, +)
        try processes.send("report")
        let results = try processes.wait(for: "result", within: 300).map {
            try JSONDecoder().decode(StampFollower.Figures.self, from: Data($0.utf8))
        }
        let p95s = results.map { $0.latencies.quantile(0.95) }.sorted()
        figures.desktopP95 = (p95s.last ?? .nan, p95s[p95s.count / 2])
        for (desktop, seen) in results.enumerated() {
            figures.latencies.merge(seen.latencies)
            for writer in 0..<writers where writer != desktop {
                let count = seen.seenByDesktop[writer] ?? 0
                if count - saves[writer] < figures.fewestSeen.seen - figures.fewestSeen.of {
                    figures.fewestSeen = (count, saves[writer], "desktop \(desktop) of desktop \(writer)'s")
                }
            }
        }
        return figures
    }

    /// A new database holding 1,000 teams and one named `Desktop N` for each desktop, put
    /// there by a store of its own that shares and stops.
    private func seededDatabase() throws -> ServerConfiguration {
        let server = try ServerConfiguration(url: serverURL)
        let database = try blocking { try await scratchDatabase(server, logger: Logger(label: "benchmark")) }
        let seed = try PersistentStore(url: folder.appendingPathComponent("seed.sqlite"), model: WorldCupStore.model)
        try WorldCupStore.fill(seed, rows: 1_000, seed: 29)
        try seed.database.write { db in
            for index in 0..<desktops {
                try db.execute(sql: #"INSERT INTO "Team" ("teamName", "qualifyingZone", "imageName", "wins") VALUES (?, 'Desktops', 'seed', 0)"#,
                               arguments: ["Desktop \(index)"])
            }
        }
        var sharing = PostgresSharing(database)
        sharing.logger.logLevel = .warning
        let session = try seed.share(through: sharing)
        try blocking {
            try await synchronized(session, within: 600)
            await session.stop()
        }
        return database
    }
}

/// The desktops part's lines of the report, each beside the one-desktop baseline.
private func reportDesktops(_ many: DesktopsFigures, baseline: DesktopsFigures, seconds: Int, report: inout Report) {
    let p95 = many.latencies.quantile(0.95), baseP95 = baseline.latencies.quantile(0.95)
    report.add(.init(figure: "\(many.desktops) desktops, 1 change/s each, \(seconds) s: change to a controller on every other, p95",
                     measured: duration(p95), baseline: "1 desktop to 1: \(duration(baseP95))",
                     target: "≤ 1.5× (\(ratio(p95 / baseP95)))", passed: p95 <= 1.5 * baseP95))
    report.add(.init(figure: "  median, max (\(many.latencies.count.formatted()) changes shown)",
                     measured: "\(duration(many.latencies.quantile(0.5))), \(duration(many.latencies.longest))",
                     baseline: "\(duration(baseline.latencies.quantile(0.5))), \(duration(baseline.latencies.longest)) (\(baseline.latencies.count))"))
    let perDelivery = many.activeCPU / Double(max(many.deliveries, 1))
    let basePerDelivery = baseline.activeCPU / Double(max(baseline.deliveries, 1))
    report.add(.init(figure: "  server CPU per change shown on a desktop, above idle",
                     measured: "\(duration(perDelivery)) (\(duration(many.activeCPU / Double(max(many.saved, 1)))) a change saved)",
                     baseline: "1 desktop: \(duration(basePerDelivery)) (\(duration(baseline.activeCPU)) for \(baseline.saved))",
                     target: "flat: ≤ 1.5× (\(ratio(perDelivery / basePerDelivery)))", passed: perDelivery <= 1.5 * basePerDelivery))
    report.add(.init(figure: "  server CPU in all, and idle", measured: "\(duration(many.serverCPU)) in \(duration(many.activeSeconds))",
                     baseline: "idle \(significant(100 * many.idleCPURate))% of a core (1 desktop: \(significant(100 * baseline.idleCPURate))%)"))
    report.add(.init(figure: "  most client connections to the database at once", measured: "\(many.mostConnections)",
                     baseline: "2 desktops: \(baseline.mostConnections)", target: "≤ 2 a desktop (\(2 * many.desktops))",
                     passed: many.mostConnections <= 2 * many.desktops))
    let fewest = many.fewestSeen, baseFewest = baseline.fewestSeen
    report.add(.init(figure: "  fewest changes of one desktop shown by another", measured: "\(fewest.seen) of \(fewest.of) (\(fewest.who))",
                     baseline: "1 desktop: \(baseFewest.seen) of \(baseFewest.of)",
                     target: "the rest superseded in a batch", passed: nil))
    let (slowest, median) = many.desktopP95
    report.add(.init(figure: "  no desktop starves: the slowest desktop's p95", measured: duration(slowest),
                     baseline: "the median desktop's \(duration(median)); every last change shown everywhere",
                     target: "≤ 1.5× (\(ratio(slowest / median)))", passed: slowest <= 1.5 * median))
}
