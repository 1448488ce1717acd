import Foundation
import Glibc

/// What one desktop process of the sharing benchmarks does, handed to it as JSON on its
/// command line (see ``DesktopChild``).
struct DesktopPlan: Codable, Sendable {
    enum Role: String, Codable, Sendable {
        /// A firehose writer: saves `batch` stamped teams at a time, as fast as it can or at
        /// `rate` changes a second, for `seconds`.
        case writer
        /// One of many desktops: saves one stamped change a second to its own team (when its
        /// index is below `writers`) and times the other desktops' changes in a controller.
        case desktop
    }

    var role: Role
    /// The database on the server `$FETCHED_RESULTS_POSTGRES_URL` names.
    var database: String
    /// The desktop's own store file (new and empty: it joins the database).
    var store: String
    var index: Int
    /// Desktops that write: the firehose's writers, or the desktops with an index below it.
    var writers: Int
    /// Desktops in the run (the desktops part staggers their saves over each second).
    var desktops: Int
    var seconds: Double
    /// Objects changed by each of a writer's saves.
    var batch: Int = 1
    /// Changes a second a writer aims at; 0 for as many as it can.
    var rate: Int = 0
}

/// A desktop of the sharing benchmarks run as a process of its own: this executable again,
/// with ``DesktopChild/flag`` and its ``DesktopPlan``, told what to do one line at a time on
/// its standard input and answering one line at a time on its standard output.
///
/// Every wait has a deadline; a child that exits, says it failed or answers nothing in time
/// is named in the error, with the end of what it wrote on standard error. ``kill()`` ends
/// the process if it still runs; a child also ends by itself when its standard input closes,
/// so none outlives the benchmark.
final class DesktopProcess: @unchecked Sendable {
    let name: String
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errorLog: URL
    private let lines = LineQueue()

    /// Starts the desktop `name` on `plan`; what it writes on standard error goes to `errorLog`.
    init(name: String, plan: DesktopPlan, errorLog: URL) throws {
        self.name = name
        self.errorLog = errorLog
        // A child that died must not take the benchmark with it when a command is sent.
        signal(SIGPIPE, SIG_IGN)
        process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = [DesktopChild.flag, String(decoding: try JSONEncoder().encode(plan), as: UTF8.self)]
        process.standardInput = input
        process.standardOutput = output
        _ = FileManager.default.createFile(atPath: errorLog.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: errorLog)
        try process.run()
        Thread { [self] in readLines() }.start()
    }

    /// Collects the child's lines until its standard output closes.
    private func readLines() {
        let handle = output.fileHandleForReading
        var pending = Data()
        while true {
            let data = handle.availableData
            if data.isEmpty {
                lines.close()
                return
            }
            pending.append(data)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                pending = Data(pending[pending.index(after: newline)...])
            }
        }
    }

    /// Sends `command` as one line.
    func send(_ command: String) throws {
        do {
            try input.fileHandleForWriting.write(contentsOf: Data((command + "\n").utf8))
        } catch {
            throw failure("did not take '\(command)' (\(error))")
        }
    }

    /// Waits up to `seconds` for the child's line starting with `word`; returns the rest of it.
    func wait(for word: String, within seconds: Double) throws -> String {
        switch lines.next(word, within: seconds, unless: { $0.hasPrefix("failed") }) {
        case .found(let rest): return rest
        case .other(let failed): throw failure(failed)
        case .closed: throw failure("exited before saying '\(word)'")
        case .timedOut: throw failure("said no '\(word)' within \(Int(seconds)) s")
        }
    }

    /// Ends the child: SIGKILL if it still runs, and waits for its end.
    func kill() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Whether the process still runs.
    var isRunning: Bool { process.isRunning }

    private func failure(_ what: String) -> OptionsError {
        let log = (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
        let tail = log.split(separator: "\n").suffix(5).joined(separator: " | ")
        return OptionsError("\(name) (pid \(process.processIdentifier)) \(what)\(tail.isEmpty ? "" : "; its standard error ends: \(tail)")")
    }
}

extension Array where Element == DesktopProcess {
    /// Waits for `word` from each desktop, in turn, within `seconds` in all; returns what each said.
    func wait(for word: String, within seconds: Double) throws -> [String] {
        let deadline = Date(timeIntervalSinceNow: seconds)
        return try map { try $0.wait(for: word, within: Swift.max(0.1, deadline.timeIntervalSinceNow)) }
    }

    /// Sends `command` to every desktop.
    func send(_ command: String) throws {
        for desktop in self { try desktop.send(command) }
    }

    /// Ends every desktop: told `stop`, each stops sharing and exits; those still running
    /// 10 s later are killed.
    func stop() {
        for desktop in self { try? desktop.send("stop") }
        let deadline = Date(timeIntervalSinceNow: 10)
        while contains(where: \.isRunning) && Date() < deadline { usleep(20_000) }
        for desktop in self { desktop.kill() }
    }
}

/// Lines received from another process, taken by their first word: a desktop's answers in the
/// benchmark, the benchmark's commands in a desktop.
final class LineQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var lines: [String] = []
    private var closed = false

    /// What ``next(_:within:unless:)`` found.
    enum Taken {
        /// The line starting with the word; the rest of it.
        case found(String)
        /// A line that ends the wait (a failure reported).
        case other(String)
        /// The input ended first.
        case closed
        case timedOut
    }

    func append(_ line: String) {
        condition.lock()
        lines.append(line)
        condition.broadcast()
        condition.unlock()
    }

    /// No more lines will come.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits up to `seconds` for the line starting with `word` and takes it, unless a line
    /// for which `stop` holds or the end of the input comes first.
    func next(_ word: String, within seconds: Double, unless stop: (String) -> Bool = { _ in false }) -> Taken {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let index = lines.firstIndex(where: { $0 == word || $0.hasPrefix(word + " ") }) {
                return .found(String(lines.remove(at: index).dropFirst(word.count)).trimmingCharacters(in: .whitespaces))
            }
            if let line = lines.first(where: stop) { return .other(line) }
            if closed { return .closed }
            if !condition.wait(until: deadline), Date() >= deadline { return .timedOut }
        }
    }
}

/// The path of a store named `name` in a folder of its own under `folder`, as each desktop's
/// store is on a machine of its own.
func storeInFolderOfItsOwn(_ folder: URL, _ name: String) throws -> String {
    let own = folder.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
    return own.appendingPathComponent("\(name).sqlite").path
}
