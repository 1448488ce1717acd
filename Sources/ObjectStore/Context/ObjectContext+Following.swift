import Dispatch
import Foundation
import GRDB

extension ObjectContext {
    /// Follows the changes other connections and processes commit to the store (a script,
    /// another window, the `sqlite3` shell): reads the store's change history since the last
    /// look, refreshes updated objects, forgets deleted ones and posts
    /// ``ContextEvent/objectsDidChange(_:)`` through ``mergeChanges(fromContextDidSave:)``,
    /// on the context's queue, until the returned token is released or cancelled.
    ///
    /// Saves of contexts on this same ``PersistentStore`` object are skipped: they arrive
    /// through ``automaticallyMergesChangesFromStore``.
    ///
    /// Commits are noticed by a timer on the context's queue, every `interval`: it compares
    /// the modification time and size of the store file and its `-wal` file (every commit
    /// writes the WAL) with the last look, and reads the history only when they changed (or
    /// changed within the last second, since file times are coarse). Dispatch on Linux has
    /// no file-system object source (`DispatchSource.makeFileSystemObjectSource` does not
    /// exist there) and GRDB's transaction observers see only this process's writes. Idle,
    /// that is two `stat` calls five times a second: no measurable CPU (an idle `fetched-results watch`
    /// used 1 clock tick, 10 ms, in 20 s; reading the token from SQLite every tick cost 5 in 10 s).
    /// When the history this context needs was pruned (``HistoryGap``), it compares the
    /// store's rows with its registered objects and merges the difference instead.
    public func followStore(interval: DispatchTimeInterval = .milliseconds(200)) throws -> ObservationToken {
        let follower = StoreFollower(token: try store.currentHistoryToken(), files: store.url.map { [$0.path, $0.path + "-wal"] })
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(20))
        timer.setEventHandler { [weak self] in self?.mergeStoreHistory(follower) }
        timer.resume()
        return ObservationToken { timer.cancel() }
    }

    private func mergeStoreHistory(_ follower: StoreFollower) {
        guard follower.filesMayHaveChanged() else { return }
        readStoreHistory(follower)
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
                // The store cannot be read right now: try again at the next tick.
            }
        } catch {
            // The store cannot be read right now (locked, I/O): try again at the next tick.
        }
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

/// How far a following context has read the history, and what its files looked like.
///
/// Package-wide: the sharing engine notices local commits the same way.
package final class StoreFollower: @unchecked Sendable {
    package var token: Int64
    /// The store file and its WAL; nil in memory, where every tick reads the token.
    let files: [String]?
    private var signature: [Int64] = []

    package init(token: Int64, files: [String]?) {
        self.token = token
        self.files = files
    }

    /// Whether some file changed since the last look, or changed so recently that a second
    /// commit within the same file-time tick could hide behind the first.
    package func filesMayHaveChanged() -> Bool {
        guard let files else { return true }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var newest = 0
        var signature: [Int64] = []
        for path in files {
            var info = stat()
            guard stat(path, &info) == 0 else { signature += [-1, -1, -1]; continue }
            signature += [Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec), Int64(info.st_size)]
            newest = max(newest, info.st_mtim.tv_sec)
        }
        defer { self.signature = signature }
        return signature != self.signature || now.tv_sec - newest <= 1
    }
}
