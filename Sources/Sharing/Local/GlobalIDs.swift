import Foundation
import GRDB
import ObjectStore
import Synchronization

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
package struct GlobalIDs: Sendable {
    /// The table of global IDs in the store file.
    static let table = "Z_GLOBAL_ID"

    package let store: PersistentStore

    package init(store: PersistentStore) {
        self.store = store
    }

    /// Creates the table when missing and gives every saved object without an ID one.
    package func install() throws {
        try store.database.write { db in try Self.install(db, model: store.model) }
    }

    static func install(_ db: Database, model: Model) throws {
        try createTable(db)
        for entity in model.entities {
            try db.execute(sql: """
                INSERT INTO \(Self.table) (entity, rowKey, id)
                SELECT ?, Z_PK, randomblob(16) FROM \(entity.name.quotedDatabaseIdentifier)
                WHERE Z_PK NOT IN (SELECT rowKey FROM \(Self.table) WHERE entity = ?)
                """, arguments: [entity.name, entity.name])
        }
    }

    static func createTable(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS \(Self.table) (
                entity TEXT NOT NULL, rowKey INTEGER NOT NULL, id BLOB NOT NULL UNIQUE,
                PRIMARY KEY (entity, rowKey)) WITHOUT ROWID
            """)
    }

    /// The global IDs of `objects`, given now to those saved objects that have none; an
    /// object that is not (or no longer) saved and never had one is left out.
    package func assignGlobalIDs(to objects: [ObjectID]) throws -> [ObjectID: UUID] {
        try store.database.write { db in
            var ids: [ObjectID: UUID] = [:]
            for object in objects where !object.isTemporaryID {
                if let id = try Self.globalID(of: object, in: db) {
                    ids[object] = id
                    continue
                }
                let id = Self.newGlobalID()
                try db.execute(
                    sql: "INSERT INTO \(Self.table) (entity, rowKey, id) SELECT ?, Z_PK, ? FROM \(object.entityName.quotedDatabaseIdentifier) WHERE Z_PK = ?",
                    arguments: [object.entityName, id.bytes, object.rowKey])
                if db.changesCount > 0 { ids[object] = id }
            }
            return ids
        }
    }

    /// The global ID of a saved object, or nil when it has none yet.
    package func globalID(of object: ObjectID) throws -> UUID? {
        try store.database.read { db in try Self.globalID(of: object, in: db) }
    }

    /// The object that has this global ID, if the store has it (or had it: see
    /// ``GlobalIDs``).
    package func objectID(for globalID: UUID) throws -> ObjectID? {
        try store.database.read { db in try Self.object(for: globalID, in: db) }
    }

    static func globalID(of object: ObjectID, in db: Database) throws -> UUID? {
        guard !object.isTemporaryID else { return nil }
        return try globalID(entity: object.entityName, rowKey: object.rowKey, in: db)
    }

    static func globalID(entity: String, rowKey: Int64, in db: Database) throws -> UUID? {
        let bytes = try Data.fetchOne(db.cachedStatement(sql: "SELECT id FROM \(table) WHERE entity = ? AND rowKey = ?"), arguments: [entity, rowKey])
        return bytes.flatMap(UUID.init(bytes:))
    }

    /// The global IDs of the rows `rowKeys` of `entity` that have one, by row key, read a
    /// few hundred a statement.
    static func globalIDs(entity: String, rowKeys: some Collection<Int64>, in db: Database) throws -> [Int64: UUID] {
        var ids: [Int64: UUID] = [:]
        try db.forEachRow(matching: Array(rowKeys), leading: [entity], sql: { "SELECT rowKey, id FROM \(table) WHERE entity = ? AND rowKey IN (\($0))" }) { row in
            if let id = UUID(bytes: row[1]) { ids[row[0]] = id }
        }
        return ids
    }

    /// The objects of the global IDs `ids` that have one, read a few hundred a statement.
    static func objects(for ids: some Collection<UUID>, in db: Database) throws -> [UUID: ObjectID] {
        var objects: [UUID: ObjectID] = [:]
        try db.forEachRow(matching: ids.map(\.bytes), sql: { "SELECT id, entity, rowKey FROM \(table) WHERE id IN (\($0))" }) { row in
            if let id = UUID(bytes: row[0]) { objects[id] = ObjectID(entityName: row[1], rowKey: row[2]) }
        }
        return objects
    }

    /// The global ID of a row of `entity`, given now when it has none.
    static func assignedGlobalID(entity: String, rowKey: Int64, in db: Database) throws -> UUID {
        if let id = try globalID(entity: entity, rowKey: rowKey, in: db) { return id }
        let id = Self.newGlobalID()
        try map(id, to: entity, rowKey: rowKey, in: db)
        return id
    }

    /// Names the row `rowKey` of `entity` by `id`, which no other row keeps then (an ID
    /// outlives its object's delete: a row that comes back under it takes it over).
    static func map(_ id: UUID, to entity: String, rowKey: Int64, in db: Database) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(table) (entity, rowKey, id) VALUES (?, ?, ?)").execute(arguments: [entity, rowKey, id.bytes])
    }

    /// Names each row of `entity` by its ID, as ``map(_:to:rowKey:in:)`` does, a few hundred
    /// rows a statement: a first push names every object of the store.
    static func map(_ ids: [(rowKey: Int64, id: UUID)], to entity: String, in db: Database) throws {
        try db.insertRows(ids, into: table, columns: ["entity", "rowKey", "id"], orReplace: true, rowsPerStatement: 300) { row, arguments in
            arguments += [entity.databaseValue, row.rowKey.databaseValue, row.id.bytes.databaseValue]
        }
    }

    /// The object named by `id`, whether or not its row still exists.
    static func object(for id: UUID, in db: Database) throws -> ObjectID? {
        let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT entity, rowKey FROM \(table) WHERE id = ?"), arguments: [id.bytes])
        return row.map { ObjectID(entityName: $0[0], rowKey: $0[1]) }
    }
}

extension GlobalIDs {
    /// A new global ID, ordered by time (a version 7 UUID, RFC 9562: the milliseconds since
    /// 1970, then a counter within the millisecond, then random bits). The IDs a store gives
    /// one after another sort one after another, so that the tables keyed by them (the
    /// global IDs' own index, the bases, the server's primary keys) grow at their end
    /// rather than at random places: a big store's first push writes a million of each.
    static func newGlobalID() -> UUID {
        let (milliseconds, counter, tail) = clock.withLock { state -> (UInt64, UInt64, UInt64) in
            let now = UInt64(Date().timeIntervalSince1970 * 1000)
            if now > state.milliseconds {
                (state.milliseconds, state.counter) = (now, 0)
            } else if state.counter < 0xFFF {
                state.counter += 1
            } else {
                // 4,096 IDs in one millisecond: the next millisecond's.
                (state.milliseconds, state.counter) = (state.milliseconds + 1, 0)
            }
            if state.random.isEmpty { state.random = randomWords(512) }
            return (state.milliseconds, state.counter, state.random.removeLast())
        }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (40 - 8 * UInt64(index))) }
            bytes[6] = 0x70 | UInt8(truncatingIfNeeded: counter >> 8)
            bytes[7] = UInt8(truncatingIfNeeded: counter)
            bytes[8] = 0x80 | UInt8(truncatingIfNeeded: tail >> 56) & 0x3F
            for index in 9..<16 { bytes[index] = UInt8(truncatingIfNeeded: tail >> (8 * UInt64(15 - index))) }
        }
        return UUID(uuid: uuid)
    }

    /// `count` random words from the system's generator in one call: asked for one ID at a
    /// time, it costs a system call each (0.35 s for the million IDs of a big store's first
    /// push, on this machine).
    private static func randomWords(_ count: Int) -> [UInt64] {
        var words = [UInt64](repeating: 0, count: count)
        words.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
        return words
    }

    /// The millisecond of the last ID given, the counter within it, and random words not
    /// used yet.
    private static let clock = Mutex<(milliseconds: UInt64, counter: UInt64, random: [UInt64])>((0, 0, []))
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
