import CGtk
import Datasets
import Foundation
import GRDB
import GtkBinding
import ObjectStore
import Viewer

/// The viewer's window while its data changes underneath: an import of many rows in the
/// background (how long the main loop stalls), commits of another connection (how soon the
/// window shows them) and an idle window (its CPU). Runs the real window on the display
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
        var idleCPUSeconds: Double
        var idleSeconds: Double
    }

    @MainActor func run() throws -> Figures {
        guard gtk_init_check() != 0 else {
            throw OptionsError("no display for the window: run scripts/benchmark, which starts Xvfb, or set DISPLAY")
        }
        MainQueueSource.attach()
        let csv = folder.appendingPathComponent("teams.csv")
        try writeTeams(to: csv)
        let window = try ViewerWindow(application: nil, options: ViewerOptions(datasetName: "worldcup", storeFolder: folder))
        gtk_window_present(Self.gtkWindow(window))
        spin(seconds: 0.5)

        let idle = Self.gaps(mainLoopTicks { $0 < 1 })
        let started = Date()
        window.startImport(file: csv)
        let importTicks = mainLoopTicks { _ in window.isImporting }
        let importSeconds = Date().timeIntervalSince(started)
        let importing = Self.gaps(importTicks)
        // When they happened, to tell a slow start from a slow steady state.
        let longest = zip(importing, importTicks).sorted { $0.0 > $1.0 }.prefix(5)
        print("  longest stalls: " + longest.map { "\(Int($0.0 * 1000)) ms at +\(Int(($0.1 - importTicks[0]) * 1000)) ms" }.joined(separator: ", "))
        spin(seconds: 0.3)

        // Another connection, as another process: its commits reach the window through the
        // store's history, as those of the sqlite3 shell do.
        let other = try Dataset.load(named: "worldcup").openStore(at: folder.appendingPathComponent("worldcup.sqlite"))
        var latencies: [Double] = []
        var shown: Date?
        window.didUpdate = { shown = Date() }
        var generator = SplitMix64(seed: seed)
        for _ in 0..<20 {
            spin(seconds: Double(generator.next() % 200) / 1000)  // commits land anywhere between two looks
            let key = Int64(generator.next() % UInt64(rows)) + 1
            shown = nil
            try other.database.write { db in
                try db.execute(sql: #"UPDATE "Team" SET "wins" = "wins" + 1 WHERE Z_PK = ?"#, arguments: [key])
            }
            let committed = Date()
            let deadline = committed.addingTimeInterval(5)
            while shown == nil && Date() < deadline { g_main_context_iteration(nil, 1) }
            latencies.append((shown ?? deadline).timeIntervalSince(committed))
        }
        window.didUpdate = nil

        let cpuBefore = Self.cpuSeconds(), idleStart = Date()
        spin(seconds: 5)
        let idleCPU = Self.cpuSeconds() - cpuBefore
        let figures = Figures(
            idleStall: idle.max() ?? 0, importStalls: importing, importSeconds: importSeconds,
            listCount: window.listedObjectCount, followLatencies: latencies,
            idleCPUSeconds: idleCPU, idleSeconds: Date().timeIntervalSince(idleStart))
        gtk_window_destroy(Self.gtkWindow(window))
        spin(seconds: 0.1)
        return figures
    }

    /// A CSV file of `rows` new teams in the six zones.
    private func writeTeams(to url: URL) throws {
        let zones = ["Africa", "Asia", "Europe", "North/Central America", "Oceania", "South America"]
        var generator = SplitMix64(seed: seed)
        var text = "teamName,qualifyingZone,wins\n"
        text.reserveCapacity(rows * 40)
        for row in 0..<rows {
            text += "Team \(row),\(zones[Int(generator.next() % 6)]),\(generator.next() % 100)\n"
        }
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    /// Runs the GLib main loop while `condition(seconds since start)` holds, with a 2 ms
    /// timer at high priority; returns the times it ran.
    private func mainLoopTicks(while condition: (Double) -> Bool) -> [Double] {
        final class Ticks { var times: [Double] = [] }
        let ticks = Ticks()
        let tick: GSourceFunc = { data in
            Unmanaged<Ticks>.fromOpaque(data!).takeUnretainedValue().times.append(Date.timeIntervalSinceReferenceDate)
            return 1  // G_SOURCE_CONTINUE
        }
        let source = g_timeout_add_full(G_PRIORITY_HIGH, 2, tick, Unmanaged.passUnretained(ticks).toOpaque(), nil)
        let start = Date()
        while condition(Date().timeIntervalSince(start)) { g_main_context_iteration(nil, 1) }
        g_source_remove(source)
        return ticks.times
    }

    /// Each gap between ticks beyond the timer's 2 ms: how long the loop could not run anything.
    private static func gaps(_ ticks: [Double]) -> [Double] {
        zip(ticks.dropFirst(), ticks).map { max(0, $0 - $1 - 0.002) }
    }

    /// Runs the GLib main loop for `seconds`, sleeping while it has nothing to do.
    private func spin(seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        let wake: GSourceFunc = { _ in 0 }  // G_SOURCE_REMOVE: it only wakes the loop
        g_timeout_add_full(G_PRIORITY_DEFAULT, guint(max(1, seconds * 1000)), wake, nil, nil)
        while Date() < deadline { g_main_context_iteration(nil, 1) }
    }

    @MainActor private static func gtkWindow(_ window: ViewerWindow) -> UnsafeMutablePointer<GtkWindow> {
        UnsafeMutableRawPointer(window.window).assumingMemoryBound(to: GtkWindow.self)
    }

    /// User and system CPU time of this process so far.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}
