import Foundation
import GRDB
import ObjectStore

/// The global IDs of a store's objects: a UUID per saved object, kept beside the store's own
/// integer keys, so that an object shared with other stores is named the same everywhere.
///
/// The IDs live in a table of their own in the store file, `Z_GLOBAL_ID` (entity, row key,
/// 16 bytes), not in a column of each entity table: SQLite cannot add a column whose default
/// is a new random value to a table that has rows, and writing one into each row would
/// record an update of every object in the store's history. The store, its contexts and
/// its controllers are unchanged.
///
/// ``install()`` migrates a store in place: it creates the table when missing and gives
/// every saved object that has no ID one, in one transaction. Objects saved later get
/// theirs when they are first named to the server (``assignGlobalIDs(to:)``, by whoever
/// saved them), not by a trigger on every insert: a unique index on random IDs made bulk
/// inserts about four times slower (200,000 rows: 0.26 s without, 1.0 s with), while the
/// sharing side can give a whole batch its IDs at once, off the writers' path. An ID, once
/// given, stays; it outlives its object's delete, so that the delete can still be named
/// when it is pushed.
///
/// ## Topics
/// - ``init(store:)``
/// - ``install()``
/// - ``assignGlobalIDs(to:)``
/// - ``globalID(of:)``
/// - ``objectID(for:)``
public struct GlobalIDs: Sendable {
    /// The table of global IDs in the store file.
    static let table = "Z_GLOBAL_ID"

    public let store: PersistentStore

    public init(store: PersistentStore) {
        self.store = store
    }

    /// Creates the table when missing and gives every saved object without an ID one.
    public func install() throws {
        try store.database.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS \(Self.table) (
                    entity TEXT NOT NULL, rowKey INTEGER NOT NULL, id BLOB NOT NULL UNIQUE,
                    PRIMARY KEY (entity, rowKey)) WITHOUT ROWID
                """)
            for entity in store.model.entities {
                try db.execute(sql: """
                    INSERT INTO \(Self.table) (entity, rowKey, id)
                    SELECT ?, Z_PK, randomblob(16) FROM \(entity.name.quotedDatabaseIdentifier)
                    WHERE Z_PK NOT IN (SELECT rowKey FROM \(Self.table) WHERE entity = ?)
                    """, arguments: [entity.name, entity.name])
            }
        }
    }

    /// The global IDs of `objects`, given now to those saved objects that have none; an
    /// object that is not (or no longer) saved and never had one is left out.
    public func assignGlobalIDs(to objects: [ObjectID]) throws -> [ObjectID: UUID] {
        try store.database.write { db in
            var ids: [ObjectID: UUID] = [:]
            for object in objects where !object.isTemporaryID {
                if let id = try Self.globalID(of: object, in: db) {
                    ids[object] = id
                    continue
                }
                let id = UUID()
                try db.execute(
                    sql: "INSERT INTO \(Self.table) (entity, rowKey, id) SELECT ?, Z_PK, ? FROM \(object.entityName.quotedDatabaseIdentifier) WHERE Z_PK = ?",
                    arguments: [object.entityName, id.bytes, object.rowKey])
                if db.changesCount > 0 { ids[object] = id }
            }
            return ids
        }
    }

    /// The global ID of a saved object, or nil when it has none yet.
    public func globalID(of object: ObjectID) throws -> UUID? {
        try store.database.read { db in try Self.globalID(of: object, in: db) }
    }

    /// The object that has this global ID, if the store has it (or had it: see
    /// ``GlobalIDs``).
    public func objectID(for globalID: UUID) throws -> ObjectID? {
        try store.database.read { db in
            let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT entity, rowKey FROM \(Self.table) WHERE id = ?"), arguments: [globalID.bytes])
            return row.map { ObjectID(entityName: $0[0], rowKey: $0[1]) }
        }
    }

    private static func globalID(of object: ObjectID, in db: Database) throws -> UUID? {
        guard !object.isTemporaryID else { return nil }
        let bytes = try Data.fetchOne(db.cachedStatement(sql: "SELECT id FROM \(table) WHERE entity = ? AND rowKey = ?"), arguments: [object.entityName, object.rowKey])
        return bytes.flatMap(UUID.init(bytes:))
    }
}

extension UUID {
    /// The 16 bytes of the ID, as the store keeps it.
    var bytes: Data { withUnsafeBytes(of: uuid) { Data($0) } }

    init?(bytes: Data) {
        guard bytes.count == 16 else { return nil }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyBytes(from: bytes) }
        self.init(uuid: uuid)
    }
}
