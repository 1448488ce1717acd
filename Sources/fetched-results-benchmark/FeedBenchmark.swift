import FetchedResults
import Foundation
import ObjectStore
import Synchronization

/// How soon another process's commit reaches `fetched-results watch`'s delegate (a JSON line
/// on its standard output), through the store's change feed: commits of the `sqlite3` shell
/// and of `fetched-results apply`, each timed from the moment its writer says the commit is
/// done to the moment `watch` prints the batch. Beside it, the same process's save to its
/// own controller's batch; and an idle `watch`'s CPU time and wake-ups (context switches of
/// all its threads).
struct FeedBenchmark {
    let store: URL
    let commits: Int
    let idleSeconds: Double
    let seed: UInt64

    struct Figures {
        var fromShell: [Double] = []
        var fromApply: [Double] = []
        var sameProcess: [Double] = []
        var idle = ProcessUsage.Idle(cpuSeconds: 0, wakeUps: 0)
    }

    /// The `fetched-results` executable built beside the benchmark.
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("fetched-results")
    }

    func run() throws -> Figures {
        var figures = Figures()
        var random = SplitMix64(seed: seed)
        let keys = try Self.shell(store, "SELECT Z_PK FROM Team ORDER BY random() LIMIT \(commits)").split(separator: "\n").compactMap { Int64($0) }
        let names = try Self.shell(store, "SELECT teamName FROM Team WHERE teamName NOT LIKE '%''%' ORDER BY random() LIMIT \(commits)")
            .split(separator: "\n").map(String.init)
        guard keys.count == commits, names.count == commits else { throw OptionsError("the store has fewer than \(commits) teams") }

        let watch = try LineReader(Self.executable, ["watch", "--store", store.path])
        defer { watch.stop() }
        guard watch.waitForLines(1, timeout: 600) else { throw OptionsError("watch printed no sections: \(watch.errors)") }

        // The sqlite3 shell: an update, then a SELECT whose answer comes after the commit.
        let shell = try LineReader(URL(fileURLWithPath: "/usr/bin/sqlite3"), [store.path])
        defer { shell.stop() }
        try shell.send(".timeout 10000\n")
        for key in keys {
            Thread.sleep(forTimeInterval: Double(20 + random.next() % 40) / 1000)
            let (lines, printed) = (watch.count, shell.count)
            try shell.send("UPDATE Team SET wins = wins + 1 WHERE Z_PK = \(key);\nSELECT 'committed';\n")
            guard shell.waitForLines(printed + 1, timeout: 30), watch.waitForLines(lines + 1, timeout: 30) else { throw OptionsError("a commit of the sqlite3 shell did not reach watch") }
            figures.fromShell.append(watch.time(ofLine: lines) - shell.time(ofLine: printed))
        }

        // apply: a tap and a save; its own batch line comes after its commit.
        let apply = try LineReader(Self.executable, ["apply", "--store", store.path])
        defer { apply.stop() }
        for name in names {
            Thread.sleep(forTimeInterval: Double(20 + random.next() % 40) / 1000)
            let (lines, printed) = (watch.count, apply.count)
            try apply.send(#"{"op":"update","entity":"Team","where":"teamName == '\#(name)'","add":{"wins":1}}"# + "\n" + #"{"op":"save"}"# + "\n")
            guard apply.waitForLines(printed + 1, timeout: 60), watch.waitForLines(lines + 1, timeout: 30) else { throw OptionsError("a save of apply did not reach watch: \(apply.errors)") }
            figures.fromApply.append(watch.time(ofLine: lines) - apply.time(ofLine: printed))
        }
        apply.stop()
        shell.stop()

        // Idle: nothing writes.
        Thread.sleep(forTimeInterval: 1)
        figures.idle = try ProcessUsage.idle(pid: watch.pid, seconds: Double(idleSeconds))
        watch.stop()

        figures.sameProcess = try sameProcessSaves(of: names)
        return figures
    }

    /// The baseline: this process's save to its own controller's batch, for each of `names`.
    private func sameProcessSaves(of names: [String]) throws -> [Double] {
        var sameProcess: [Double] = []
        let persistent = try PersistentStore(url: store, model: WorldCupStore.model)
        let context = ObjectContext(store: persistent, queue: DispatchQueue(label: "baseline"))
        let delegate = BatchTimes()
        let controller = FetchedResultsController<ManagedObject>(fetchRequest: WorldCupStore.request, managedObjectContext: context, sectionNameKeyPath: WorldCupStore.sectionNameKeyPath)
        controller.delegate = delegate
        try context.performAndWait {
            try controller.performFetch()
            for name in names {
                let request = FetchRequest<ManagedObject>(entityName: "Team", predicate: try FetchPredicate(format: "teamName == %@", name))
                guard let team = try context.fetch(request).first, case .integer(let wins) = team.attributeValue(forKey: "wins") else { continue }
                let started = Measure.now()
                try team.setValue(wins + 1, forKey: "wins")
                try context.save()
                if let shown = delegate.last { sameProcess.append(shown - started) }
                delegate.last = nil
            }
        }
        return sameProcess
    }

    private static func shell(_ store: URL, _ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [store.path, sql]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

private final class BatchTimes: FetchedResultsControllerDelegate {
    var last: Double?
    func controller(_ controller: FetchedResultsController<ManagedObject>, didChangeContentWith batch: ChangeBatch) {
        last = Measure.now()
    }
}

/// A child process whose output lines are counted and timed as they arrive.
private final class LineReader: @unchecked Sendable {
    let process = Process()
    private let input = Pipe(), output = Pipe(), errorPipe = Pipe()
    private let condition = NSCondition()
    private var times: [Double] = []
    private var partial = Data()
    private var errorText = Data()

    init(_ executable: URL, _ arguments: [String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errorPipe
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            let now = Measure.now()
            guard let self, !data.isEmpty else { return }
            self.condition.withLock {
                self.partial.append(data)
                while let newline = self.partial.firstIndex(of: UInt8(ascii: "\n")) {
                    self.partial.removeSubrange(...newline)
                    self.times.append(now)
                }
                self.condition.broadcast()
            }
        }
        errorPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            self?.condition.withLock { self?.errorText.append(data) }
        }
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }
    var count: Int { condition.withLock { times.count } }
    var errors: String { condition.withLock { String(decoding: errorText, as: UTF8.self) } }
    func time(ofLine index: Int) -> Double { condition.withLock { times[index] } }

    func send(_ text: String) throws { try input.fileHandleForWriting.write(contentsOf: Data(text.utf8)) }

    func waitForLines(_ count: Int, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        return condition.withLock {
            while times.count < count {
                if !process.isRunning || !condition.wait(until: deadline) { return times.count >= count }
            }
            return true
        }
    }

    func stop() {
        if process.isRunning {
            try? input.fileHandleForWriting.close()
            process.terminate()
            process.waitUntilExit()
        }
        output.fileHandleForReading.readabilityHandler = nil
        errorPipe.fileHandleForReading.readabilityHandler = nil
    }
}

/// A process's CPU time and context switches (all its threads), from /proc.
struct ProcessUsage {
    /// Time on a CPU (`/proc/<pid>/task/<tid>/schedstat`, in nanoseconds, where `stat`'s
    /// clock ticks would round 10 ms away).
    var cpuSeconds: Double
    /// Context switches per thread.
    var threads: [String: Int]

    /// What a process cost over a while of doing nothing.
    struct Idle {
        var cpuSeconds: Double
        var wakeUps: Int
    }

    /// What the process `pid` costs over the next `seconds`.
    static func idle(pid: Int32, seconds: Double) throws -> Idle {
        let before = try ProcessUsage(pid: pid)
        Thread.sleep(forTimeInterval: seconds)
        let after = try ProcessUsage(pid: pid)
        return Idle(cpuSeconds: after.cpuSeconds(since: before), wakeUps: after.wakeUps(since: before))
    }

    /// Wake-ups since `earlier`: the switches of each thread alive now, less what it had
    /// then (a thread that ended meanwhile takes its count with it).
    func wakeUps(since earlier: ProcessUsage) -> Int {
        threads.reduce(0) { $0 + $1.value - (earlier.threads[$1.key] ?? 0) }
    }

    /// CPU time since `earlier`, of the threads alive now.
    func cpuSeconds(since earlier: ProcessUsage) -> Double {
        threadCPU.reduce(0) { $0 + $1.value - (earlier.threadCPU[$1.key] ?? 0) }
    }

    private var threadCPU: [String: Double]

    init(pid: Int32) throws {
        threads = [:]
        threadCPU = [:]
        for thread in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8)) ?? ""
            var switches = 0
            for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches") || line.hasPrefix("nonvoluntary_ctxt_switches") {
                switches += Int(line.split(separator: "\t").last.map(String.init) ?? "") ?? 0
            }
            threads[thread] = switches
            let schedstat = (try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/schedstat", encoding: .utf8)) ?? ""
            threadCPU[thread] = (Double(schedstat.split(separator: " ").first ?? "") ?? 0) / 1e9
        }
        cpuSeconds = threadCPU.values.reduce(0, +)
    }
}

/// The floor under every idle figure: a Swift process that ran one task (Swift
/// concurrency's executor is libdispatch's global queues, as `DispatchQueue.global()` is)
/// and then waits for nothing (this executable with ``flag``). On Linux, the first worker
/// thread of a global queue starts libdispatch's workqueue monitor, a timer on its manager
/// thread that fires every second for the life of the process (`_dispatch_workq_init_once`
/// in libdispatch's `src/event/workqueue.c`).
enum IdleFloor {
    static let flag = "--idle-floor"

    static func main() -> Never {
        let done = DispatchSemaphore(value: 0)
        Task.detached { done.signal() }
        done.wait()
        while true { pause() }
    }

    static func measure(seconds: Int) throws -> ProcessUsage.Idle {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        process.arguments = [flag]
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        Thread.sleep(forTimeInterval: 1)
        return try ProcessUsage.idle(pid: process.processIdentifier, seconds: Double(seconds))
    }
}
