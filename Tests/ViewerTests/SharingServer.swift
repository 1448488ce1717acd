import Foundation
import PostgresNIO
import Sharing
import XCTest

/// Databases for windows that share: one of its own per test on the test server
/// (FETCHED_RESULTS_POSTGRES_URL, which `scripts/with-postgres` starts), dropped when the test
/// ends, or an address where no server listens.
///
/// Without the variable a test that needs the server skips, saying how to run it; in CI (`CI`
/// set) it fails instead, so that a run whose server did not start is not green.
enum SharingServer {
    private static let logger = Logger(label: "ViewerTests")

    /// The URL of a new database; dropped at the end of `test`.
    static func database(for test: XCTestCase) throws -> String {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["FETCHED_RESULTS_POSTGRES_URL"] else {
            let message = "FETCHED_RESULTS_POSTGRES_URL is not set: run the tests beside a server, with scripts/with-postgres (scripts/test does)"
            if environment["CI"] != nil { XCTFail(message) }
            throw XCTSkip(message)
        }
        let server = try ServerConfiguration(url: url)
        let name = "viewer_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try run("CREATE DATABASE \(name)", on: server)
        test.addTeardownBlock { try? run("DROP DATABASE IF EXISTS \(name) WITH (FORCE)", on: server) }
        var database = server
        database.database = name
        return database.description
    }

    /// An address on this machine where nothing listens: a port the system just handed out
    /// and took back.
    static func closedPortURL() throws -> String {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw XCTSkip("cannot find a free port") }
        return "postgresql://nobody@127.0.0.1:\(UInt16(bigEndian: address.sin_port))/nowhere"
    }

    /// Runs `sql` on the database `configuration` names, on a connection of its own (as
    /// `psql` would), waiting for it.
    static func run(_ sql: String, on configuration: ServerConfiguration) throws {
        try waiting {
            let connection = try await PostgresConnection.connect(configuration: try configuration.connection, id: 1, logger: logger)
            do {
                try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            } catch {
                try? await connection.close()
                throw error
            }
            try await connection.close()
        }
    }
}

/// Runs `body` off the calling thread and waits for it: for a test on the main thread,
/// whose main loop must not run meanwhile.
func waiting<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    let outcome = Outcome<T>()
    Task.detached {
        do { outcome.result = .success(try await body()) } catch { outcome.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try outcome.result!.get()
}

private final class Outcome<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
