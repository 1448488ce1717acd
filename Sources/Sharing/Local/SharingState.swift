import Foundation
import GRDB
import ObjectStore

/// What a shared store keeps about its server, in tables of its own file (none of them has
/// history triggers, so writing them records no change of any object):
///
/// - `Z_SHARING (key, value)`: the server it shares with (its address without a password,
///   and the identity of the database), the cursor in the server's change log, and the
///   history token up to which local changes were pushed.
/// - `Z_SHARED_BASE (id, entity, version, row, horizon)`: for each shared object, the
///   server's row as this store last took it (the *base*), and its version; `row` is NULL
///   once the object was deleted (a tombstone, so that an older change arriving late cannot
///   bring it back, forgotten once none can: see ``Tombstones``). A local edit is a field
///   whose value differs from its base, which is what a push sends, compared and set
///   against the server's value; a pulled change is merged field by field against it.
/// - `Z_SHARED_REFERENCE (entity, rowKey, relationship, target)`: to-one relationships that
///   name an object this store has not pulled yet; set once it arrives.
/// - `Z_SHARED_CONFLICT`: conflicts found, until dismissed.
/// - `Z_SHARED_REJECTED`: changes refused for not fitting the model (``RejectedChange``),
///   until dismissed; one row per object, version and key, however often it is met.
enum SharingState {
    static let stateTable = "Z_SHARING"
    static let baseTable = "Z_SHARED_BASE"
    static let referenceTable = "Z_SHARED_REFERENCE"
    static let conflictTable = "Z_SHARED_CONFLICT"
    static let rejectedTable = "Z_SHARED_REJECTED"

    enum Key: String {
        /// The server's address, without a password (``ServerConfiguration/description``).
        case server
        /// The server database's identity (``ServerSchema``'s `Z_SHARING` row), so that a
        /// store is not pointed at another database by mistake.
        case serverIdentity
        /// The cursor in the server's change log, as `transaction:sequence`.
        case cursor
        /// The local history token up to which local changes were pushed.
        case pushedThrough
        /// Whether sharing is on (the store shares on open without being told again).
        case active
        /// A push that adds to counters, recorded before it is sent and forgotten once its
        /// end is taken into the store (``PushInFlight``).
        case pushInFlight
        /// The server transactions of this store's pushes whose ends the store took, past
        /// the cursor (``takenPushes(in:)``).
        case takenPushes
    }

    /// A push that adds to counters and whose end the store has not taken yet: its
    /// identity, and what it adds to which counters of which objects. Recorded before the
    /// push is sent, so that a push whose end was lost (the process killed) is sent again
    /// under its identity, and adds nothing twice; and a pull that brings the push's own
    /// changes back first counts its additions as this store's, not twice.
    struct PushInFlight: Codable {
        var id: UUID
        /// Entity names by object.
        var entities: [UUID: String]
        /// What is added, by object and counter (exactly: an integer as an integer).
        var deltas: [UUID: [String: JSONScalar]]

        /// A new push of what `operations` add to counters.
        init(_ operations: some Sequence<Outbox.Operation>) {
            id = UUID()
            entities = [:]
            deltas = [:]
            for operation in operations where !operation.counterDeltas.isEmpty {
                entities[operation.id] = operation.entity.name
                deltas[operation.id] = operation.counterDeltas.mapValues(JSONScalar.init)
            }
        }

        /// The deltas of `object` as values of its counters' types.
        func deltas(of object: UUID, entity: EntityDescription) -> [String: Value] {
            (deltas[object] ?? [:]).reduce(into: [:]) { result, entry in
                guard let attribute = entity.attribute(named: entry.key) else { return }
                result[entry.key] = entry.value.value(as: attribute.type)
            }
        }
    }

    static func pushInFlight(in db: Database) throws -> PushInFlight? {
        try value(.pushInFlight, in: db).flatMap { try JSONDecoder().decode(PushInFlight.self, from: Data($0.utf8)) }
    }

    static func setPushInFlight(_ push: PushInFlight?, in db: Database) throws {
        try set(.pushInFlight, try push.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }, in: db)
    }

    /// Creates the tables when missing.
    static func install(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS \(stateTable) (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS \(baseTable) (
                id BLOB PRIMARY KEY, entity TEXT NOT NULL, version INTEGER NOT NULL, "row" TEXT) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS \(referenceTable) (
                entity TEXT NOT NULL, rowKey INTEGER NOT NULL, relationship TEXT NOT NULL, target BLOB NOT NULL,
                PRIMARY KEY (entity, rowKey, relationship)) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS Z_SHARED_REFERENCE_target ON \(referenceTable)(target);
            CREATE TABLE IF NOT EXISTS \(conflictTable) (
                number INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, entity TEXT NOT NULL, object BLOB NOT NULL,
                keys TEXT NOT NULL, description TEXT NOT NULL, resolution TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS \(rejectedTable) (
                number INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, direction TEXT NOT NULL, entity TEXT NOT NULL,
                object BLOB NOT NULL, version INTEGER NOT NULL, key TEXT NOT NULL, reason TEXT NOT NULL,
                UNIQUE (direction, object, version, key, reason));
            """)
        try Tombstones.install(db)
    }

    static func value(_ key: Key, in db: Database) throws -> String? {
        guard try db.tableExists(stateTable) else { return nil }
        return try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM \(stateTable) WHERE key = ?"), arguments: [key.rawValue])
    }

    static func set(_ key: Key, _ value: String?, in db: Database) throws {
        // The history after the pushed token is what the next push reads: no process's
        // pruning takes it.
        if key == .pushedThrough { try PersistentStore.keepHistory(after: value.flatMap { Int64($0) }, in: db) }
        // Cached: a pull moves the cursor at every wake-up (twenty desktops prepared these
        // statements about 2.7% of their time).
        if let value {
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(stateTable) (key, value) VALUES (?, ?)").execute(arguments: [key.rawValue, value])
        } else {
            try db.cachedStatement(sql: "DELETE FROM \(stateTable) WHERE key = ?").execute(arguments: [key.rawValue])
        }
    }

    static func cursor(in db: Database) throws -> ServerCursor? {
        try value(.cursor, in: db).flatMap(ServerCursor.init)
    }

    static func setCursor(_ cursor: ServerCursor, in db: Database) throws {
        try set(.cursor, cursor.description, in: db)
        // A push's changes are all behind a cursor at its transaction (a pull takes or skips
        // whole transactions).
        let taken = try takenPushes(in: db)
        if taken.contains(where: { $0 <= cursor.transaction }) { try setTakenPushes(taken.filter { $0 > cursor.transaction }, in: db) }
    }

    /// The server transactions of this store's pushes whose ends it took (their rows, as
    /// the push left them, are in the store, with their bases) and that the cursor has not
    /// passed yet: the pull need not bring their changes back. Recorded in the transaction
    /// that takes the push's end, so a push whose end was lost is pulled as any other.
    static func takenPushes(in db: Database) throws -> [UInt64] {
        try value(.takenPushes, in: db).map { $0.split(separator: ",").compactMap { UInt64($0) } } ?? []
    }

    static func addTakenPush(_ transaction: UInt64, in db: Database) throws {
        try setTakenPushes(takenPushes(in: db) + [transaction], in: db)
    }

    private static func setTakenPushes(_ transactions: [UInt64], in db: Database) throws {
        try set(.takenPushes, transactions.isEmpty ? nil : transactions.map(String.init).joined(separator: ","), in: db)
    }

    static func pushedThrough(in db: Database) throws -> Int64 {
        try value(.pushedThrough, in: db).flatMap { Int64($0) } ?? 0
    }

    // MARK: Bases

    /// The base of one object: the server row this store last took, at its version; `values`
    /// is nil for an object deleted on the server (a tombstone).
    struct Base {
        var version: Int64
        var values: [String: Value]?
        /// `values` as JSON, when it was made already (``ServerChange/valuesJSON``).
        var json: String?

        init(version: Int64, values: [String: Value]?, json: String? = nil) {
            (self.version, self.values, self.json) = (version, values, json)
        }

        /// The JSON the store keeps: nil for a tombstone.
        var storedJSON: String? { json ?? values.map(RowImage.json) }
    }

    /// The base stored as `version` and the row's JSON (nil for a tombstone), read as a
    /// row of `entity`.
    static func base(version: Int64, json: String?, entity: EntityDescription, model: Model) throws -> Base {
        Base(version: version, values: try json.map { try RowImage.values(ofJSON: $0, entity: entity, model: model) })
    }

    static func base(of id: UUID, entity: EntityDescription, model: Model, in db: Database) throws -> Base? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT version, \"row\" FROM \(baseTable) WHERE id = ?"), arguments: [id.bytes]) else {
            return nil
        }
        return try base(version: row[0], json: row[1], entity: entity, model: model)
    }

    /// The bases of `ids` that have one, as stored: the version and the row's JSON (nil for
    /// a tombstone), read a few hundred a statement; ``base(version:json:entity:model:)``
    /// reads one.
    static func storedBases(of ids: some Collection<UUID>, in db: Database) throws -> [UUID: (version: Int64, json: String?)] {
        var bases: [UUID: (version: Int64, json: String?)] = [:]
        try db.forEachRow(matching: ids.map(\.bytes), sql: { "SELECT id, version, \"row\" FROM \(baseTable) WHERE id IN (\($0))" }) { row in
            if let id = UUID(bytes: row[0]) { bases[id] = (row[1], row[2]) }
        }
        return bases
    }

    /// The stored bases of `ids`, as ``storedBases(of:in:)`` reads them, and their local
    /// objects, as ``GlobalIDs/objects(for:in:)`` does: one pass reads both for the objects
    /// that have a base (most of those a pull names), and one the objects of the rest.
    static func storedBasesAndObjects(of ids: some Collection<UUID>, in db: Database) throws
        -> (bases: [UUID: (version: Int64, json: String?)], objects: [UUID: ObjectID]) {
        var bases: [UUID: (version: Int64, json: String?)] = [:], objects: [UUID: ObjectID] = [:]
        bases.reserveCapacity(ids.count)
        objects.reserveCapacity(ids.count)
        try db.forEachRow(matching: ids.map(\.bytes), sql: {
            "SELECT b.id, b.version, b.\"row\", g.entity, g.rowKey FROM \(baseTable) b LEFT JOIN \(GlobalIDs.table) g ON g.id = b.id WHERE b.id IN (\($0))"
        }) { row in
            guard let id = UUID(bytes: row[0]) else { return }
            bases[id] = (row[1], row[2])
            if let entity: String = row[3] { objects[id] = ObjectID(entityName: entity, rowKey: row[4]) }
        }
        let rest = ids.filter { bases[$0] == nil }
        if !rest.isEmpty { objects.merge(try GlobalIDs.objects(for: rest, in: db)) { $1 } }
        return (bases, objects)
    }

    static func setBase(_ base: Base, of id: UUID, entity: String, in db: Database) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(baseTable) (id, entity, version, \"row\") VALUES (?, ?, ?, ?)")
            .execute(arguments: [id.bytes, entity, base.version, base.storedJSON])
    }

    /// Sets the bases of many objects, as ``setBase(_:of:entity:in:)`` does, a few hundred a
    /// statement: a first push's end sets one for every object of the store.
    ///
    /// - Parameter keepingNewer: Leaves a stored base at the same version or a newer one as
    ///   it is, compared in the statement that writes (not read first). A push's end takes
    ///   the rows the server holds as sent this way: a pull in between may have taken a
    ///   newer version.
    static func setBases(_ bases: [(id: UUID, entity: String, base: Base)], keepingNewer: Bool = false, in db: Database) throws {
        let newer = """
            ON CONFLICT (id) DO UPDATE SET entity = excluded.entity, version = excluded.version, "row" = excluded."row"
            WHERE excluded.version > \(baseTable).version
            """
        try db.insertRows(bases, into: baseTable, columns: ["id", "entity", "version", "\"row\""], orReplace: !keepingNewer,
                          upsert: keepingNewer ? newer : nil, rowsPerStatement: 200) { base, arguments in
            arguments += [base.id.bytes.databaseValue, base.entity.databaseValue, base.base.version.databaseValue, base.base.storedJSON.databaseValue]
        }
    }

    /// The IDs of the shared objects that have a base (not a tombstone), by entity.
    static func basedObjects(in db: Database) throws -> [(entity: String, id: UUID)] {
        try Row.fetchAll(db, sql: "SELECT entity, id FROM \(baseTable) WHERE \"row\" IS NOT NULL").compactMap { row in
            UUID(bytes: row[1]).map { (row[0], $0) }
        }
    }

    // MARK: Conflicts

    static func record(_ conflict: SharingConflict, in db: Database) throws {
        try db.execute(
            sql: "INSERT INTO \(conflictTable) (time, entity, object, keys, description, resolution) VALUES (?, ?, ?, ?, ?, ?)",
            arguments: [conflict.time.timeIntervalSinceReferenceDate, conflict.entity, conflict.globalID.bytes,
                        conflict.keys.joined(separator: ","), conflict.details, conflict.resolution.rawValue])
    }

    static func conflicts(in db: Database) throws -> [SharingConflict] {
        guard try db.tableExists(conflictTable) else { return [] }
        let sql = "SELECT number, time, entity, object, keys, description, resolution FROM \(conflictTable) ORDER BY number"
        return try Row.fetchAll(db, sql: sql).compactMap { row in
            guard let id = UUID(bytes: row[3]), let resolution = SharingConflict.Resolution(rawValue: row[6]) else { return nil }
            let keys: String = row[4]
            let object = try GlobalIDs.object(for: id, in: db)
            return SharingConflict(number: row[0], time: Date(timeIntervalSinceReferenceDate: row[1]), entity: row[2], globalID: id,
                                   objectID: object, keys: keys.split(separator: ",").map(String.init), details: row[5], resolution: resolution)
        }
    }

    // MARK: Rejected changes

    /// Records `rejected`, unless the same refusal is recorded already (a resync meets a bad
    /// row again).
    static func record(_ rejected: RejectedChange, in db: Database) throws {
        try db.execute(
            sql: "INSERT OR IGNORE INTO \(rejectedTable) (time, direction, entity, object, version, key, reason) VALUES (?, ?, ?, ?, ?, ?, ?)",
            arguments: [rejected.time.timeIntervalSinceReferenceDate, rejected.direction.rawValue, rejected.entity, rejected.globalID.bytes,
                        rejected.version, rejected.key ?? "", rejected.reason])
    }

    /// How many rejected changes are recorded: read at each round's status, so prepared once
    /// a connection. A store that never shared has no table, and nothing rejected.
    static func rejectedCount(in db: Database) throws -> Int {
        guard let statement = try? db.cachedStatement(sql: "SELECT count(*) FROM \(rejectedTable)") else { return 0 }
        return try Int.fetchOne(statement) ?? 0
    }

    static func rejectedChanges(after number: Int64 = 0, in db: Database) throws -> [RejectedChange] {
        guard try db.tableExists(rejectedTable) else { return [] }
        let sql = "SELECT number, time, direction, entity, object, version, key, reason FROM \(rejectedTable) WHERE number > ? ORDER BY number"
        return try Row.fetchAll(db, sql: sql, arguments: [number]).compactMap { row in
            guard let id = UUID(bytes: row[4]), let direction = RejectedChange.Direction(rawValue: row[2]) else { return nil }
            let key: String = row[6]
            return RejectedChange(number: row[0], time: Date(timeIntervalSinceReferenceDate: row[1]), direction: direction, entity: row[3],
                                  globalID: id, objectID: try GlobalIDs.object(for: id, in: db), version: row[5],
                                  key: key.isEmpty ? nil : key, reason: row[7])
        }
    }
}
