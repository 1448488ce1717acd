import Foundation
import PostgresNIO
import Sharing
import Synchronization

/// What the PostgreSQL server spends, seen from outside it: the CPU time of its processes
/// (from `/proc`), and how many client connections a database has (`pg_stat_activity`,
/// polled; the server's own workers, autovacuum's among them, are not counted).
///
/// The server's processes are its postmaster (the parent of a backend's process) and every
/// child of it; the CPU time of children that ended (backends of closed connections) is in
/// the postmaster's own account of its children, once it has reaped them.
final class ServerProbe: Sendable {
    private let postmaster: Int32
    private let database: String
    private let connection: PostgresConnection
    private let logger = Logger(label: "benchmark")
    private let most = Mutex(0)
    private let polling = Mutex<Task<Void, Never>?>(nil)

    /// Connects to the server's `postgres` database (so that the probe is not one of
    /// `database`'s connections) and finds the postmaster.
    init(server: ServerConfiguration, database: String) async throws {
        self.database = database
        var maintenance = server
        maintenance.database = "postgres"
        let logger = Logger(label: "benchmark")
        let connection = try await PostgresConnection.connect(configuration: try maintenance.connection, id: 7, logger: logger)
        self.connection = connection
        var backend: Int32 = 0
        for try await pid in try await connection.query("SELECT pg_backend_pid()", logger: logger).decode(Int32.self) { backend = pid }
        guard let parent = Self.stat(of: backend)?.parent else { throw OptionsError("cannot read /proc/\(backend)/stat of the server's backend") }
        postmaster = parent
    }

    /// The CPU seconds (user and system) of the server's processes so far.
    func cpuSeconds() -> Double {
        guard let own = Self.stat(of: postmaster) else { return .nan }
        var ticks = own.ticks + own.childTicks
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let child = Self.stat(of: pid), child.parent == postmaster else { continue }
            ticks += child.ticks + child.childTicks
        }
        return Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Counts the database's connections every 100 ms until ``stopCounting()``.
    func startCounting() {
        let task = Task { [self] in
            while !Task.isCancelled {
                if let count = try? await connections() { most.withLock { $0 = max($0, count) } }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        polling.withLock { $0 = task }
    }

    /// Stops counting; the most connections the database had at once.
    func stopCounting() async -> Int {
        let task = polling.withLock { $0 }
        task?.cancel()
        await task?.value
        return most.withLock { $0 }
    }

    /// The database's connections now.
    private func connections() async throws -> Int {
        var count = 0
        let query: PostgresQuery = "SELECT count(*)::int FROM pg_stat_activity WHERE datname = \(database) AND backend_type = 'client backend'"
        for try await value in try await connection.query(query, logger: logger).decode(Int.self) { count = value }
        return count
    }

    func close() async {
        _ = await stopCounting()
        try? await connection.close()
    }

    /// A process's parent and CPU ticks (its own, and its reaped children's), from `/proc/PID/stat`.
    private static func stat(of pid: Int32) -> (parent: Int32, ticks: Int, childTicks: Int)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let end = text.lastIndex(of: ")") else { return nil }
        // After the command's name: state, ppid, … utime (14th field), stime, cutime, cstime.
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 14, let parent = Int32(fields[1]), let user = Int(fields[11]), let system = Int(fields[12]),
              let childUser = Int(fields[13]), let childSystem = Int(fields[14]) else { return nil }
        return (parent, user + system, childUser + childSystem)
    }
}
