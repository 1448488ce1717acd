import Foundation
import Logging
import ObjectStore
import PostgresNIO
@testable import Sharing
import Synchronization
import TestSupport
import XCTest

/// TLS and passwords against the real test server (scripts/with-postgres): TLS on, with a
/// certificate for `localhost` from a certificate authority made for the run, and
/// `password_users` members logging in with scram-sha-256.
final class ConnectionSecurityTests: XCTestCase {
    /// verify-full with the authority that signed the server's certificate, to the name on
    /// it: the store shares, and the status says the server is verified. The default
    /// (`prefer`) encrypts without checking, and says so.
    func testVerifyFullWithTheRightAuthorityConnectsAndTheStatusSaysSo() async throws {
        try await ServerTestDatabase.with { database in
            let ca = try Self.authority("FETCHED_RESULTS_POSTGRES_CA")
            let verified = try database.configuration(host: "localhost", query: "sslmode=verify-full&sslrootcert=\(ca)")
            let a = try SharedStore(temporaryFolder(self).appendingPathComponent("a.sqlite"), configuration: verified)
            try a.insertBoard("Over TLS")
            try await a.session.synchronize()
            XCTAssertEqual(a.session.status.security, .verifiedHost)
            XCTAssertTrue("\(a.session.status)".contains("encrypted, the server verified"), "\(a.session.status)")
            await a.stop()

            let b = try SharedStore(temporaryFolder(self).appendingPathComponent("b.sqlite"), database: database)
            try await b.session.synchronize()
            XCTAssertEqual(try b.boardNames(), ["Over TLS"])
            XCTAssertEqual(b.session.status.security, .encrypted, "prefer encrypts without checking the certificate")
            await b.stop()
        }
    }

    /// verify-full to an address the certificate is not made out to (127.0.0.1; it names
    /// localhost), and verify-ca with another authority: no connection, an error that says
    /// which, nothing sent.
    func testAServerCertificateForAnotherHostOrFromAnotherAuthorityIsRefused() async throws {
        try await ServerTestDatabase.with { database in
            let ca = try Self.authority("FETCHED_RESULTS_POSTGRES_CA"), other = try Self.authority("FETCHED_RESULTS_POSTGRES_OTHER_CA")
            let cases = [
                ("127.0.0.1", "sslmode=verify-full&sslrootcert=\(ca)", "made out to another host than 127.0.0.1"),
                ("localhost", "sslmode=verify-ca&sslrootcert=\(other)", "not signed by a certificate authority of \(other)"),
                // require with authorities given checks the certificate, as libpq does.
                ("localhost", "sslmode=require&sslrootcert=\(other)", "not signed by a certificate authority of \(other)"),
                ("localhost", "sslmode=verify-full&sslrootcert=/nonexistent/root.crt", "/nonexistent/root.crt cannot be read"),
            ]
            for (index, (host, query, expected)) in cases.enumerated() {
                let store = try SharedStore(temporaryFolder(self).appendingPathComponent("\(index).sqlite"),
                                            configuration: try database.configuration(host: host, query: query))
                try store.insertBoard("Never sent")
                do {
                    try await store.session.synchronize()
                    XCTFail("\(query) to \(host) connected")
                } catch let error as SharingError {
                    XCTAssertEqual(error.kind, .insecureConnection, "\(error)")
                    XCTAssertTrue("\(error)".contains(expected), "\(query): \(error)")
                }
                guard case .offline(let reason) = store.session.status.state else { return XCTFail("\(store.session.status)") }
                XCTAssertTrue(reason.contains(expected), reason)
                await store.stop()
            }
            let tables = try await database.withConnection { connection -> Int in
                let rows = try await connection.query("SELECT count(*)::int8 FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
                                                      logger: ServerTestDatabase.logger)
                var count = -1
                for try await value in rows.decode(Int.self) { count = value }
                return count
            }
            XCTAssertEqual(tables, 0, "nothing reached the server, not even the sharing schema")
        }
    }

    /// A server with TLS off: `require` refuses it, saying so; `prefer` connects in plain,
    /// and the status says the connection is not encrypted.
    func testRequireRefusesAServerWithoutTLSAndPreferSaysItIsPlain() async throws {
        try await ServerTestDatabase.with { database in
            try await Self.setServerTLS(on: false, database)
            do {
                let required = try SharedStore(temporaryFolder(self).appendingPathComponent("a.sqlite"),
                                               configuration: try database.configuration(query: "sslmode=require"))
                do {
                    try await required.session.synchronize()
                    XCTFail("require connected without TLS")
                } catch let error as SharingError {
                    XCTAssertEqual(error.kind, .insecureConnection)
                    XCTAssertTrue("\(error)".contains("does not offer TLS"), "\(error)")
                }
                await required.stop()
                let preferred = try SharedStore(temporaryFolder(self).appendingPathComponent("b.sqlite"), database: database)
                try await preferred.session.synchronize()
                XCTAssertEqual(preferred.session.status.security, .plain)
                XCTAssertTrue("\(preferred.session.status)".contains("not encrypted"), "\(preferred.session.status)")
                await preferred.stop()
            } catch {
                try await Self.setServerTLS(on: true, database)
                throw error
            }
            try await Self.setServerTLS(on: true, database)
        }
    }

    /// A role that logs in with a password (scram-sha-256): the right one shares; a wrong one
    /// is an authentication error that names the user and what to check, never the
    /// password, in the error, the status or any log line; and the desktop does not ask the
    /// server again every second.
    func testAWrongPasswordIsAClearErrorNotARetryLoopAndNeverShown() async throws {
        try await ServerTestDatabase.with { database in
            let role = "member_\(UInt32.random(in: 0..<UInt32.max))"
            try await database.withConnection { connection in
                try await ServerTestDatabase.execute("CREATE ROLE \(role) LOGIN PASSWORD 'right-horse' IN ROLE password_users", on: connection)
                try await ServerTestDatabase.execute("ALTER DATABASE \(database.configuration.database) OWNER TO \(role)", on: connection)
            }
            defer { database.dropRole(role) }
            var member = try database.configuration(user: role, password: "right-horse")
            let right = try SharedStore(temporaryFolder(self).appendingPathComponent("a.sqlite"), configuration: member)
            try right.insertBoard("By password")
            try await right.session.synchronize()
            await right.stop()

            member = try database.configuration(user: role, password: "wrong-battery-staple")
            let lines = LogLines()
            let wrong = try SharedStore(temporaryFolder(self).appendingPathComponent("b.sqlite"), configuration: member, logLines: lines)
            do {
                try await wrong.session.synchronize()
                XCTFail("a wrong password connected")
            } catch let error as SharingError {
                XCTAssertEqual(error.kind, .authenticationFailed)
                XCTAssertTrue("\(error)".contains("password authentication failed for user \"\(role)\""), "\(error)")
                XCTAssertTrue("\(error)".contains("check \(role)'s password"), "\(error)")
            }
            try await Task.sleep(for: .seconds(4))
            let said = ["\(wrong.session.status)"] + lines.all
            XCTAssertFalse(said.contains { $0.contains("wrong-battery-staple") }, "the password shows: \(said)")
            // Refused, the listener waits longer after each try (0.1 s, 0.2 s, ... up to 5
            // minutes); trying every 0.1 s would have made about 40 tries.
            let tries = lines.all.filter { $0.contains("listener") }.count
            XCTAssertGreaterThan(tries, 0, "the listener's tries are logged: \(lines.all)")
            XCTAssertLessThan(tries, 10, "the listener tried \(tries) times in 4 s: \(lines.all)")
            await wrong.stop()
            let contents = try await database.contents()
            XCTAssertEqual(contents.count, 1, "only the right password's board is on the server")
        }
    }

    /// The path of the certificate `variable` names (scripts/with-postgres sets it).
    private static func authority(_ variable: String) throws -> String {
        guard let path = ProcessInfo.processInfo.environment[variable] else {
            let message = "\(variable) is not set: run the tests with scripts/with-postgres"
            if ProcessInfo.processInfo.environment["CI"] != nil { throw ServerMissing(message: message) }
            throw XCTSkip(message)
        }
        return path
    }

    /// Turns the server's TLS on or off (a reload takes it; connections made after see it).
    private static func setServerTLS(on: Bool, _ database: ServerTestDatabase) async throws {
        try await database.withConnection { connection in
            try await ServerTestDatabase.execute(on ? "ALTER SYSTEM RESET ssl" : "ALTER SYSTEM SET ssl = off", on: connection)
            try await ServerTestDatabase.execute("SELECT pg_reload_conf()", on: connection)
        }
        try await Task.sleep(for: .milliseconds(500))
    }
}

extension ServerTestDatabase {
    /// This database's address with another host, user or password, and a URL query.
    func configuration(host: String? = nil, user: String? = nil, password: String? = nil, query: String? = nil) throws -> ServerConfiguration {
        let credentials = (user ?? configuration.username) + (password.map { ":\($0)" } ?? "")
        let url = "postgresql://\(credentials)@\(host ?? configuration.host):\(configuration.port)/\(configuration.database)" + (query.map { "?\($0)" } ?? "")
        return try ServerConfiguration(url: url, environment: [:])
    }
}

/// The lines a logger was given, kept to be read by a test.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    func append(_ line: String) { lines.withLock { $0.append(line) } }

    /// A logger at debug level whose lines (with their metadata) end up here.
    func logger() -> Logger {
        var logger = Logger(label: "LogLines") { _ in Handler(lines: self) }
        logger.logLevel = .debug
        return logger
    }

    private struct Handler: LogHandler {
        let lines: LogLines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String, function: String, line: UInt) {
            lines.append("\(level) \(message) \(metadata ?? [:]) \(self.metadata)")
        }
    }
}
