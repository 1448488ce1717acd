import Foundation
import PostgresNIO
import Sharing
import XCTest

final class ServerListenerTests: XCTestCase {
    private let logger = ServerTestDatabase.logger

    func testItWakesOnCommitsAndReconnectsAfterTheConnectionDrops() async throws {
        try await ServerTestDatabase.with { database in
            try await database.withConnection { connection in
                try await ServerSchema(model: BoardModel.model).create(on: connection, logger: self.logger)
                let listener = ServerListener(configuration: database.configuration, reconnectDelay: .milliseconds(100), safetyInterval: .seconds(600), logger: self.logger)
                let events = EventRecorder(listener.events())
                defer { events.stop() }
                try await events.wait(for: .connected)

                try await ServerTestDatabase.execute(#"INSERT INTO "Board" ("Z_ID", name) VALUES (gen_random_uuid(), 'a')"#, on: connection)
                try await events.wait(for: .woken)

                let terminated = try await connection.query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database() AND query ILIKE 'LISTEN%'",
                    logger: self.logger)
                var count = 0
                for try await _ in terminated { count += 1 }
                XCTAssertEqual(count, 1, "the listening connection")
                try await events.wait(for: { if case .disconnected = $0 { true } else { false } }, "disconnected")
                try await events.wait(for: .connected)

                try await ServerTestDatabase.execute(#"INSERT INTO "Board" ("Z_ID", name) VALUES (gen_random_uuid(), 'b')"#, on: connection)
                try await events.wait(for: .woken)
            }
        }
    }

    func testTheSafetyNetTicksAndAnUnreachableServerIsRetried() async throws {
        try await ServerTestDatabase.with { database in
            var unreachable = database.configuration
            unreachable.port = 1
            let listener = ServerListener(configuration: unreachable, reconnectDelay: .milliseconds(50), safetyInterval: .milliseconds(100), logger: self.logger)
            let events = EventRecorder(listener.events())
            defer { events.stop() }
            try await events.wait(for: .timer)
            try await events.wait(for: { if case .disconnected = $0 { true } else { false } }, "disconnected", count: 2)
            XCTAssertFalse(events.all.contains(.connected))
        }
    }
}

/// Collects a listener's events from a task of its own, so that a test can wait for one
/// with a time limit.
final class EventRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [ServerListener.Event] = []
    private var task: Task<Void, Never>?
    private var consumed = 0

    init(_ stream: AsyncStream<ServerListener.Event>) {
        task = Task { [weak self] in
            for await event in stream {
                guard let self else { return }
                self.lock.withLock { self.events.append(event) }
            }
        }
    }

    var all: [ServerListener.Event] { lock.withLock { events } }

    func stop() { task?.cancel() }

    func wait(for event: ServerListener.Event, file: StaticString = #filePath, line: UInt = #line) async throws {
        try await wait(for: { $0 == event }, "\(event)", file: file, line: line)
    }

    /// Waits up to 10 s for `count` events after those already waited for that match.
    func wait(for matches: (ServerListener.Event) -> Bool, _ name: String, count: Int = 1, file: StaticString = #filePath, line: UInt = #line) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let found = lock.withLock { () -> Bool in
                let matching = events.indices.filter { $0 >= consumed && matches(events[$0]) }
                guard matching.count >= count else { return false }
                consumed = matching[count - 1] + 1
                return true
            }
            if found { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTFail("no \(name) within 10 s; events: \(all)", file: file, line: line)
        throw CancellationError()
    }
}
