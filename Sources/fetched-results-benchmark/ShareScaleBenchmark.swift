import CGtk
import FetchedResults
import Foundation
import GRDB
import ObjectStore
import PostgresNIO
import Sharing
import Viewer

/// A big store shared with an empty database, and a new desktop joining it (#29), each
/// beside what `psql` takes to move the same rows with COPY (into the same schema, its
/// triggers included; out, plus a local bulk insert of them).
func shareScaleFigures(_ options: Options, serverURL: String, folder: URL, report: inout Report) throws {
    let rows = options.shareRows
    print("measuring a \(rows.formatted())-team store shared with an empty database, and joined...")
    var figures = try blocking { try await measureShareScale(rows: rows, serverURL: serverURL, folder: folder, seed: options.seed) }
    try MainActor.assumeIsolated { try measureJoinInWindow(&figures, rows: rows, folder: folder) }
    let share = figures.shareSeconds, copyIn = figures.copyInSeconds
    report.add(.init(figure: "a \(rows.formatted())-row store shares with an empty database",
                     measured: "\(duration(share)), \(Int(Double(rows) / share)) rows/s",
                     baseline: "COPY of the same rows by psql \(duration(copyIn))",
                     target: "≤ 2× (\(ratio(share / copyIn))), ≤ 30 s", passed: share <= 2 * copyIn && share <= 30))
    let join = figures.joinSeconds, copyOut = figures.copyOutSeconds + figures.localInsertSeconds
    report.add(.init(figure: "a new desktop joins the \(rows.formatted())-row database",
                     measured: "\(duration(join)), \(Int(Double(rows) / join)) rows/s",
                     baseline: "COPY … TO by psql \(duration(figures.copyOutSeconds)) + a local bulk insert \(duration(figures.localInsertSeconds))",
                     target: "≤ 2× (\(ratio(join / copyOut))), ≤ 30 s", passed: join <= 2 * copyOut && join <= 30))
    report.add(.init(figure: "  first rows in the joining store", measured: duration(figures.firstRowsSeconds),
                     target: "≤ 2 s", passed: figures.firstRowsSeconds <= 2))
    report.add(.init(figure: "a third desktop joins it in the viewer's window", measured: duration(figures.listJoinSeconds)))
    report.add(.init(figure: "  first rows from the server in its list", measured: duration(figures.listFirstRowsSeconds),
                     target: "≤ 2 s", passed: figures.listFirstRowsSeconds <= 2))
    let longest = figures.stalls.max() ?? .nan
    report.add(.init(figure: "  longest main-loop stall while it joins", measured: duration(longest),
                     baseline: "p99 \(duration(Measure.quantile(figures.stalls, 0.99)))", target: "≤ 50 ms", passed: longest <= 0.050))
    report.add(.init(figure: "  its longest turn's own processor time", measured: duration(figures.turnProcessorTimes.max() ?? .nan),
                     baseline: "p99 \(duration(Measure.quantile(figures.turnProcessorTimes, 0.99)))"))
    report.add(.init(figure: "  the window's main thread on a processor meanwhile", measured: duration(figures.mainThreadSeconds)))
}

private struct ShareScaleFigures: Sendable {
    var shareSeconds = 0.0
    var copyInSeconds = 0.0
    var joinSeconds = 0.0
    var firstRowsSeconds = Double.infinity
    var copyOutSeconds = 0.0
    var localInsertSeconds = 0.0
    /// The database shared, which the new desktops join.
    var sharing: PostgresSharing?
    /// The third desktop's join, in the viewer's window: from Share until its list holds every row.
    var listJoinSeconds = 0.0
    var listFirstRowsSeconds = Double.infinity
    /// The window's main-loop stalls while the third desktop joined.
    var stalls: [Double] = []
    /// The main thread's processor time between each two ticks while the third desktop
    /// joined: a stall's own work, without the time the thread waited for a core.
    var turnProcessorTimes: [Double] = []
    /// The processor time of the window's main thread while the third desktop joined.
    var mainThreadSeconds = 0.0
}

private func measureShareScale(rows: Int, serverURL: String, folder: URL, seed: UInt64) async throws -> ShareScaleFigures {
    let server = try ServerConfiguration(url: serverURL)
    let logger = Logger(label: "benchmark")
    var figures = ShareScaleFigures()
    let source = folder.appendingPathComponent("scale-a.sqlite")
    try WorldCupStore.fill(try PersistentStore(url: source, model: WorldCupStore.model), rows: rows, seed: seed)

    // The baseline first: psql's COPY of the same rows into the same schema.
    let csv = folder.appendingPathComponent("scale.csv")
    try await writeCSV(of: source, to: csv)
    let baseline = try await scratchDatabase(server, logger: logger)
    try await createSchema(on: baseline, logger: logger)
    figures.copyInSeconds = try psql(baseline, #"\copy "Team" ("Z_ID", "teamName", "qualifyingZone", "imageName", wins) FROM '\#(csv.path)' WITH (FORMAT csv)"#)
    let out = folder.appendingPathComponent("scale-out.csv")
    figures.copyOutSeconds = try psql(baseline, #"\copy (SELECT "Z_ID", "Z_VERSION", "teamName", "qualifyingZone", "imageName", wins FROM "Team") TO '\#(out.path)' WITH (FORMAT csv)"#)
    figures.localInsertSeconds = try localBulkInsert(of: out, into: folder.appendingPathComponent("scale-baseline.sqlite"))

    // The store shares with an empty database.
    let target = try await scratchDatabase(server, logger: logger)
    var sharing = PostgresSharing(target)
    sharing.logger.logLevel = .warning
    let store = try PersistentStore(url: source, model: WorldCupStore.model)
    let started = ContinuousClock.now
    let session = try store.share(through: sharing)
    try await synchronized(session)
    figures.shareSeconds = seconds(ContinuousClock.now - started)
    await session.stop()

    // A new desktop joins it.
    let joining = try PersistentStore(url: folder.appendingPathComponent("scale-b.sqlite"), model: WorldCupStore.model)
    let joinStarted = ContinuousClock.now
    let joiner = try joining.share(through: sharing)
    let watcher = Task {
        while !Task.isCancelled {
            if try await joining.database.read({ db in try Int.fetchOne(db, sql: #"SELECT EXISTS (SELECT 1 FROM "Team")"#) ?? 0 }) == 1 {
                return seconds(ContinuousClock.now - joinStarted)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return Double.infinity
    }
    try await synchronized(joiner)
    figures.joinSeconds = seconds(ContinuousClock.now - joinStarted)
    figures.firstRowsSeconds = try await watcher.value
    await joiner.stop()
    let joined = try await joining.database.read { db in try Int.fetchOne(db, sql: #"SELECT count(*) FROM "Team""#) ?? 0 }
    guard joined == rows else { throw OptionsError("sharescale: the joining store holds \(joined) teams, not \(rows)") }
    figures.sharing = sharing
    return figures
}

/// A third desktop joins the database in the viewer's window (World Cup, sectioned by zone):
/// the window opens on a new store (the dataset's 32 teams) and settles, as the live part's
/// does, then shares through the database as Share… does, and the join takes the server's
/// teams instead of its own. Timed from Share: the join until the list holds every row, its
/// first rows from the server, and the main loop's stalls.
@MainActor private func measureJoinInWindow(_ figures: inout ShareScaleFigures, rows: Int, folder: URL) throws {
    try MainLoopTiming.startGTK()
    let window = try ViewerWindow(application: nil, options: ViewerOptions(datasetName: "worldcup", storeFolder: folder.appendingPathComponent("window")))
    gtk_window_present(MainLoopTiming.gtkWindow(window))
    MainLoopTiming.spin(seconds: 1)
    let joinStarted = ContinuousClock.now, mainThreadStarted = MainLoopTiming.threadCPUSeconds()
    window.share(through: figures.sharing!.configuration.description)
    var firstRows = Double.infinity
    let (ticks, processor) = MainLoopTiming.ticksWithProcessorTime { elapsed in
        if firstRows.isInfinite, window.listedObjectCount > 32 { firstRows = seconds(ContinuousClock.now - joinStarted) }
        return window.listedObjectCount < rows && elapsed < 600
    }
    figures.listJoinSeconds = seconds(ContinuousClock.now - joinStarted)
    figures.mainThreadSeconds = MainLoopTiming.threadCPUSeconds() - mainThreadStarted
    figures.listFirstRowsSeconds = firstRows
    figures.stalls = MainLoopTiming.gaps(ticks)
    figures.turnProcessorTimes = MainLoopTiming.processorTimes(processor)
    print("  the window's longest main-loop stalls while it joins: \(MainLoopTiming.longestGaps(ticks))")
    print("  its longest turns' own processor time: \(MainLoopTiming.longest(figures.turnProcessorTimes, at: ticks))")
    if let counts = window.followingCounts {
        print("  the window's context read the history \(counts.historyReads.readAhead) times on a reader, \(counts.historyReads.onQueue) on its main thread; its list was fetched again in the background \(counts.backgroundRefetches) times")
    }
    let listed = window.listedObjectCount
    gtk_window_destroy(MainLoopTiming.gtkWindow(window))
    MainLoopTiming.spin(seconds: 0.5)
    guard listed == rows else { throw OptionsError("sharescale: the joining window lists \(listed) teams, not \(rows)") }
}

/// Writes the teams of the store at `source` as the CSV that psql's COPY takes (a new
/// global ID for each).
private func writeCSV(of source: URL, to csv: URL) async throws {
    try await DatabaseQueue(path: source.path).read { db in
        FileManager.default.createFile(atPath: csv.path, contents: nil)
        let handle = try FileHandle(forWritingTo: csv)
        var text = ""
        let cursor = try Row.fetchCursor(db, sql: #"SELECT "teamName", "qualifyingZone", "imageName", wins FROM "Team""#)
        while let row = try cursor.next() {
            let image: String? = row[2]
            text += "\(UUID().uuidString.lowercased()),\(row[0] as String),\(row[1] as String),\(image ?? ""),\(row[3] as Int)\n"
            if text.utf8.count > 1 << 20 { handle.write(Data(text.utf8)); text = "" }
        }
        handle.write(Data(text.utf8))
        try handle.close()
    }
}

/// Waits until `session` has pushed and pulled everything: rounds until one ends with
/// nothing pending (a round given up is tried again), for up to `seconds`.
func synchronized(_ session: SharingSession, within seconds: Int = 1800) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while true {
        do {
            try await session.synchronize()
            if session.status.pendingChanges == 0 { return }
        } catch where ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        guard ContinuousClock.now < deadline else { throw OptionsError("sharing: no end in \(seconds) s (\(session.status))") }
    }
}

/// A new database on the server; dropped with the server at the end of the run.
func scratchDatabase(_ server: ServerConfiguration, logger: Logger) async throws -> ServerConfiguration {
    let name = "scale_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    let admin = try await PostgresConnection.connect(configuration: try server.connection, id: 1, logger: logger)
    try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
    try await admin.close()
    var configuration = server
    configuration.database = name
    return configuration
}

/// The sharing schema of the benchmark's model, as a desktop makes it.
private func createSchema(on configuration: ServerConfiguration, logger: Logger) async throws {
    let connection = try await PostgresConnection.connect(configuration: try configuration.connection, id: 1, logger: logger)
    try await ServerSchema(model: WorldCupStore.model).create(on: connection, logger: logger)
    try await connection.close()
}

/// Runs one psql command on `configuration`'s database; its wall time.
private func psql(_ configuration: ServerConfiguration, _ command: String) throws -> Double {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
    process.arguments = ["\(configuration)", "-q", "-v", "ON_ERROR_STOP=1", "-c", command]
    let started = ContinuousClock.now
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw OptionsError("psql failed (\(process.terminationStatus)): \(command)") }
    return seconds(ContinuousClock.now - started)
}

/// Inserts the rows of `csv` (as psql wrote them) into a new store, one transaction, one
/// prepared statement; its wall time.
private func localBulkInsert(of csv: URL, into url: URL) throws -> Double {
    let started = ContinuousClock.now
    let store = try PersistentStore(url: url, model: WorldCupStore.model)
    let text = try String(contentsOf: csv, encoding: .utf8)
    try store.database.write { db in
        let insert = try db.makeStatement(sql: #"INSERT INTO "Team" ("teamName", "qualifyingZone", "imageName", "wins") VALUES (?, ?, ?, ?)"#)
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == 6 else { continue }
            try insert.execute(arguments: [String(fields[2]), String(fields[3]), fields[4].isEmpty ? nil : String(fields[4]), Int(fields[5])])
        }
    }
    return seconds(ContinuousClock.now - started)
}
