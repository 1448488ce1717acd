import Foundation
import ObjectStore
import PostgresNIO
import Synchronization
import Sharing
import XCTest

/// A fresh database on the test server (FETCHED_RESULTS_POSTGRES_URL, which
/// `scripts/with-postgres` starts and `scripts/test` and CI use), dropped at the end.
///
/// Without the variable a test skips, saying how to run it; in CI (`CI` set) it fails
/// instead, so that a CI run whose server did not start is not green.
struct ServerTestDatabase {
    static let logger = Logger(label: "SharingTests")
    let configuration: ServerConfiguration

    /// Runs `body` with a database of its own, made from the server's URL.
    static func with<T>(_ body: (ServerTestDatabase) async throws -> T) async throws -> T {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["FETCHED_RESULTS_POSTGRES_URL"] else {
            let message = "FETCHED_RESULTS_POSTGRES_URL is not set: run the tests beside a server, with scripts/with-postgres swift test --skip-build (scripts/test does)"
            if environment["CI"] != nil { throw ServerMissing(message: message) }
            throw XCTSkip(message)
        }
        let server = try ServerConfiguration(url: url)
        let name = "test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        // A connection of its own for each: a test may stop and start the server meanwhile.
        let admin = try await connect(server)
        try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
        try await admin.close()
        var configuration = server
        configuration.database = name
        do {
            let result = try await body(ServerTestDatabase(configuration: configuration))
            try await drop(name, on: server)
            return result
        } catch {
            try? await drop(name, on: server)
            throw error
        }
    }

    private static func drop(_ name: String, on server: ServerConfiguration) async throws {
        let admin = try await connect(server)
        try await admin.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: logger)
        try await admin.close()
    }

    /// Runs `$FETCHED_RESULTS_POSTGRES_CTL stop` or `start` (see scripts/with-postgres): the
    /// test server stops or starts again, on the same port.
    static func server(_ command: String) throws {
        guard let ctl = ProcessInfo.processInfo.environment["FETCHED_RESULTS_POSTGRES_CTL"] else {
            let message = "FETCHED_RESULTS_POSTGRES_CTL is not set: run the tests with scripts/with-postgres"
            if ProcessInfo.processInfo.environment["CI"] != nil { throw ServerMissing(message: message) }
            throw XCTSkip(message)
        }
        // posix_spawn and waitpid, not Foundation's Process: its waitUntilExit never saw this
        // script end (it runs pg_ctl through runuser), leaving it a zombie and the test stuck.
        var pid: pid_t = 0
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup(ctl), strdup(command), nil]
        defer { arguments.forEach { free($0) } }
        let spawned = posix_spawn(&pid, ctl, nil, nil, arguments, environ)
        guard spawned == 0 else { throw ServerMissing(message: "cannot run \(ctl): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        guard status == 0 else { throw ServerMissing(message: "\(ctl) \(command) failed with status \(status)") }
    }

    private static func connect(_ configuration: ServerConfiguration) async throws -> PostgresConnection {
        try await PostgresConnection.connect(configuration: try configuration.connection, id: 1, logger: logger)
    }

    /// A new connection to the database; closed when `body` ends.
    func withConnection<T>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await Self.connect(configuration)
        do {
            let result = try await body(connection)
            try await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Ends every other connection to the database (listeners and pushes alike), as an
    /// administrator or a network fault would; returns how many.
    ///
    /// Given up after 10 s (0): postgres-nio 1.33 can wait forever for the rest of a query
    /// whose connection the server ended, and a test that stops the server meanwhile ends
    /// this one's too (`CounterChaosTests` hung so).
    func terminateConnections() async -> Int {
        let count = Mutex<Int?>(nil)
        let work = Task {
            let terminated = (try? await withConnection { connection in
                var count = 0
                let rows = try await connection.query("""
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid()
                    """, logger: Self.logger)
                for try await _ in rows.decode(Bool.self) { count += 1 }
                return count
            }) ?? 0
            count.withLock { $0 = terminated }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let terminated = count.withLock({ $0 }) { return terminated }
            try? await Task.sleep(for: .milliseconds(20))
        }
        work.cancel()
        return 0
    }

    /// The server processes of every other connection to the database (the desktops').
    func backendProcesses() async throws -> [Int32] {
        try await withConnection { connection in
            let rows = try await connection.query("""
                SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
                """, logger: Self.logger)
            var pids: [Int32] = []
            for try await pid in rows.decode(Int32.self) { pids.append(pid) }
            return pids
        }
    }

    /// Runs `sql` on `connection`, returning nothing.
    static func execute(_ sql: String, on connection: PostgresConnection) async throws {
        try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
    }

    /// The number `sql` returns (its last row's first column), nil for no row.
    static func number(_ sql: String, on connection: PostgresConnection) async throws -> Int64? {
        let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        var result: Int64?
        for try await value in rows.decode(Int64.self) { result = value }
        return result
    }
}

struct ServerMissing: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Boards and their cards: every attribute type, and a to-one relationship.
enum BoardModel {
    static let model = try! Model(entities: [
        EntityDescription(
            name: "Board",
            attributes: [AttributeDescription(name: "name", type: .string)],
            relationships: [RelationshipDescription(name: "cards", destinationEntity: "Card", inverseName: "board", isToMany: true)]),
        EntityDescription(
            name: "Card",
            attributes: [
                AttributeDescription(name: "title", type: .string),
                AttributeDescription(name: "count", type: .integer),
                AttributeDescription(name: "score", type: .double, isOptional: true),
                AttributeDescription(name: "done", type: .bool),
                AttributeDescription(name: "due", type: .date, isOptional: true),
                AttributeDescription(name: "photo", type: .binary, isOptional: true),
            ],
            relationships: [RelationshipDescription(name: "board", destinationEntity: "Board", inverseName: "cards")]),
    ])
}
