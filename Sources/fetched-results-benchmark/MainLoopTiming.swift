import CGtk
import Foundation
import GtkBinding
import Viewer

/// Driving the GLib main loop of a window under test and timing its stalls, for the parts of
/// the benchmark that open the viewer's window.
enum MainLoopTiming {
    /// Initializes GTK on the display and wires the Dispatch main queue into the GLib loop.
    @MainActor static func startGTK() throws {
        guard gtk_init_check() != 0 else {
            throw OptionsError("no display for the window: run scripts/benchmark, which starts Xvfb, or set DISPLAY")
        }
        MainQueueSource.attach()
    }

    /// Runs the GLib main loop while `condition(seconds since start)` holds, with a 2 ms
    /// timer at high priority; returns the times it ran.
    static func ticks(while condition: (Double) -> Bool) -> [Double] {
        ticksWithProcessorTime(while: condition).wall
    }

    /// ``ticks(while:)``, with the main thread's processor time at each tick beside its wall
    /// time: a gap's processor time is what the loop's work took of it, the rest the thread
    /// waiting for a core (on this two-core machine, a desktop's other threads and the server).
    static func ticksWithProcessorTime(while condition: (Double) -> Bool) -> (wall: [Double], processor: [Double]) {
        final class Ticks { var wall: [Double] = []; var processor: [Double] = [] }
        let ticks = Ticks()
        let tick: GSourceFunc = { data in
            let ticks = Unmanaged<Ticks>.fromOpaque(data!).takeUnretainedValue()
            ticks.wall.append(Date.timeIntervalSinceReferenceDate)
            ticks.processor.append(MainLoopTiming.threadCPUSeconds())
            return 1  // G_SOURCE_CONTINUE
        }
        let source = g_timeout_add_full(G_PRIORITY_HIGH, 2, tick, Unmanaged.passUnretained(ticks).toOpaque(), nil)
        let start = Date()
        while condition(Date().timeIntervalSince(start)) { g_main_context_iteration(nil, 1) }
        g_source_remove(source)
        return (ticks.wall, ticks.processor)
    }

    /// The main thread's processor time between each two ticks of ``ticksWithProcessorTime(while:)``.
    static func processorTimes(_ processor: [Double]) -> [Double] {
        zip(processor.dropFirst(), processor).map { $0 - $1 }
    }

    /// Each gap between ticks beyond the timer's 2 ms: how long the loop could not run anything.
    static func gaps(_ ticks: [Double]) -> [Double] {
        zip(ticks.dropFirst(), ticks).map { max(0, $0 - $1 - 0.002) }
    }

    /// The five longest gaps of `ticks` and when they happened, to tell a slow start from a slow steady state.
    static func longestGaps(_ ticks: [Double]) -> String {
        longest(gaps(ticks), at: ticks)
    }

    /// The five longest of `durations` (one between each two of `ticks`) and when they began.
    static func longest(_ durations: [Double], at ticks: [Double]) -> String {
        let longest = zip(durations, ticks).sorted { $0.0 > $1.0 }.prefix(5)
        return longest.map { "\(Int($0.0 * 1000)) ms at +\(Int(($0.1 - (ticks.first ?? 0)) * 1000)) ms" }.joined(separator: ", ")
    }

    /// Runs the GLib main loop for `seconds`, sleeping while it has nothing to do.
    static func spin(seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        let wake: GSourceFunc = { _ in 0 }  // G_SOURCE_REMOVE: it only wakes the loop
        g_timeout_add_full(G_PRIORITY_DEFAULT, guint(max(1, seconds * 1000)), wake, nil, nil)
        while Date() < deadline { g_main_context_iteration(nil, 1) }
    }

    @MainActor static func gtkWindow(_ window: ViewerWindow) -> UnsafeMutablePointer<GtkWindow> {
        UnsafeMutableRawPointer(window.window).assumingMemoryBound(to: GtkWindow.self)
    }

    /// User and system CPU time of the calling thread so far.
    static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// User and system CPU time of this process so far.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// A CSV file of `rows` new teams spread over `zones`, as the window's Import reads it.
    static func writeTeams(_ rows: Int, zones: [String], seed: UInt64, to url: URL) throws {
        var generator = SplitMix64(seed: seed)
        var text = "teamName,qualifyingZone,wins\n"
        text.reserveCapacity(rows * 40)
        for row in 0..<rows {
            text += "Team \(row),\(zones[Int(generator.next() % UInt64(zones.count))]),\(generator.next() % 100)\n"
        }
        try text.write(to: url, atomically: true, encoding: .utf8)
    }
}

/// The frames a window draws: when each was drawn (its frame clock's `after-paint`).
@MainActor final class Frames {
    private(set) var times: [Date] = []
    var onFrame: (() -> Void)?
    private var clock: UnsafeMutableRawPointer?
    private var handlers: [gulong] = []
    private let window: Widget

    init(_ window: ViewerWindow) {
        self.window = window.window
        if let clock = gtk_widget_get_frame_clock(self.window) {
            connect(UnsafeMutableRawPointer(clock))
        } else {
            // Before the window is shown it has no frame clock: it gets one when it is realized.
            handlers.append(Signal.connect(self.window.object, "realize") { [weak self] in
                guard let self, let clock = gtk_widget_get_frame_clock(self.window) else { return }
                self.connect(UnsafeMutableRawPointer(clock))
            })
        }
    }

    private func connect(_ clock: UnsafeMutableRawPointer) {
        self.clock = clock
        let id = Signal.connect(clock, "after-paint") { [weak self] () -> Void in
            self?.times.append(Date())
            self?.onFrame?()
        }
        handlers.append(id)
    }

    /// Disconnects from the window and its clock.
    func stop() {
        for id in handlers {
            if let clock, g_signal_handler_is_connected(clock, id) != 0 { g_signal_handler_disconnect(clock, id) }
            if g_signal_handler_is_connected(window.object, id) != 0 { g_signal_handler_disconnect(window.object, id) }
        }
        handlers = []
        onFrame = nil
    }
}
