import Dispatch
import GRDB

/// A store's initial contents (an app's sample data, a dataset's seed records): written
/// once, into a store no row was ever written to.
///
/// ## Topics
/// - ``insertInitialContents(_:)``
extension PersistentStore {
    /// Inserts the objects `fill` makes into a new context and saves them, when no row was
    /// ever written to this store: every table is empty and the store's
    /// ``generation()`` is 0. Returns whether it saved them.
    ///
    /// Call it after every open: a store is filled once, when it is new, never again
    /// because it is empty (a person who deleted every object keeps an empty store), and a
    /// store whose filling was interrupted (the process killed after creating the file) is
    /// filled on the next open. The check runs again in the save's write transaction, so
    /// processes opening the same new store at once fill it once.
    ///
    /// `fill` runs on a private queue of the new context, whose objects it may use only
    /// there; when it throws, nothing is written and the error is rethrown.
    @discardableResult
    public func insertInitialContents(_ fill: (ObjectContext) throws -> Void) throws -> Bool {
        guard try database.read(neverWritten) else { return false }
        let context = ObjectContext(store: self, queue: DispatchQueue(label: "PersistentStore.insertInitialContents"))
        return try context.performAndWait {
            try fill(context)
            do {
                try context.save(checkingFirst: { db in
                    guard try self.neverWritten(db) else { throw AlreadyWritten() }
                }, writingAlso: { db in
                    // What the store's generation is with nothing but these contents in it.
                    try db.execute(sql: "INSERT OR REPLACE INTO \(Self.metadataTable) (key, value) VALUES (?, (\(Schema.generationSQL)))",
                                   arguments: [Self.initialContentsKey])
                })
                return true
            } catch is AlreadyWritten {
                context.rollback()
                return false
            }
        }
    }

    private struct AlreadyWritten: Error {}

    private static let initialContentsKey = "initialContentsGeneration"

    /// Whether the store holds nothing but what ``insertInitialContents(_:)`` wrote into it,
    /// unchanged since, or was never written at all: its objects are an app's seed, not a
    /// person's data. (A store filled by an earlier version, which did not record it, says
    /// false.)
    ///
    /// A store joining others through a shared server takes their objects instead of adding
    /// its seed to them when this is true.
    public func holdsOnlyInitialContents() throws -> Bool {
        try database.read { db in try holdsOnlyInitialContents(in: db) }
    }

    /// ``holdsOnlyInitialContents()`` within a transaction of the caller's: what it finds
    /// holds until that transaction ends (sharing gives a seed up in the transaction that
    /// checks it, so that a save made meanwhile is never taken for the seed).
    package func holdsOnlyInitialContents(in db: Database) throws -> Bool {
        if try neverWritten(db) { return true }
        let generation = try Int64.fetchOne(db, sql: Schema.generationSQL) ?? 0
        let seeded = try Int64.fetchOne(db, sql: "SELECT CAST(value AS INTEGER) FROM \(Self.metadataTable) WHERE key = ?", arguments: [Self.initialContentsKey])
        return seeded == generation
    }

    /// Whether no row of an entity was ever written: the generation the triggers count is 0
    /// and every entity table is empty (files made before the triggers count 0 too).
    private func neverWritten(_ db: Database) throws -> Bool {
        let generation = try Int64.fetchOne(db, sql: Schema.generationSQL) ?? 0
        guard generation == 0 else { return false }
        return try model.entities.allSatisfy { entity in
            try !Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(entity.name.quotedDatabaseIdentifier))")!
        }
    }
}
