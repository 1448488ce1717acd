import Foundation
import TestSupport

/// One `fetched-results apply` process on a store, fed one operation and a save at a time,
/// and started again after it was killed: a desktop (or a script) in the sharing tests that
/// kill processes.
final class ApplyProcess: @unchecked Sendable {
    let store: URL
    let executable: URL
    /// Where its standard error goes (read, or a full pipe would stop the process at its
    /// next status line).
    let errorFile: URL
    private let lock = NSLock()
    private var process: ChildProcess?
    private var lines = LineBuffer()
    private(set) var kills = 0

    init(store: URL, executable: URL, errorFile: URL) {
        self.store = store
        self.executable = executable
        self.errorFile = errorFile
    }

    /// Starts the process, sharing through `url` (nil: the server the store remembers).
    /// One that still runs (it stopped answering) is killed first.
    func start(sharing url: String? = nil) throws {
        let previous = lock.withLock { self.process }
        if previous?.kill(SIGKILL) == true { previous?.waitUntilExit() }
        previous?.closeInput()
        let arguments = ["apply", "--store", store.path] + (url.map { ["--share", $0] } ?? [])
        let buffer = LineBuffer()
        let file = errorFile
        let process = try ChildProcess(executable, arguments, output: { buffer.append($0) }, errors: { data in
            guard !data.isEmpty else { return }
            if let out = try? FileHandle(forWritingTo: file) { out.seekToEndOfFile(); out.write(data); try? out.close() }
            else { try? data.write(to: file) }
        })
        lock.withLock {
            self.process = process
            self.lines = buffer
        }
    }

    /// Kills it (SIGKILL) if it runs.
    func kill() {
        lock.withLock {
            if process?.kill(SIGKILL) == true { kills += 1 }
        }
    }

    enum Outcome { case acknowledged, killed }

    /// Sends one operation and a save (or the save alone); waits for the save's line.
    func send(_ operation: String) -> Outcome {
        let (process, lines) = lock.withLock { (self.process, self.lines) }
        let before = lines.count
        let text = operation == #"{"op":"save"}"# ? operation + "\n" : operation + "\n{\"op\":\"save\"}\n"
        do { try process?.write(Data(text.utf8)) } catch { return .killed }
        return lines.waitForLine(after: before) ? .acknowledged : .killed
    }

    /// Closes the input and waits for the process to push and end.
    func finish() {
        let process = lock.withLock { self.process }
        process?.closeInput()
        process?.waitUntilExit()
    }
}

/// A flag set once, read from any thread.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

/// A process's output lines, counted as they come; EOF means it ended.
final class LineBuffer: @unchecked Sendable {
    private let condition = NSCondition()
    private var data = Data()
    private var ended = false

    var count: Int { condition.withLock { data.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) } } }

    func append(_ chunk: Data) {
        condition.withLock {
            if chunk.isEmpty { ended = true } else { data.append(chunk) }
            condition.broadcast()
        }
    }

    /// Waits until there are more than `count` lines (true) or the process ended (false).
    func waitForLine(after count: Int) -> Bool {
        condition.withLock {
            while true {
                let lines = data.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
                if lines > count { return true }
                if ended { return false }
                if !condition.wait(until: Date().addingTimeInterval(30)) { return false }
            }
        }
    }
}
