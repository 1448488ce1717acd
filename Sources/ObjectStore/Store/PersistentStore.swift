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

    /// What the file holds: the model it was made for and the migrations applied to it.
    struct MigrationPlan {
        var storedModel: Model?
        var appliedMigrations: [String]

        func needsMigration(to model: Model) -> Bool {
            !appliedMigrations.contains("model \(model.fingerprint)") || !appliedMigrations.contains(historyMigration)
                || !appliedMigrations.contains(historyOnlyTriggersMigration) || !appliedMigrations.contains(numberedHistoryMigration)
        }
    }

    /// Reads an existing file without writing to it, and refuses it when it is not a
    /// database, is damaged, or was made for a model that cannot be migrated in place.
    /// Returns what the file holds (a new store for a missing or empty file); nil when only
    /// the writable open can tell.
    private static func checkExistingFile(at path: String, model: Model, busyTimeout: TimeInterval) throws -> MigrationPlan? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let size = attributes[.size] as? Int, size > 0 else { return MigrationPlan(storedModel: nil, appliedMigrations: []) }
        // The file is read through SQLite only: closing a descriptor of our own on it would
        // drop every POSIX lock this process holds on it, those of a store already open on it
        // included, and another process could then delete the WAL under that store.
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(busyTimeout)
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            return try queue.read { db in
                // Not `PRAGMA quick_check`: it reads the whole file (150 ms of a million-row
                // store's open). The schema, and the first row of every table, are read
                // instead: a file damaged there is refused before anything is written; damage
                // deeper in is reported by the read or write that meets it.
                for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") {
                    _ = try Row.fetchOne(db, sql: "SELECT * FROM \(name.quotedDatabaseIdentifier) LIMIT 1")
                }
                return try readPlan(db, path: path, model: model)
            }
        } catch let error as StoreError {
            throw error
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB {
            throw StoreError(.notADatabase, path: path, "not an SQLite database; point the store at a new or an existing store file (this file was left as it is)")
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT {
            throw StoreError(.corrupt, path: path, "the database is damaged (\(error.message ?? "\(error)")); restore it from a backup (this file was left as it is)")
        } catch let error as DatabaseError where error.resultCode == .SQLITE_READONLY {
            // A WAL left by a process killed mid-write: only a writable connection may
            // recover it. The file is a WAL database, so opening it writable changes no
            // foreign file's header; the opening reads what it holds.
            return nil
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            throw StoreError(.busy, path: path, "cannot read the store: another connection kept it locked for more than \(seconds(busyTimeout)); try again when it has finished")
        } catch {
            throw StoreError(.io, path: path, "cannot read the store: \(error)")
        }
    }

    /// What the file holds, refusing a database that is not a store or whose model cannot
    /// be migrated to `model`. An empty file, or one that holds nothing but an empty
    /// migrations table (what a process killed while creating the store left before the
    /// creation was one transaction), is a new store.
    private static func readPlan(_ db: Database, path: String, model: Model) throws -> MigrationPlan {
        let applied = try db.tableExists(migrationsTable)
            ? try String.fetchAll(db, sql: "SELECT identifier FROM \(migrationsTable)") : []
        guard try db.tableExists(metadataTable) else {
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            if tables.allSatisfy({ $0 == migrationsTable }) && applied.isEmpty {
                return MigrationPlan(storedModel: nil, appliedMigrations: [])
            }
            throw StoreError(.foreignDatabase, path: path, "an SQLite database that was not made by ObjectStore (tables: \(tables.prefix(5).joined(separator: ", "))); use a new file for the store (this file was left as it is)")
        }
        let json = try String.fetchOne(db, sql: "SELECT value FROM \(metadataTable) WHERE key = 'model'") ?? ""
        let stored = try Model(json: Data(json.utf8), source: "the model recorded in the store")
        _ = try SchemaMigration(from: stored, to: model, path: path)  // refuse before writing anything
        return MigrationPlan(storedModel: stored, appliedMigrations: applied)
    }

    static let metadataTable = "Z_METADATA"
    /// GRDB's table of applied migrations, which files made by earlier versions have.
    static let migrationsTable = "grdb_migrations"
    static let historyMigration = "change history"
    /// Triggers that write the history only; the generation is read from it.
    static let historyOnlyTriggersMigration = "history-only triggers"
    /// A history of numbers without constraints, cheaper to append to (see `Schema.historyTable`).
    static let numberedHistoryMigration = "numbered history"

    /// Brings the file from what `plan` says it holds to `model`, inside the caller's
    /// transaction, and records the steps in the migrations table as GRDB's
    /// `DatabaseMigrator` does. Not `DatabaseMigrator` itself: it commits each migration
    /// on its own and creates its table outside any transaction, which is how a killed
    /// first open used to leave a file that could never be opened.
    private static func migrate(_ db: Database, from plan: MigrationPlan, to model: Model) throws {
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS \(migrationsTable) (identifier TEXT NOT NULL PRIMARY KEY)")
        // Before the entities of a new model: their history triggers number them there.
        try db.execute(sql: Schema.createEntityTableSQL)
        func record(_ identifier: String) throws {
            try db.execute(sql: "INSERT INTO \(migrationsTable) (identifier) VALUES (?)", arguments: [identifier])
        }
        let identifier = "model \(model.fingerprint)"
        if !plan.appliedMigrations.contains(identifier) {
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
            try record(identifier)
        }
        // The history's formats, oldest first; the triggers of the newest are installed last.
        if !plan.appliedMigrations.contains(historyMigration) {
            // Files made before the history: add its table and record changes from now on.
            try db.execute(sql: Schema.createHistoryTableSQL)
            try record(historyMigration)
        }
        if !plan.appliedMigrations.contains(historyOnlyTriggersMigration) {
            // The generation counted so far stays in the metadata, as the base the history's
            // tokens add to; a new file's is 0.
            try db.execute(sql: "UPDATE \(metadataTable) SET value = CAST(value AS INTEGER) - IFNULL((SELECT seq FROM sqlite_sequence WHERE name = '\(Schema.historyTable)'), 0) WHERE key = 'generation'")
            try record(historyOnlyTriggersMigration)
        }
        if !plan.appliedMigrations.contains(numberedHistoryMigration) {
            if plan.storedModel != nil {
                // A new file has its triggers already, and its history was made numbered.
                if plan.appliedMigrations.contains(historyMigration) { try numberHistory(db, model: model) }
                for entity in model.entities { try Schema.installTriggers(for: entity, in: db) }
            }
            try record(numberedHistoryMigration)
        }
    }

    /// Rewrites a history of names (the format before ``numberedHistoryMigration``) in
    /// numbers, in a table made as a new store's is. Every token stays, and so does the
    /// sequence the next one follows (the generation adds to it).
    private static func numberHistory(_ db: Database, model: Model) throws {
        let sequence = try currentToken(db)
        // The triggers name the table, which cannot be renamed under them; they are made again after.
        for entity in model.entities {
            for statement in Schema.dropTriggerSQL(for: entity) { try db.execute(sql: statement) }
            try Schema.number(of: entity, in: db)
        }
        let old = Schema.historyTable + "_names"
        try db.execute(sql: "ALTER TABLE \(Schema.historyTable) RENAME TO \(old)")
        try db.execute(sql: Schema.createHistoryTableSQL)
        try db.execute(sql: """
            INSERT INTO \(Schema.historyTable) (token, entity, rowKey, kind)
            SELECT token, (SELECT Z_ENT FROM \(Schema.entityTable) WHERE Z_NAME = entity), rowKey,
                CASE kind WHEN 'insert' THEN \(Schema.HistoryKind.insert.rawValue) WHEN 'delete' THEN \(Schema.HistoryKind.delete.rawValue)
                ELSE \(Schema.HistoryKind.update.rawValue) END
            FROM \(old) ORDER BY token
            """)
        try db.execute(sql: "DROP TABLE \(old)")
        // Tokens pruned from the top of the history were handed out all the same.
        try db.execute(sql: "DELETE FROM sqlite_sequence WHERE name = ?", arguments: [Schema.historyTable])
        if sequence > 0 {
            try db.execute(sql: "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", arguments: [Schema.historyTable, sequence])
        }
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
            try Int64.fetchOne(db, sql: Schema.generationSQL) ?? 0
        }
    }

    /// Runs `body`, turning SQLite's "database is locked" after ``busyTimeout`` into a
    /// ``StoreError`` of kind ``StoreError/Kind-swift.struct/busy`` that says what happened to
    /// `keeping` (what the failed operation leaves as it was).
    func failingClearlyWhenBusy<T>(keeping: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            throw StoreError(.busy, path: url?.path ?? ":memory:",
                             "another connection (another process or the sqlite3 shell) kept the store locked for more than \(Self.seconds(busyTimeout)); \(keeping)")
        }
    }
}
