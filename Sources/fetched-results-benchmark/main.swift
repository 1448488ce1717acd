// Measures the fetched results controller on a World Cup-like store of a million teams, and
// the viewer window while an import and another connection change its store, and prints each
// figure beside a baseline measured in the same run. Run it built for release:
// `scripts/benchmark [--rows N]`. It always exits 0 when it could measure: it is a report.
import FetchedResults
import Foundation
import GRDB
import ObjectStore
import struct ObjectStore.FetchRequest

func benchmark(_ options: Options) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fetched-results-benchmark-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, load average \(loadAverage()) (other processes slow every figure down)")
    var report = Report()
    if options.parts.contains("controller") { try controllerBenchmark(options, folder: folder, report: &report) }
    if options.parts == ["triggers"] {
        print("measuring bulk writes by SQL, \(options.runs) runs...")
        try triggerBenchmark(options, folder: folder, report: &report)
    }
    if options.parts.contains("live") { try liveBenchmark(options, folder: folder, report: &report) }
    if options.parts.contains("viewer1m") { try viewerMillionBenchmark(options, folder: folder, report: &report) }
    if options.parts.contains("sharing") { try sharingBenchmark(options, folder: folder, report: &report) }
    if options.parts.contains("firehose") { try firehoseBenchmark(options, folder: folder, report: &report) }
    if options.parts.contains("desktops") { try desktopsBenchmark(options, folder: folder, report: &report) }
    if options.parts.contains("feed") { try feedBenchmark(options, folder: folder, report: &report) }
    if options.parts.contains("small") { try stayingSmallFigures(options, folder: folder, report: &report) }
    print("")
    print(report.printed(), terminator: "")
    print("")
    if report.misses.isEmpty {
        print("All targets met.")
    } else {
        for line in report.misses { print("MISS: \(line.figure.trimmingCharacters(in: .whitespaces)): \(line.measured) (target \(line.target))") }
    }
}

/// performFetch, the section cache and taps on a store of `options.rows` teams.
func controllerBenchmark(_ options: Options, folder: URL, report: inout Report) throws {
    let (store, storeURL) = try benchmarkStore(options, folder: folder, report: &report)
    try fetchFigures(options, store: store, storeURL: storeURL, folder: folder, report: &report)
    try requestFigures(store: store, report: &report)
    try bulkWriteFigures(options, storeURL: storeURL, folder: folder, report: &report)
    try tapFigures(options, store: store, report: &report)
}

/// The store of `options.rows` teams: built (and timed) when empty.
private func benchmarkStore(_ options: Options, folder: URL, report: inout Report) throws -> (PersistentStore, URL) {
    let storeURL = options.storePath.map { URL(fileURLWithPath: $0) } ?? folder.appendingPathComponent("worldcup.sqlite")
    // The store.
    print("fetched-results-benchmark: \(options.rows) teams, \(options.runs) runs per fetch, \(options.taps) taps (baseline \(options.baselineTaps))")
    let store = try PersistentStore(url: storeURL, model: WorldCupStore.model)
    let existing = try store.database.read { db in try Int.fetchOne(db, sql: #"SELECT COUNT(*) FROM "Team""#) ?? 0 }
    if existing == 0 {
        let seconds = try Measure.seconds { try WorldCupStore.fill(store, rows: options.rows, seed: options.seed) }
        report.add(.init(figure: "build the store (one GRDB transaction)",
                         measured: "\(duration(seconds)), \(Int(Double(options.rows) / seconds)) rows/s"))
    } else if existing != options.rows {
        throw OptionsError("\(storeURL.path) holds \(existing) teams, not \(options.rows); pass --rows \(existing) or another --store")
    }
    print("store: \(storeURL.path)")
    return (store, storeURL)
}

/// performFetch against the floor, its memory, a scroll, the section cache.
private func fetchFigures(_ options: Options, store: PersistentStore, storeURL: URL, folder: URL, report: inout Report) throws {
    let fetch = FetchBenchmark(store: store, runs: options.runs)
    let controllerSQL = try ChildProbe.controllerSQL(storePath: storeURL.path)
    let sameOrder = orderBy(controllerSQL) == orderBy(WorldCupStore.floorSQL)
    print("controller SQL: \(controllerSQL)")
    print("  plan: \(try fetch.queryPlan(controllerSQL).joined(separator: "; "))")
    print("floor SQL:      \(WorldCupStore.floorSQL)")
    print("  plan: \(try fetch.queryPlan(WorldCupStore.floorSQL).joined(separator: "; "))")
    if !sameOrder { print("WARNING: the floor's ORDER BY differs from the controller's; the comparison is not fair") }

    print("measuring performFetch...")
    let uncached = try fetch.uncached()
    let fetchMedian = Measure.median(uncached.controller), floorMedian = Measure.median(uncached.floor)
    report.add(.init(figure: "performFetch, sectioned, median", measured: duration(fetchMedian),
                     baseline: "floor \(duration(floorMedian))", target: "≤ 1.5× floor (\(ratio(fetchMedian / floorMedian)))",
                     passed: fetchMedian <= 1.5 * floorMedian))
    let memory = try ChildProbe.memory(.controllerMemory, storePath: storeURL.path)
    let floorMemory = try ChildProbe.memory(.floorMemory, storePath: storeURL.path)
    report.add(.init(figure: "memory growth across performFetch, peak", measured: megabytes(memory.peak),
                     baseline: "floor \(megabytes(floorMemory.peak))", target: "≤ 64 MB", passed: memory.peak <= 64 << 20))
    report.add(.init(figure: "  retained after performFetch", measured: megabytes(memory.retained),
                     baseline: "floor \(megabytes(floorMemory.retained))"))
    print("measuring a scroll through every object...")
    let scroll = try ChildProbe.scroll(storePath: storeURL.path)
    report.add(.init(figure: "memory after reading every object in order, above the fetch", measured: megabytes(scroll.retained),
                     baseline: "the fetch \(megabytes(memory.retained))", target: "≤ 64 MB", passed: scroll.retained <= 64 << 20))
    report.add(.init(figure: "  slowest object(at:) of the scroll", measured: duration(scroll.slowestAccess),
                     target: "≤ 5 ms", passed: scroll.slowestAccess <= 0.005))

    // performFetch from the section cache, before the taps change the data.
    print("measuring the cached performFetch...")
    let cached = try fetch.cached(in: folder.appendingPathComponent("cache"))
    let cachedMedian = Measure.median(cached.reads)
    report.add(.init(figure: "performFetch from the cache, median", measured: duration(cachedMedian),
                     baseline: "uncached \(duration(fetchMedian))", target: "≤ 0.3× uncached (\(ratio(cachedMedian / fetchMedian)))",
                     passed: cachedMedian <= 0.3 * fetchMedian))
    report.add(.init(figure: "  first performFetch, writing the cache", measured: duration(cached.write)))
}

/// A new request, as the viewer sets one, against a fresh fetch.
private func requestFigures(store: PersistentStore, report: inout Report) throws {
    // A new request, as the viewer sets one.
    print("measuring new requests...")
    for figure in try MainActor.assumeIsolated({ try RequestChangeBenchmark(store: store).run() }) {
        // The issue's targets: a search as fast as a fresh fetch, a predicate or sort 1.5×.
        let limit = figure.isSearch ? 1.0 : 1.5
        report.add(.init(figure: "\(figure.name): shown", measured: duration(figure.shown),
                         baseline: "fresh performFetch \(duration(figure.freshFetch))",
                         target: "≤ \(significant(limit))× fresh (\(ratio(figure.shown / figure.freshFetch)))", passed: figure.shown <= limit * figure.freshFetch))
        report.add(.init(figure: "  longest main-queue stall meanwhile (\(figure.rows) rows)", measured: duration(figure.longestStall),
                         target: "≤ 50 ms", passed: figure.longestStall <= 0.050))
    }
}

/// Saves of many objects and merges of many saved elsewhere, with and without a controller.
private func bulkWriteFigures(_ options: Options, storeURL: URL, folder: URL, report: inout Report) throws {
    // Bulk writes.
    print("measuring bulk writes...")
    try triggerBenchmark(options, folder: folder, report: &report)
    let bulk = BulkWriteBenchmark(folder: folder)
    // On a copy: the store itself stays as it was built, for --store to reuse.
    let copy = folder.appendingPathComponent("bulk-saves.sqlite")
    for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: storeURL.path + suffix) {
        try FileManager.default.copyItem(atPath: storeURL.path + suffix, toPath: copy.path + suffix)
    }
    let copyStore = try PersistentStore(url: copy, model: WorldCupStore.model)
    let saves = try MainActor.assumeIsolated { try bulk.saves(store: copyStore) }
    report.add(.init(figure: "save() of 10,000 changed objects, controller on", measured: duration(saves.bulkWith),
                     baseline: "no controller \(duration(saves.bulkWithout))",
                     target: "≤ 1.2× (\(ratio(saves.bulkWith / saves.bulkWithout)))", passed: saves.bulkWith <= 1.2 * saves.bulkWithout))
    report.add(.init(figure: "save() of 1,000 new objects, controller on", measured: duration(saves.insertsWith),
                     baseline: "no controller \(duration(saves.insertsWithout))",
                     target: "≤ 50 ms", passed: saves.insertsWith <= 0.050))
    let merges = try MainActor.assumeIsolated { try bulk.mergedInserts(store: copyStore) }
    let worstMerge = merges.placed.max() ?? 0, worstTurn = merges.placedTurns.max() ?? 0
    let refetchedMerge = Measure.median(merges.refetched)
    report.add(.init(figure: "1,000 new objects saved elsewhere: longest main-queue turn, worst of \(merges.placed.count)",
                     measured: duration(worstTurn), baseline: "refetch + known changes, median \(duration(Measure.median(merges.refetchedTurns)))",
                     target: "≤ 40 ms", passed: worstTurn <= 0.040))
    report.add(.init(figure: "  saved -> batch, worst of \(merges.placed.count)", measured: duration(worstMerge),
                     baseline: "refetch + known changes, median \(duration(refetchedMerge))",
                     target: "≤ 0.5× refetch (\(ratio(worstMerge / refetchedMerge)))", passed: worstMerge <= 0.5 * refetchedMerge))
    let edits = try MainActor.assumeIsolated { try bulk.mergedUpdates(store: copyStore, rows: options.rows) }
    let worstEdit = edits.detail.max() ?? 0, sortedEdit = Measure.median(edits.sorted)
    report.add(.init(figure: "1,000 objects' images set elsewhere: saved -> batch, worst of \(edits.detail.count)", measured: duration(worstEdit),
                     baseline: "their wins set instead, median \(duration(sortedEdit))",
                     target: "≤ 0.5× (\(ratio(worstEdit / sortedEdit)))", passed: worstEdit <= 0.5 * sortedEdit))
    let worstEditTurn = edits.detailTurns.max() ?? 0
    report.add(.init(figure: "  longest main-queue turn, worst of \(edits.detail.count)", measured: duration(worstEditTurn),
                     baseline: "wins, median \(duration(Measure.median(edits.sortedTurns))); \(edits.inPlace) batches of updates in place",
                     target: "≤ 40 ms", passed: worstEditTurn <= 0.040))
}

/// Taps: one saved change to its batch, against a refetch and a diff.
private func tapFigures(_ options: Options, store: PersistentStore, report: inout Report) throws {
    // One saved change.
    print("measuring taps...")
    let taps = TapBenchmark(store: store, taps: options.taps, baselineTaps: options.baselineTaps, seed: options.seed)
    let tapFigures = try taps.controller()
    let baseline = try taps.baseline()
    let tapMedian = Measure.median(tapFigures.toBatch), baselineMedian = Measure.median(baseline.total)
    report.add(.init(figure: "tap: wins += 1, save() -> batch, median", measured: duration(tapMedian),
                     baseline: "refetch + diff \(duration(baselineMedian))", target: "≤ 2 ms", passed: tapMedian <= 0.002))
    report.add(.init(figure: "  p90", measured: duration(Measure.quantile(tapFigures.toBatch, 0.9))))
    report.add(.init(figure: "  speed-up over refetch + diff", measured: ratio(baselineMedian / tapMedian),
                     target: "≥ 100×", passed: baselineMedian / tapMedian >= 100))
    report.add(.init(figure: "  to the end of save() (SQLite write), median", measured: duration(Measure.median(tapFigures.toSaved)),
                     baseline: "baseline: refetch \(duration(Measure.median(baseline.refetch))), diff \(duration(Measure.median(baseline.diff)))"))
    report.add(.init(figure: "  batches: moves / in-place updates", measured: "\(tapFigures.moves) / \(tapFigures.updates)"))
    let nearEnd = Measure.median(tapFigures.lookupNearEnd), afterTap = Measure.median(tapFigures.lookupAfterTap)
    report.add(.init(figure: "indexPath(for:) near the end, median of 1,000", measured: duration(nearEnd),
                     baseline: "slowest \(duration(tapFigures.lookupNearEnd.max() ?? 0))", target: "≤ 5 µs", passed: nearEnd <= 0.000_005))
    report.add(.init(figure: "  of the tapped row right after its batch, median", measured: duration(afterTap),
                     baseline: "slowest \(duration(tapFigures.lookupAfterTap.max() ?? 0))", target: "≤ 5 µs", passed: afterTap <= 0.000_005))
}

/// What the change-history triggers cost bulk writes by SQL: the median of `options.runs`
/// runs, each with and without the triggers.
func triggerBenchmark(_ options: Options, folder: URL, report: inout Report) throws {
    let triggers = try BulkWriteBenchmark(folder: folder).triggers(runs: options.runs)
    report.add(.init(figure: "100,000 inserts by SQL, history triggers on", measured: duration(triggers.insertWith),
                     baseline: "without triggers \(duration(triggers.insertWithout)); empty ones \(ratio(triggers.insertEmpty / triggers.insertWithout))",
                     target: "≤ 1.3× (\(ratio(triggers.insertWith / triggers.insertWithout)))", passed: triggers.insertWith <= 1.3 * triggers.insertWithout))
    report.add(.init(figure: "100,000 updates by SQL, history triggers on", measured: duration(triggers.updateWith),
                     baseline: "without triggers \(duration(triggers.updateWithout)); empty ones \(ratio(triggers.updateEmpty / triggers.updateWithout))",
                     target: "≤ 1.3× (\(ratio(triggers.updateWith / triggers.updateWithout)))", passed: triggers.updateWith <= 1.3 * triggers.updateWithout))
}

/// The viewer window while an import and another connection change its store.
func liveBenchmark(_ options: Options, folder: URL, report: inout Report) throws {
    print("measuring the viewer window while it imports \(options.importRows) teams...")
    let liveFolder = folder.appendingPathComponent("live")
    try FileManager.default.createDirectory(at: liveFolder, withIntermediateDirectories: true)
    let benchmark = LiveDataBenchmark(rows: options.importRows, folder: liveFolder, seed: options.seed)
    let live = try MainActor.assumeIsolated { try benchmark.run() }
    let longest = live.importStalls.max() ?? 0
    report.add(.init(figure: "import \(options.importRows) rows, window open: longest main-loop stall", measured: duration(longest),
                     baseline: "idle window \(duration(live.idleStall))", target: "≤ 50 ms", passed: longest <= 0.050))
    report.add(.init(figure: "  p99 stall", measured: duration(Measure.quantile(live.importStalls, 0.99))))
    report.add(.init(figure: "  import time", measured: "\(duration(live.importSeconds)), \(Int(Double(options.importRows) / live.importSeconds)) rows/s"))
    report.add(.init(figure: "  rows in the list after", measured: "\(live.listCount)", target: "= \(options.importRows + 32)",
                     passed: live.listCount == options.importRows + 32))
    let latency = Measure.quantile(live.frameLatencies, 0.95)
    report.add(.init(figure: "another connection's commit to the row redrawn (frame clock), p95 of \(live.frameLatencies.count)", measured: duration(latency),
                     baseline: "to the list's batch: p95 \(duration(Measure.quantile(live.followLatencies, 0.95))); median \(duration(Measure.median(live.frameLatencies))), worst \(duration(live.frameLatencies.max() ?? 0))",
                     target: "≤ 40 ms", passed: latency <= 0.040))
    let share = live.idleCPUSeconds / live.idleSeconds
    report.add(.init(figure: "idle window, CPU", measured: "\(duration(live.idleCPUSeconds)) in \(duration(live.idleSeconds)) (\(significant(share * 100))%)",
                     target: "< 1% of a core", passed: share < 0.01))
}

/// The viewer window on a million teams: opening, a search, a sort, Page Down held, a
/// scroll to the end and back, an import.
func viewerMillionBenchmark(_ options: Options, folder: URL, report: inout Report) throws {
    // The million-team store of earlier runs (`--store`, else /tmp/bench1m.sqlite), built when
    // missing; the window works on a copy, which the import changes.
    let source = URL(fileURLWithPath: options.storePath ?? "/tmp/bench1m.sqlite")
    if !FileManager.default.fileExists(atPath: source.path) {
        print("building \(options.rows) teams in \(source.path)...")
        try WorldCupStore.fill(PersistentStore(url: source, model: WorldCupStore.model), rows: options.rows, seed: options.seed)
    }
    let copy = URL(fileURLWithPath: "/tmp/live1m.sqlite")
    for suffix in ["", "-wal", "-shm"] {
        try? FileManager.default.removeItem(atPath: copy.path + suffix)
        if suffix != "-shm" && FileManager.default.fileExists(atPath: source.path + suffix) {
            try FileManager.default.copyItem(atPath: source.path + suffix, toPath: copy.path + suffix)
        }
    }
    print("measuring the viewer window on \(source.path) (a copy: \(copy.path))...")
    let viewerFolder = folder.appendingPathComponent("viewer1m")
    try FileManager.default.createDirectory(at: viewerFolder, withIntermediateDirectories: true)
    let benchmark = ViewerMillionBenchmark(storeURL: copy, folder: viewerFolder, importRows: options.importRows, seed: options.seed)
    let figures = try MainActor.assumeIsolated { try benchmark.run() }
    let rows = figures.rowsBefore
    for (name, opening) in [("without a section cache", figures.uncachedOpening), ("from the section cache", figures.cachedOpening)] {
        report.add(.init(figure: "\(rows) rows, window \(name): first frame, header", measured: duration(opening.firstFrame),
                         baseline: "fresh performFetch \(duration(opening.fetch))", target: "≤ 300 ms", passed: opening.firstFrame <= 0.3))
        report.add(.init(figure: "  first frame with rows", measured: duration(opening.rowsFrame),
                         baseline: "fetch + 300 ms", target: "≤ \(duration(opening.fetch + 0.3))", passed: opening.rowsFrame <= opening.fetch + 0.3))
    }
    let idle = "idle window \(duration(figures.idleStall))"
    for (name, change) in [("type \"\(ViewerMillionBenchmark.searchText)\" in the search, 150 ms a key", figures.search),
                           ("clear the search", figures.clearSearch), ("change the sort (by name)", figures.sort)] {
        let longest = change.stalls.max() ?? 0
        report.add(.init(figure: "\(name): longest main-loop stall", measured: duration(longest), baseline: idle,
                         target: "≤ 50 ms", passed: longest <= 0.050))
        report.add(.init(figure: "  shown (\(change.rows) rows), after the last key or choice", measured: duration(change.shown),
                         baseline: "fresh performFetch \(duration(change.freshFetch))", target: "= \(change.expectedRows) rows",
                         passed: change.rows == change.expectedRows && change.shown.isFinite))
    }
    let pageDown = figures.pageDown, pageStall = pageDown.stalls.max() ?? 0
    report.add(.init(figure: "\(ViewerMillionBenchmark.pageDownPresses) Page Down presses in \(duration(pageDown.seconds)): longest stall", measured: duration(pageStall),
                     baseline: idle, target: "≤ 50 ms", passed: pageStall <= 0.050))
    report.add(.init(figure: "  the last press's row selected and shown", measured: "\(duration(pageDown.settled)), frame \(pageDown.settledFrames)",
                     baseline: "position \(pageDown.from) to \(pageDown.to)", target: "≤ 2 frames",
                     passed: pageDown.isShown && pageDown.settledFrames <= 2))
    let grown = figures.residentAfter - figures.residentBefore
    report.add(.init(figure: "resident memory after scrolling to the end and back", measured: "+\(megabytes(grown)) (\(figures.scrollFrames) frames)",
                     baseline: "before \(megabytes(figures.residentBefore))", target: "≤ +64 MB", passed: grown <= 64 << 20))
    let importStall = figures.importStalls.max() ?? 0
    report.add(.init(figure: "import \(options.importRows) rows into \(rows): longest main-loop stall", measured: duration(importStall),
                     baseline: idle, target: "≤ 50 ms", passed: importStall <= 0.050))
    report.add(.init(figure: "  p99 stall", measured: duration(Measure.quantile(figures.importStalls, 0.99))))
    report.add(.init(figure: "  import time", measured: "\(duration(figures.importSeconds)), \(Int(Double(options.importRows) / figures.importSeconds)) rows/s"))
    report.add(.init(figure: "  rows in the list after", measured: "\(figures.rowsAfter)", target: "= \(rows + options.importRows)",
                     passed: figures.rowsAfter == rows + options.importRows))
}

/// The 1-minute load average, from `/proc/loadavg`.
func loadAverage() -> String {
    (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").first.map(String.init) ?? "unknown"
}

/// The ORDER BY clause of `sql`.
func orderBy(_ sql: String) -> String {
    guard let range = sql.range(of: "ORDER BY") else { return "" }
    return String(sql[range.upperBound...]).trimmingCharacters(in: .whitespaces)
}

do {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.first == ChildProbe.flag {
        try ChildProbe.main(arguments: Array(arguments.dropFirst()))
    } else if arguments.first == DesktopChild.flag {
        DesktopChild.main(arguments: Array(arguments.dropFirst()))
    } else if arguments.first == IdleFloor.flag {
        IdleFloor.main()
    } else {
        try benchmark(try Options(arguments: arguments))
    }
} catch {
    FileHandle.standardError.write(Data("fetched-results-benchmark: \(error)\n".utf8))
    exit(1)
}

/// Another process's commit to `watch`'s batch, through the store's change feed, on a
/// 1,000-team store and on the million-team one, beside this process's save to its own
/// batch; and an idle `watch`.
func feedBenchmark(_ options: Options, folder: URL, report: inout Report) throws {
    let small = folder.appendingPathComponent("feed1k.sqlite")
    try WorldCupStore.fill(PersistentStore(url: small, model: WorldCupStore.model), rows: 1_000, seed: options.seed)
    let large = URL(fileURLWithPath: options.storePath ?? "/tmp/bench1m.sqlite")
    if !FileManager.default.fileExists(atPath: large.path) {
        print("building \(options.rows) teams in \(large.path)...")
        try WorldCupStore.fill(PersistentStore(url: large, model: WorldCupStore.model), rows: options.rows, seed: options.seed)
    }
    for (name, store) in [("1,000", small), (options.rows.formatted(), large)] {
        print("measuring \(options.commits) commits of the sqlite3 shell and of apply to watch's batch, \(name) teams...")
        let figures = try FeedBenchmark(store: store, commits: options.commits, idleSeconds: name == "1,000" ? Double(options.idleSeconds) : 0, seed: options.seed).run()
        let baseline = "same process's save to its batch: p50 \(duration(Measure.median(figures.sameProcess))), p95 \(duration(Measure.quantile(figures.sameProcess, 0.95)))"
        for (writer, samples) in [("the sqlite3 shell", figures.fromShell), ("apply", figures.fromApply)] {
            let p95 = Measure.quantile(samples, 0.95), worst = samples.max() ?? .nan
            report.add(.init(figure: "\(name) teams: a commit of \(writer) to watch's batch, p50/p95/max of \(samples.count)",
                             measured: "\(duration(Measure.median(samples))) / \(duration(p95)) / \(duration(worst))",
                             baseline: baseline, target: "p95 ≤ 20 ms, max ≤ 50 ms", passed: p95 <= 0.020 && worst <= 0.050))
        }
        if name == "1,000" {
            print("measuring an idle viewer window, shared and not, an idle Swift process, and a save with 100 subscribers...")
            let floor = try IdleFloor.measure(seconds: options.idleSeconds)
            reportIdle("watch", figures.idle, floor: floor, options, &report)
            reportIdle("viewer window", try IdleWindowBenchmark(store: store, share: nil, seconds: options.idleSeconds).run(), floor: floor, options, &report)
            if let server = ProcessInfo.processInfo.environment["FETCHED_RESULTS_POSTGRES_URL"] {
                let shared = folder.appendingPathComponent("feed-shared.sqlite")
                try FileManager.default.copyItem(at: store, to: shared)
                reportIdle("shared viewer window", try IdleWindowBenchmark(store: shared, share: server, seconds: options.idleSeconds).run(),
                           floor: floor, options, &report)
            }
            let (alone, subscribed) = try SubscribedSaveBenchmark(store: store).run()
            let p95 = Measure.quantile(subscribed, 0.95), baseline = Measure.quantile(alone, 0.95)
            report.add(.init(figure: "a save with 100 feed subscribers (one stuck), p50/p95 of \(subscribed.count)",
                             measured: "\(duration(Measure.median(subscribed))) / \(duration(p95))",
                             baseline: "no subscriber: \(duration(Measure.median(alone))) / \(duration(baseline))",
                             target: "p95 ≤ baseline + 1 ms", passed: p95 <= baseline + 0.001))
        }
    }
}

/// An idle program's figure: at most one wake-up a second of its own and 20 ms of CPU a
/// minute. Its own: beyond the floor of every Swift program on Linux that ran a task or used
/// a global dispatch queue, libdispatch's workqueue monitor (a 1 Hz timer on its manager
/// thread that cannot be turned off, see ``IdleFloor``), measured in the same run.
func reportIdle(_ what: String, _ usage: ProcessUsage.Idle, floor: ProcessUsage.Idle, _ options: Options, _ report: inout Report) {
    let seconds = Double(options.idleSeconds)
    let own = max(0, usage.wakeUps - floor.wakeUps)
    report.add(.init(figure: "idle \(what) over \(options.idleSeconds) s: wake-ups (its own), CPU",
                     measured: "\(usage.wakeUps) (\(own): \(significant(Double(own) / seconds))/s), \(duration(usage.cpuSeconds))",
                     baseline: "an idle Swift process that ran a task: \(floor.wakeUps), \(duration(floor.cpuSeconds))",
                     target: "≤ 1 wake-up/s of its own, ≤ 20 ms CPU a minute",
                     passed: Double(own) <= seconds && usage.cpuSeconds <= 0.020 * seconds / 60))
}
