import Foundation
import GRDB
import Synchronization

/// An SQLite file (or an in-memory database) holding the objects of one ``Model``.
///
/// Opening a store creates the schema for a new file, migrates a file made for an earlier
/// version of the model when the new model only adds entities, attributes (optional or with
/// a default), to-one relationships or indexes, and refuses anything else with a
/// ``StoreError`` that leaves the file untouched. Files use WAL mode through GRDB's
/// `DatabasePool`, so readers never wait for a writer.
///
/// Contexts made on the same store see each other's saves: see
/// ``ObjectContext/automaticallyMergesChangesFromStore``. Every write of any process is
/// recorded in the store's change history, which ``ObjectContext/followStore(interval:)``
/// follows.
///
/// ## Topics
/// - ``init(url:model:)``
/// - ``inMemory(model:)``
/// - ``model``
/// - ``url``
/// - ``currentHistoryToken()``
/// - ``changes(since:)``
/// - ``historyLimit``
/// - ``pruneHistory(keepingLast:)``
public final class PersistentStore: Sendable {
    /// The model the store was opened with.
    public let model: Model
    /// The store file, or nil for an in-memory store.
    public let url: URL?
    /// The GRDB connection(s): a `DatabasePool` for a file, a `DatabaseQueue` in memory.
    public let database: any DatabaseWriter

    private let contexts = Mutex<[WeakContext]>([])
    /// The history tokens written by saves of this store's contexts: followers skip them,
    /// since those saves reach the other contexts by ``broadcast(_:from:)``.
    let localSaves = Mutex<[ClosedRange<Int64>]>([])
    /// ``historyLimit``'s value.
    let historyLimitValue = Mutex<Int64?>(PersistentStore.defaultHistoryLimit)

    /// Opens (or creates) the store file at `url` for `model`.
    ///
    /// - Parameter sqlLog: Called with every SQL statement the store runs, with its
    ///   arguments (like Core Data's `-com.apple.CoreData.SQLDebug`), on the connection's queue.
    public init(url: URL, model: Model, sqlLog: (@Sendable (String) -> Void)? = nil) throws {
        let path = url.path
        self.url = url
        self.model = model
        let plan = try Self.checkExistingFile(at: path, model: model)
        do {
            let pool = try DatabasePool(path: path, configuration: Self.configuration(sqlLog: sqlLog))
            try Self.migrator(for: model, plan: plan).migrate(pool)
            database = pool
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.io, path: path, "cannot open the store: \(error); check that the folder exists and is writable")
        }
    }

    private init(model: Model, queue: DatabaseQueue) throws {
        self.model = model
        self.url = nil
        self.database = queue
        try Self.migrator(for: model, plan: MigrationPlan(storedModel: nil, appliedMigrations: [])).migrate(queue)
    }

    /// A store in memory, for scratch work and previews: gone when the store is released.
    public static func inMemory(model: Model) throws -> PersistentStore {
        try PersistentStore(model: model, queue: DatabaseQueue(configuration: configuration()))
    }

    private static func configuration(sqlLog: (@Sendable (String) -> Void)? = nil) -> Configuration {
        var configuration = Configuration()
        // The log is the developer's own: show the values, not `?`.
        configuration.publicStatementArguments = sqlLog != nil
        configuration.prepareDatabase { db in
            try SQLFunctions.register(in: db)
            if let sqlLog {
                db.trace(options: .statement) { event in
                    if case .statement(let statement) = event { sqlLog(statement.expandedSQL) }
                }
            }
        }
        return configuration
    }

    // MARK: Opening an existing file

    /// What the file holds: the model it was made for and the migrations applied to it.
    struct MigrationPlan {
        var storedModel: Model?
        var appliedMigrations: [String]
    }

    /// Reads an existing file without writing to it, and refuses it when it is not a
    /// database, is damaged, or was made for a model that cannot be migrated in place.
    private static func checkExistingFile(at path: String, model: Model) throws -> MigrationPlan {
        let fresh = MigrationPlan(storedModel: nil, appliedMigrations: [])
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let size = attributes[.size] as? Int, size > 0 else { return fresh }
        // The file is read through SQLite only: closing a descriptor of our own on it would
        // drop every POSIX lock this process holds on it, those of a store already open on it
        // included, and another process could then delete the WAL under that store.
        var configuration = Configuration()
        configuration.readonly = true
        let plan: MigrationPlan
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            plan = try queue.read { db -> MigrationPlan in
                let check = try String.fetchAll(db, sql: "PRAGMA quick_check")
                guard check == ["ok"] else {
                    throw StoreError(.corrupt, path: path, "the database is damaged (\(check.prefix(3).joined(separator: "; "))); restore it from a backup (this file was left as it is)")
                }
                let applied = try db.tableExists("grdb_migrations")
                    ? try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") : []
                guard try db.tableExists(metadataTable) else {
                    let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
                    if tables.isEmpty { return fresh }
                    throw StoreError(.foreignDatabase, path: path, "an SQLite database that was not made by ObjectStore (tables: \(tables.prefix(5).joined(separator: ", "))); use a new file for the store (this file was left as it is)")
                }
                let json = try String.fetchOne(db, sql: "SELECT value FROM \(metadataTable) WHERE key = 'model'") ?? ""
                let stored = try Model(json: Data(json.utf8), source: "the model recorded in the store")
                return MigrationPlan(storedModel: stored, appliedMigrations: applied)
            }
        } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB {
            throw StoreError(.notADatabase, path: path, "not an SQLite database; point the store at a new or an existing store file (this file was left as it is)")
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT {
            throw StoreError(.corrupt, path: path, "the database is damaged (\(error.message ?? "\(error)")); restore it from a backup (this file was left as it is)")
        } catch {
            throw StoreError(.io, path: path, "cannot read the store: \(error)")
        }
        if let stored = plan.storedModel {
            _ = try SchemaMigration(from: stored, to: model, path: path)  // refuse before writing anything
        }
        return plan
    }

    static let metadataTable = "Z_METADATA"
    static let historyMigration = "change history"

    /// A GRDB migrator whose one new migration brings the file from what it holds to `model`.
    private static func migrator(for model: Model, plan: MigrationPlan) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for identifier in plan.appliedMigrations {
            // Already applied: registered so the migrator knows the file's history.
            migrator.registerMigration(identifier) { _ in }
        }
        let identifier = "model \(model.fingerprint)"
        if !plan.appliedMigrations.contains(identifier) {
            migrator.registerMigration(identifier) { db in
                if plan.storedModel == nil {
                    try db.execute(sql: "CREATE TABLE IF NOT EXISTS \(metadataTable) (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                    try db.execute(sql: Schema.createHistoryTableSQL)
                }
                let migration = try SchemaMigration(from: plan.storedModel, to: model, path: "")
                try migration.apply(db)
                try db.execute(
                    sql: "INSERT OR IGNORE INTO \(metadataTable) (key, value) VALUES ('generation', 0), ('identifier', ?)",
                    arguments: [UUID().uuidString])
                try db.execute(
                    sql: "INSERT OR REPLACE INTO \(metadataTable) (key, value) VALUES ('model', ?), ('fingerprint', ?)",
                    arguments: [String(decoding: model.jsonData(), as: UTF8.self), model.fingerprint])
            }
        }
        if !plan.appliedMigrations.contains(historyMigration) {
            // Files made before the history: add its table and record changes from now on.
            migrator.registerMigration(historyMigration) { db in
                try db.execute(sql: Schema.createHistoryTableSQL)
                for entity in model.entities {
                    for statement in Schema.replaceTriggerSQL(for: entity) { try db.execute(sql: statement) }
                }
            }
        }
        return migrator
    }

    /// A random identifier written when the store file is created: another file at the same
    /// path (deleted and made again) has another one.
    public func identifier() throws -> String {
        try database.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM \(Self.metadataTable) WHERE key = 'identifier'") ?? ""
        }
    }

    /// A number that grows with every committed change to the objects' rows, by any
    /// process or SQLite client: equal generations mean unchanged data.
    public func generation() throws -> Int64 {
        try database.read { db in
            try Int64.fetchOne(db, sql: "SELECT CAST(value AS INTEGER) FROM \(Self.metadataTable) WHERE key = 'generation'") ?? 0
        }
    }

    // MARK: Contexts

    func register(_ context: ObjectContext) {
        contexts.withLock { contexts in
            contexts.removeAll { $0.context == nil }
            contexts.append(WeakContext(context: context))
        }
    }

    /// Tells every other context on this store that `source` saved `changes`.
    func broadcast(_ changes: ObjectChanges, from source: ObjectContext) {
        let others = contexts.withLock { $0.compactMap(\.context).filter { $0 !== source } }
        for context in others { context.storeDidSave(changes) }
    }
}

private struct WeakContext: @unchecked Sendable {
    weak var context: ObjectContext?
}
