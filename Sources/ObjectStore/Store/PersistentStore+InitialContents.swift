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
                })
                return true
            } catch is AlreadyWritten {
                context.rollback()
                return false
            }
        }
    }

    private struct AlreadyWritten: Error {}

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
