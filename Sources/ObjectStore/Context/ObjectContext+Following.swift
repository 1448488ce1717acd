import Dispatch
import Foundation
import GRDB

extension ObjectContext {
    /// Follows the changes other connections and processes commit to the store (a script,
    /// another window, the `sqlite3` shell, the sharing engine's pulled rows): reads the
    /// store's change history since the last look, refreshes updated objects, forgets
    /// deleted ones and posts ``ContextEvent/objectsDidChange(_:)`` through
    /// ``mergeChanges(fromContextDidSave:)``, on the context's queue, until the returned
    /// token is released or cancelled.
    ///
    /// Saves of contexts on this same ``PersistentStore`` object are skipped: they arrive
    /// through ``automaticallyMergesChangesFromStore``.
    ///
    /// Commits are pushed, not polled: the store's change feed
    /// (``PersistentStore/observeChanges(on:_:)``) wakes the context at this process's
    /// commits and, through inotify, at other processes'. Idle, nothing runs.
    /// When the history this context needs was pruned (``HistoryGap``), it compares the
    /// store's rows with its registered objects and merges the difference instead.
    ///
    /// - Parameter interval: How often to look anyway where the kernel cannot say that the
    ///   file changed (no inotify, or a network or FUSE file system): 2 seconds by default.
    public func followStore(interval: DispatchTimeInterval = .seconds(2)) throws -> ObservationToken {
        let follower = StoreFollower(token: try store.currentHistoryToken())
        return store.feed.subscribe(since: follower.token, queue: queue, fallback: interval) { [weak self] in self?.readStoreHistory(follower) }
    }

    private func readStoreHistory(_ follower: StoreFollower) {
        do {
            let current = try store.currentHistoryToken()
            guard current != follower.token else { return }
            // Saves of this store's contexts arrive by broadcast: nothing to read for them.
            if store.areLocalSaves(follower.token + 1 ... current) {
                follower.token = current
                return
            }
            let (changes, newToken) = try store.changes(since: follower.token, skipping: store.isLocalSave)
            follower.token = newToken
            if !changes.isEmpty { mergeChanges(fromContextDidSave: changes) }
        } catch let gap as HistoryGap {
            if store.areLocalSaves(follower.token + 1 ... gap.prunedThrough) {
                // Only this store's own saves were pruned: read on from there next time.
                follower.token = gap.prunedThrough
                return readStoreHistory(follower)
            }
            do {
                let (changes, token) = try changesAfterHistoryGap()
                follower.token = token
                if !changes.isEmpty { mergeChanges(fromContextDidSave: changes) }
            } catch {
                // The store cannot be read right now: try again shortly.
                retryReading(follower)
            }
        } catch {
            // The store cannot be read right now (locked, I/O): try again shortly.
            retryReading(follower)
        }
    }

    private func retryReading(_ follower: StoreFollower) {
        queue.asyncAfter(deadline: .now() + .milliseconds(100)) { [weak self] in self?.readStoreHistory(follower) }
    }

    /// What changed after the history this context needed was pruned: every saved
    /// registered object is updated or deleted (its row is gone), and anything else may have
    /// changed too (``ObjectChanges/invalidatedAllObjects``), so controllers fetch again.
    private func changesAfterHistoryGap() throws -> (ObjectChanges, Int64) {
        let (stored, token) = try store.database.read { db -> (Set<ObjectID>, Int64) in
            var ids = Set<ObjectID>()
            for entity in model.entities {
                for key in try Int64.fetchAll(db, sql: "SELECT \(Schema.primaryKey) FROM \(entity.name.quotedDatabaseIdentifier)") {
                    ids.insert(ObjectID(entityName: entity.name, primaryKey: key))
                }
            }
            return (ids, try PersistentStore.currentToken(db))
        }
        var changes = ObjectChanges(invalidatedAllObjects: true)
        for (id, object) in registry.all where !id.isTemporaryID && !object.isInserted {
            if stored.contains(id) {
                changes.updated[id] = Set(Schema.columns(of: object.entity, in: model).map(\.name))
            } else {
                changes.deleted.insert(id)
            }
        }
        return (changes, token)
    }
}

/// How far a following context has read the history (read and written on its queue).
private final class StoreFollower: @unchecked Sendable {
    var token: Int64

    init(token: Int64) { self.token = token }
}
