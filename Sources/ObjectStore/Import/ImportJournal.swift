import Foundation
import GRDB

/// Where an import of one file into one entity got to, kept in the store itself (table
/// `Z_IMPORT`) and written in the same transaction as each chunk of records, so that the
/// rows and the record of them always agree, whatever stops the import.
struct ImportJournal {
    /// What one committed chunk leaves behind.
    struct Entry: Hashable {
        /// The last line consumed.
        var line: Int
        /// The bytes consumed: the next record starts here.
        var byteOffset: Int64
        /// The records committed by every run of this import.
        var records: Int
        /// The FNV-1a checksum of the file's first `byteOffset` bytes.
        var checksum: UInt64
        /// Whether the whole file is imported.
        var finished: Bool
    }

    static let table = "Z_IMPORT"

    /// The file's standardized absolute path.
    let path: String
    let entityName: String

    init(file: URL, entityName: String) {
        path = file.absoluteURL.standardizedFileURL.path
        self.entityName = entityName
    }

    /// Creates the journal's table when the store has none yet. The table is not part of
    /// the model: opening and migrating the store ignore it.
    static func createTable(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS \(table) (
                path TEXT NOT NULL, entity TEXT NOT NULL, line INTEGER NOT NULL, byteOffset INTEGER NOT NULL,
                records INTEGER NOT NULL, checksum TEXT NOT NULL, finished INTEGER NOT NULL, updated TEXT NOT NULL,
                PRIMARY KEY (path, entity))
            """)
    }

    /// The journal of this file and entity, if an import of it ever committed.
    func entry(_ db: Database) throws -> Entry? {
        guard try db.tableExists(Self.table) else { return nil }
        let sql = "SELECT line, byteOffset, records, checksum, finished FROM \(Self.table) WHERE path = ? AND entity = ?"
        return try Row.fetchOne(db, sql: sql, arguments: [path, entityName]).map { row in
            Entry(line: row[0], byteOffset: row[1], records: row[2],
                  checksum: UInt64(row[3] as String, radix: 16) ?? 0, finished: row[4])
        }
    }

    /// What the journal must hold for a write to go ahead.
    enum Expectation: Hashable {
        /// No entry: a first import.
        case absent
        /// Anything: an import started over.
        case any
        /// The entry the import resumed from or last wrote.
        case entry(Entry)
    }

    /// Records `entry` when the journal holds what `expected` says; otherwise another import
    /// of the same file committed meanwhile: throws ``Conflict``, and the transaction (with
    /// the chunk) is rolled back.
    func write(_ entry: Entry, expecting expected: Expectation, _ db: Database) throws {
        let values: StatementArguments = [
            entry.line, entry.byteOffset, entry.records, String(entry.checksum, radix: 16), entry.finished,
            ISO8601DateFormatter.plain.string(from: Date()), path, entityName,
        ]
        switch expected {
        case .absent, .any:
            if expected == .absent, try self.entry(db) != nil { throw Conflict() }
            try db.execute(sql: """
                INSERT OR REPLACE INTO \(Self.table) (line, byteOffset, records, checksum, finished, updated, path, entity)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: values)
        case .entry(let previous):
            try db.execute(sql: """
                UPDATE \(Self.table) SET line = ?, byteOffset = ?, records = ?, checksum = ?, finished = ?, updated = ?
                WHERE path = ? AND entity = ? AND byteOffset = ? AND records = ? AND finished = ?
                """, arguments: values + [previous.byteOffset, previous.records, previous.finished])
            if db.changesCount != 1 { throw Conflict() }
        }
    }

    /// Another import of the same file and entity committed since this one read the journal.
    struct Conflict: Error {}
}
