import Foundation
import XCTest

/// A new folder in the temporary directory, removed when `test` ends.
public func temporaryFolder(_ test: XCTestCase) throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("\(type(of: test))-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
}

/// Calls `step` (a turn of an event loop) until `condition` holds or `timeout` passes;
/// returns whether it held.
public func repeatStep(until condition: () -> Bool, timeout: TimeInterval, _ step: () -> Void) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else { return false }
        step()
    }
    return true
}

/// Runs the current run loop (and through it the Dispatch main queue, where contexts made
/// on `.main` get their merges) until `condition` holds or `timeout` passes; returns whether
/// it held.
@discardableResult
public func waitUntil(_ condition: () -> Bool, timeout: TimeInterval = 5) -> Bool {
    repeatStep(until: condition, timeout: timeout) { RunLoop.current.run(until: Date().addingTimeInterval(0.01)) }
}

/// SplitMix64: a seeded generator, so that a failing property test can be replayed.
public struct SeededGenerator: RandomNumberGenerator {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// The seed in the environment variable `name` (`SEED=42 scripts/test ...`); else, in CI
    /// (`CI` set), the fixed ``ciSeed`` so that a red run can be replayed and no run is red
    /// by chance alone; else a random one, so that runs on developers' machines explore.
    public static func seed(fromEnvironment name: String = "SEED") -> UInt64 {
        let environment = ProcessInfo.processInfo.environment
        if let seed = UInt64(environment[name] ?? "") { return seed }
        if environment["CI"] != nil { return ciSeed }
        return UInt64.random(in: 0...UInt64.max)
    }

    /// The seed of every property test in CI.
    public static let ciSeed: UInt64 = 2014

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The `name` executable this package builds: beside the test bundle (the tests run from the
/// build folder that holds it too), else in `.build/debug`.
public func builtExecutable(_ name: String, besides testClass: AnyClass) -> URL {
    let bundle = Bundle(for: testClass).bundleURL
    let candidates = [
        bundle.appendingPathComponent(name),
        bundle.deletingLastPathComponent().appendingPathComponent(name),
        URL(fileURLWithPath: #filePath).appendingPathComponent("../../../.build/debug/\(name)").standardized,
    ]
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
}

/// Runs `sql` in the `sqlite3` shell on the store at `store`: another process writing the
/// store, knowing nothing of ours. It waits up to 5 s for other writers' locks instead of
/// failing. Returns what it printed, trimmed.
@discardableResult
public func sqlite3(_ store: URL, _ sql: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    process.arguments = ["-cmd", ".timeout 5000", store.path, sql]
    let output = Pipe(), errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let printed = output.fileHandleForReading.readDataToEndOfFile()
    let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    XCTAssertEqual(process.terminationStatus, 0, "\(sql): \(message)", file: file, line: line)
    return String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Starts the `sqlite3` shell holding the write lock of `store` (`BEGIN IMMEDIATE`) while it
/// runs `sql`, then for `seconds`, then committing; returns once the lock is surely taken.
/// Wait for the returned process to know the lock is free again.
public func sqlite3HoldingWriteLock(of store: URL, running sql: String, for seconds: Double) throws -> Process {
    let holder = Process()
    holder.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    holder.arguments = [store.path]
    let input = Pipe()
    holder.standardInput = input
    try holder.run()
    try input.fileHandleForWriting.write(contentsOf: Data("BEGIN IMMEDIATE;\n\(sql);\n.shell sleep \(seconds)\nCOMMIT;\n".utf8))
    try input.fileHandleForWriting.close()
    Thread.sleep(forTimeInterval: 0.3)
    return holder
}

/// Whether the environment names a display (X11 or Wayland). GUI tests check this before
/// asking GTK: `gtk_init_check` asked a second time after it found no display crashes the
/// test process, and tests of several classes would ask.
public var environmentNamesADisplay: Bool {
    let environment = ProcessInfo.processInfo.environment
    return !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
}

/// Starts `executable` with `arguments` and `environment` (nil values unset), its standard
/// input, output and error on pipes; the caller writes the input and closes it.
public func startProcess(_ executable: URL, _ arguments: [String], environment: [String: String?] = [:]) throws
    -> (process: Process, input: FileHandle, output: Pipe, errors: Pipe) {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    var merged = ProcessInfo.processInfo.environment
    for (key, value) in environment { merged[key] = value }
    process.environment = merged
    let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    return (process, stdin.fileHandleForWriting, stdout, stderr)
}

/// Every SQL statement a store ran, collected from its `sqlLog`.
public final class SQLLog: @unchecked Sendable {
    public init() {}

    private let lock = NSLock()
    private var collected: [String] = []

    public func append(_ statement: String) {
        lock.lock()
        defer { lock.unlock() }
        collected.append(statement)
    }

    public var statements: [String] {
        lock.lock()
        defer { lock.unlock() }
        return collected
    }

    public func reset() {
        lock.lock()
        defer { lock.unlock() }
        collected = []
    }

    /// What to pass as a store's `sqlLog`.
    public var handler: @Sendable (String) -> Void { { [self] statement in append(statement) } }

    /// The statements that read rows of `table` in order: a fetch of the results.
    public func orderedReads(of table: String) -> [String] {
        statements.filter { $0.contains("FROM \"\(table)\"") && $0.contains("ORDER BY") }
    }
}
