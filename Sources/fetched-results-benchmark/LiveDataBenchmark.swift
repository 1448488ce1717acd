import CGtk
import Datasets
import Foundation
import GRDB
import GtkBinding
import ObjectStore
import Viewer

/// The viewer's window while its data changes underneath: an import of many rows in the
/// background (how long the main loop stalls), commits of another connection (how soon the
/// window's list takes them, and how soon the changed row is drawn: the frame clock's next
/// `after-paint`) and an idle window (its CPU). Runs the real window on the display
/// (`scripts/benchmark` starts Xvfb when there is none).
struct LiveDataBenchmark {
    let rows: Int
    let folder: URL
    let seed: UInt64

    struct Figures {
        /// The longest gap of an idle window's main loop, and every gap while importing (see `gaps`).
        var idleStall: Double
        var importStalls: [Double]
        var importSeconds: Double
        var listCount: Int
        var followLatencies: [Double]
        /// From the commit to the first frame drawn after the list took it.
        var frameLatencies: [Double]
        var idleCPUSeconds: Double
        var idleSeconds: Double
    }

    @MainActor func run() throws -> Figures {
        try MainLoopTiming.startGTK()
        let csv = folder.appendingPathComponent("teams.csv")
        let zones = ["Africa", "Asia", "Europe", "North/Central America", "Oceania", "South America"]
        try MainLoopTiming.writeTeams(rows, zones: zones, seed: seed, to: csv)
        let window = try ViewerWindow(application: nil, options: ViewerOptions(datasetName: "worldcup", storeFolder: folder))
        gtk_window_present(MainLoopTiming.gtkWindow(window))
        MainLoopTiming.spin(seconds: 0.5)

        let idle = MainLoopTiming.gaps(MainLoopTiming.ticks { $0 < 1 })
        let started = Date()
        window.startImport(file: csv)
        let importTicks = MainLoopTiming.ticks { _ in window.isImporting }
        let importSeconds = Date().timeIntervalSince(started)
        let importing = MainLoopTiming.gaps(importTicks)
        print("  longest stalls: " + MainLoopTiming.longestGaps(importTicks))
        MainLoopTiming.spin(seconds: 0.3)

        // Another connection, as another process: its commits reach the window through the
        // store's change feed (inotify) and history, as those of the sqlite3 shell do.
        // It adds a win to the list's first row (the most wins of the first zone), which
        // stays first and on screen, so that each commit redraws a row.
        let other = try Dataset.load(named: "worldcup").openStore(at: folder.appendingPathComponent("worldcup.sqlite"))
        let top = try other.database.read { db in
            try Int64.fetchOne(db, sql: #"SELECT Z_PK FROM "Team" ORDER BY "qualifyingZone", "wins" DESC, "teamName" LIMIT 1"#)
        }
        var latencies: [Double] = [], frameLatencies: [Double] = []
        var shown: Date?
        window.didUpdate = { shown = Date() }
        let frames = Frames(window)
        var generator = SplitMix64(seed: seed)
        for _ in 0..<100 {
            MainLoopTiming.spin(seconds: Double(generator.next() % 200) / 1000)  // commits at random moments
            shown = nil
            try other.database.write { db in
                try db.execute(sql: #"UPDATE "Team" SET "wins" = "wins" + 1 WHERE Z_PK = ?"#, arguments: [top])
            }
            let committed = Date()
            let deadline = committed.addingTimeInterval(5)
            func drawn() -> Date? { shown.flatMap { shown in frames.times.last.flatMap { $0 >= shown ? $0 : nil } } }
            while drawn() == nil && Date() < deadline { g_main_context_iteration(nil, 1) }
            latencies.append((shown ?? deadline).timeIntervalSince(committed))
            frameLatencies.append((drawn() ?? deadline).timeIntervalSince(committed))
        }
        frames.stop()
        window.didUpdate = nil

        let cpuBefore = MainLoopTiming.cpuSeconds(), idleStart = Date()
        MainLoopTiming.spin(seconds: 5)
        let idleCPU = MainLoopTiming.cpuSeconds() - cpuBefore
        let figures = Figures(
            idleStall: idle.max() ?? 0, importStalls: importing, importSeconds: importSeconds,
            listCount: window.listedObjectCount, followLatencies: latencies, frameLatencies: frameLatencies,
            idleCPUSeconds: idleCPU, idleSeconds: Date().timeIntervalSince(idleStart))
        gtk_window_destroy(MainLoopTiming.gtkWindow(window))
        MainLoopTiming.spin(seconds: 0.1)
        return figures
    }
}
