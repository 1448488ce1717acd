import Foundation
import GRDB
import Synchronization

extension PersistentStore {
    /// What the file holds: the model it was made for and the migrations applied to it.
    struct MigrationPlan {
        var storedModel: Model?
        var appliedMigrations: [String]

        func needsMigration(to model: Model) -> Bool {
            !appliedMigrations.contains("model \(model.fingerprint)") || !appliedMigrations.contains(historyMigration)
                || !appliedMigrations.contains(historyOnlyTriggersMigration) || !appliedMigrations.contains(numberedHistoryMigration)
                || !appliedMigrations.contains(changedColumnsHistoryMigration)
        }
    }

    /// Reads an existing file without writing to it, and refuses it when it is not a
    /// database, is damaged, or was made for a model that cannot be migrated in place.
    /// Returns what the file holds (a new store for a missing or empty file); nil when only
    /// the writable open can tell.
    static func checkExistingFile(at path: String, model: Model, busyTimeout: TimeInterval) throws -> MigrationPlan? {
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
    static func readPlan(_ db: Database, path: String, model: Model) throws -> MigrationPlan {
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
    /// Updates recorded with the columns they changed (`Schema.changedColumnsColumn`).
    static let changedColumnsHistoryMigration = "history of changed columns"

    /// Brings the file from what `plan` says it holds to `model`, inside the caller's
    /// transaction, and records the steps in the migrations table as GRDB's
    /// `DatabaseMigrator` does. Not `DatabaseMigrator` itself: it commits each migration
    /// on its own and creates its table outside any transaction, which is how a killed
    /// first open used to leave a file that could never be opened.
    static func migrate(_ db: Database, from plan: MigrationPlan, to model: Model) throws {
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
            if plan.storedModel != nil {
                // The update triggers name every column: those of a table given a column
                // are made again (a new file's were made with its tables).
                for entity in model.entities { try Schema.installTriggers(for: entity, in: db) }
            }
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
        if !plan.appliedMigrations.contains(changedColumnsHistoryMigration) {
            if plan.storedModel != nil {
                // A new file's history has the column, and its triggers fill it.
                if try !db.columns(in: Schema.historyTable).contains(where: { $0.name == Schema.changedColumnsColumn }) {
                    try db.execute(sql: "ALTER TABLE \(Schema.historyTable) ADD COLUMN \(Schema.changedColumnsColumn) INTEGER")
                }
                for entity in model.entities { try Schema.installTriggers(for: entity, in: db) }
            }
            try record(changedColumnsHistoryMigration)
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
