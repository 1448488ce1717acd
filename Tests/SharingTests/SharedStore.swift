import Foundation
import GRDB
import ObjectStore
import PostgresNIO
import Synchronization
@testable import Sharing
import TestSupport
import XCTest

/// A store file of the board model sharing through a test database, as one desktop.
final class SharedStore {
    let url: URL
    let store: PersistentStore
    let session: SharingSession

    convenience init(_ url: URL, database: ServerTestDatabase, model: Model = BoardModel.model, policy: MergePolicy = .error,
                     seed: ((ObjectContext) throws -> Void)? = nil) throws {
        try self.init(url, configuration: database.configuration, model: model, policy: policy, seed: seed)
    }

    /// A store sharing through `configuration`; its session's log lines go to `logLines` when given.
    init(_ url: URL, configuration: ServerConfiguration, model: Model = BoardModel.model, policy: MergePolicy = .error,
         seed: ((ObjectContext) throws -> Void)? = nil, logLines: LogLines? = nil) throws {
        self.url = url
        store = try PersistentStore(url: url, model: model)
        if let seed { try store.insertInitialContents(seed) }
        var sharing = PostgresSharing(configuration, mergePolicy: policy)
        sharing.reconnectDelay = .milliseconds(100)
        if let logLines { sharing.logger = logLines.logger() }
        session = try store.share(through: sharing)
        let updates = session.statusUpdates()
        let seen = seen
        Task { for await status in updates { seen.states.withLock { $0.append(status.state) } } }
    }

    /// Every state the session went through, from its start.
    var seenStates: [SharingStatus.State] { seen.states.withLock { $0 } }
    private let seen = SeenStates()

    private final class SeenStates: Sendable {
        let states = Mutex<[SharingStatus.State]>([])
    }

    func stop() async { await session.stop() }

    /// A new context on the store.
    func context() -> ObjectContext { ObjectContext(store: store, queue: DispatchQueue(label: "SharedStore")) }

    /// Saves a new board named `name`.
    func insertBoard(_ name: String) throws {
        let context = context()
        try context.performAndWait {
            let board = try context.insert(entityName: "Board")
            try board.setValue(name, forKey: "name")
            try context.save()
        }
    }

    /// Every object of the store in the server's terms, by global ID.
    func contents() throws -> [UUID: [String: Value]] {
        try store.database.write { db in
            let rows = LocalRows(model: store.model)
            var contents: [UUID: [String: Value]] = [:]
            for entity in store.model.entities {
                let keys = try rows.allKeys(of: entity, in: db)
                for (key, values) in try rows.values(of: entity, keys: keys, in: db) {
                    var values = values
                    values["entity"] = .string(entity.name)
                    contents[try GlobalIDs.assignedGlobalID(entity: entity.name, rowKey: key, in: db)] = values
                }
            }
            return contents
        }
    }

    /// The names of the boards, sorted.
    func boardNames() throws -> [String] {
        try store.database.read { db in try String.fetchAll(db, sql: "SELECT name FROM Board ORDER BY name") }
    }
}

extension ServerTestDatabase {
    /// Every object on the server, in the same terms as ``SharedStore/contents()``.
    func contents() async throws -> [UUID: [String: Value]] {
        try await withConnection { connection in
            var contents: [UUID: [String: Value]] = [:]
            let writer = ServerWriter(model: BoardModel.model, policy: .error, logger: Self.logger)
            for entity in BoardModel.model.entities {
                let rows = try await connection.query(PostgresQuery(unsafeSQL: "SELECT \"Z_ID\" FROM \"\(entity.name)\""), logger: Self.logger)
                var ids: [UUID] = []
                for try await id in rows.decode(UUID.self) { ids.append(id) }
                for row in try await writer.rows(of: entity, ids: ids, on: connection) {
                    var values = row.values ?? [:]
                    values["entity"] = .string(entity.name)
                    contents[row.id] = values
                }
            }
            return contents
        }
    }
}

/// Waits until `condition` holds, up to `timeout`, checking every 20 ms.
func eventually(_ what: String, timeout: Duration = .seconds(10), _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        if ContinuousClock.now > deadline { throw EventuallyTimedOut(what: what) }
        try await Task.sleep(for: .milliseconds(20))
    }
}

struct EventuallyTimedOut: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}
