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
/// - ``init(url:model:busyTimeout:sqlLog:)``
/// - ``inMemory(model:)``
/// - ``model``
/// - ``url``
/// - ``currentHistoryToken()``
/// - ``changes(since:)``
/// - ``historyLimit``
/// - ``historyRetention``
/// - ``pruneHistory(keepingLast:)``
/// - ``observeChanges(on:_:)``
/// - ``committedChanges()``
public final class PersistentStore: Sendable {
    /// The model the store was opened with.
    public let model: Model
    /// The store file, or nil for an in-memory store.
    public let url: URL?
    /// The GRDB connection(s): a `DatabasePool` for a file, a `DatabaseQueue` in memory or
    /// opened read-only. A file another program replaced (deleted and made again) is opened
    /// again while something follows the store (``StoreChangeFeed``): read it each time.
    package var database: any DatabaseWriter { feed.database }
    /// Whether the store was opened read-only (``init(readingFrom:model:busyTimeout:)``).
    public let isReadOnly: Bool

    /// The saves of this store's contexts, in token order: the other contexts take their
    /// changes from here, with the keys that changed (``LocalSave``).
    let localSaves = Mutex(LocalSaves())
    /// ``historyLimit``'s value.
    let historyLimitValue = Mutex<Int64?>(PersistentStore.defaultHistoryLimit)
    /// ``historyRetention``'s value.
    let historyRetentionValue = Mutex<TimeInterval?>(PersistentStore.defaultHistoryRetention)
    /// The tokens after which this process's contexts that hold the store's changes back
    /// still need the history, by context (``keepHistoryInProcess(after:for:)``).
    let heldHistoryTokens = Mutex<[ObjectIdentifier: Int64]>([:])
    /// Tells of every commit to the file, whoever made it: see ``observeChanges(on:_:)``.
    package let feed: StoreChangeFeed

    /// Opens (or creates) the store file at `url` for `model`.
    ///
    /// Creating the schema, or migrating an older one, is one transaction, taken under the
    /// file's write lock: a process killed while opening leaves the file as it was (a file
    /// left half-made by an earlier version is recognised and finished), and processes
    /// opening the same new file at once create it once.
    ///
    /// - Parameters:
    ///   - url: The store file; created with the schema of `model` when missing or empty.
    ///   - model: The model of the objects; a file made for an earlier model is migrated when
    ///     the new one only adds to it (see `Docs/ModelFormat.md`), else refused.
    ///   - busyTimeout: How long a write waits for another connection's write to end (another
    ///     process, the `sqlite3` shell) before it fails with ``StoreError/Kind-swift.struct/busy``.
    ///     Reads never wait for writes.
    ///   - sqlLog: Called with every SQL statement the store runs, with its
    ///     arguments (like Core Data's `-com.apple.CoreData.SQLDebug`), on the connection's queue.
    public init(url: URL, model: Model, busyTimeout: TimeInterval = PersistentStore.defaultBusyTimeout,
                sqlLog: (@Sendable (String) -> Void)? = nil) throws {
        self.url = url
        self.model = model
        self.busyTimeout = busyTimeout
        isReadOnly = false
        let path = url.path
        feed = StoreChangeFeed(database: try Self.openFile(at: path, model: model, busyTimeout: busyTimeout, sqlLog: sqlLog), url: url) {
            // A file another program made in its place: taken only when it is already a
            // store of this model, so that a file still being written (a copy of a backup)
            // is never given a schema or migrated under its writer.
            try Self.openFile(at: path, model: model, busyTimeout: busyTimeout, sqlLog: sqlLog, existingStoreOnly: true)
        }
    }

    /// Opens the file at `path` for `model`, creating or migrating its schema; with
    /// `existingStoreOnly`, refuses a file that is empty or needs either.
    private static func openFile(at path: String, model: Model, busyTimeout: TimeInterval,
                                 sqlLog: (@Sendable (String) -> Void)?, existingStoreOnly: Bool = false) throws -> DatabasePool {
        let checked = try Self.checkExistingFile(at: path, model: model, busyTimeout: busyTimeout)
        if existingStoreOnly, checked.map({ $0.storedModel == nil || $0.needsMigration(to: model) }) ?? true {
            throw StoreError(.io, path: path, "the file now at the store's path is not yet a store of this model")
        }
        do {
            let pool = try Self.openPool(path: path, configuration: Self.configuration(busyTimeout: busyTimeout, sqlLog: sqlLog),
                                         busyTimeout: busyTimeout)
            let current = try checked ?? pool.read { db in try Self.readPlan(db, path: path, model: model) }
            if current.needsMigration(to: model) {
                try pool.writeWithoutTransaction { db in
                    try db.inTransaction(.immediate) {
                        // Read again under the write lock: another process may have created
                        // or migrated the file since.
                        let plan = try Self.readPlan(db, path: path, model: model)
                        try Self.migrate(db, from: plan, to: model)
                        return .commit
                    }
                }
            }
            return pool
        } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            throw StoreError(.busy, path: path, "cannot open the store: another connection kept it locked for more than \(Self.seconds(busyTimeout)); try again when it has finished writing")
        } catch {
            throw StoreError(.io, path: path, "cannot open the store: \(error); check that the folder exists and is writable")
        }
    }

    /// Opens an existing store for reading only: a file this process may not write (a
    /// read-only file, another user's store), or one it must not change. Nothing is written
    /// to the file: no migration (a store made for another model is refused with
    /// `StoreError.Kind.readOnly`), and a save throws that error, keeping the context's changes.
    public init(readingFrom url: URL, model: Model, busyTimeout: TimeInterval = PersistentStore.defaultBusyTimeout) throws {
        let path = url.path
        self.url = url
        self.model = model
        self.busyTimeout = busyTimeout
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.io, path: path, "there is no store file to read; give the path of an existing store")
        }
        var configuration = Self.configuration(busyTimeout: busyTimeout)
        configuration.readonly = true
        // A WAL database is read through its `-shm` file, which SQLite must be able to create:
        // in a folder this process cannot write, the file is read as unchanging (SQLite's
        // `immutable`; nobody can be writing a file that this user's folder keeps read-only
        // without the owner's writes going unseen until the next open).
        let folder = url.deletingLastPathComponent().path
        let openPath = FileManager.default.isWritableFile(atPath: folder) || FileManager.default.fileExists(atPath: path + "-shm")
            ? path : "file:" + (path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path) + "?immutable=1"
        do {
            let queue = try DatabaseQueue(path: openPath, configuration: configuration)
            let plan = try queue.read { db in try Self.readPlan(db, path: path, model: model) }
            if plan.needsMigration(to: model) {
                throw StoreError(.readOnly, path: path, "the store was made by another version or for another model, and a read-only open cannot migrate it; open it once with write access")
            }
            feed = StoreChangeFeed(database: queue, url: url)
        } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB {
            throw StoreError(.notADatabase, path: path, "not an SQLite database; point the store at an existing store file (this file was left as it is)")
        } catch {
            throw StoreError(.io, path: path, "cannot read the store: \(error)")
        }
        isReadOnly = true
    }

    /// Opens the pool, trying again while another process holds the file in a way SQLite
    /// does not wait for: turning a new file to WAL mode needs it alone, and several
    /// processes opening a new store at once get SQLITE_BUSY at once, not after the
    /// busy timeout.
    private static func openPool(path: String, configuration: Configuration, busyTimeout: TimeInterval) throws -> DatabasePool {
        let deadline = Date().addingTimeInterval(busyTimeout)
        while true {
            do {
                return try DatabasePool(path: path, configuration: configuration)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
    }

    private init(model: Model, queue: DatabaseQueue) throws {
        self.model = model
        self.url = nil
        feed = StoreChangeFeed(database: queue, url: nil)
        self.busyTimeout = 0
        isReadOnly = false
        try queue.inTransaction(.immediate) { db in
            try Self.migrate(db, from: MigrationPlan(storedModel: nil, appliedMigrations: []), to: model)
            return .commit
        }
    }

    /// A store in memory, for scratch work and previews: gone when the store is released.
    public static func inMemory(model: Model) throws -> PersistentStore {
        try PersistentStore(model: model, queue: DatabaseQueue(configuration: configuration(busyTimeout: 0)))
    }

    /// How long a write waits for another connection's write by default: 5 seconds, longer
    /// than another process's save or import chunk takes, short enough that a person
    /// waiting on a refused save hears about it.
    public static let defaultBusyTimeout: TimeInterval = 5

    /// How long a write of this store waits for another connection's write to end.
    public let busyTimeout: TimeInterval

    private static func configuration(busyTimeout: TimeInterval, sqlLog: (@Sendable (String) -> Void)? = nil) -> Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
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

    static func seconds(_ interval: TimeInterval) -> String {
        interval == interval.rounded() ? "\(Int(interval)) s" : "\(interval) s"
    }

    // MARK: Opening an existing file

}

extension PersistentStore {
    /// The distinct texts the string attribute `key` of `entity` holds, sorted, without nil:
    /// the values a field can offer to choose from (the viewer's zones). Throws for an
    /// entity or attribute the model does not have.
    package func distinctTexts(of key: String, entity entityName: String) throws -> [String] {
        let entity = try model.existingEntity(named: entityName)
        guard entity.attribute(named: key)?.type == .string else { throw ModelError("\(entityName).\(key)", "is no string attribute") }
        return try database.read { db in
            try String.fetchAll(db, sql: "SELECT DISTINCT \(key.quotedDatabaseIdentifier) FROM \(entityName.quotedDatabaseIdentifier) WHERE \(key.quotedDatabaseIdentifier) IS NOT NULL ORDER BY 1")
        }
    }
}
