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
    /// Saves of contexts on this same ``PersistentStore`` object arrive as they always do,
    /// through ``automaticallyMergesChangesFromStore``, in the same order as the rest.
    ///
    /// Commits are pushed, not polled: the store's change feed
    /// (``PersistentStore/observeChanges(on:_:)``) wakes the context at this process's
    /// commits and, through inotify, at other processes'. Idle, nothing runs. A long stretch
    /// of changes (another process's page of thousands of rows) is read from the history on
    /// a reader of the store, not on the context's queue, and taken in on the queue once read.
    /// When the history this context needs was pruned (``HistoryGap``), it compares the
    /// store's rows with its registered objects and merges the difference instead.
    ///
    /// - Parameter interval: How often to look anyway where the kernel cannot say that the
    ///   file changed (no inotify, or a network or FUSE file system): 2 seconds by default.
    public func followStore(interval: DispatchTimeInterval = .seconds(2)) throws -> ObservationToken {
        let id = UUID()
        try performAndWait {
            // Up to now first: what was committed before this call is not followed.
            try takeStoreChanges(upTo: store.currentHistoryToken())
            storeFollowing.intervals[id] = interval
            updateFollowing()
        }
        return ObservationToken { [weak self] in
            self?.perform { [weak self] in
                guard let self else { return }
                storeFollowing.intervals[id] = nil
                updateFollowing()
            }
        }
    }

    /// Tells the feed whether this context follows every commit, and at what fallback.
    private func updateFollowing() {
        let intervals = storeFollowing.intervals.values
        storeSubscription?.setFollowing(!intervals.isEmpty, fallback: intervals.min { $0.nanoseconds < $1.nanoseconds })
    }

    /// Subscribes to the store's change feed: the one route by which changes made elsewhere
    /// enter the context (``takeStoreChanges()``).
    func subscribeToStore() {
        storeFollowing.generation = store.feed.generation
        storeFollowing.token = (try? store.currentHistoryToken()) ?? store.lastLocalSaveToken ?? 0
        storeSubscription = store.feed.subscribe(since: nil, queue: queue, following: false, takingLocalSaves: true) { [weak self] in self?.takeStoreChanges() }
    }

    /// Takes what was committed since the last call, in commit order: saves of the store's
    /// other contexts from the store's record of them (with the keys that changed), when
    /// ``automaticallyMergesChangesFromStore``; everything else (other processes, other store
    /// objects, the sharing engine's writes, saves recorded too long ago) from the history,
    /// when following the store.
    func takeStoreChanges() {
        // Held back (holdStoreChanges()): taken when released.
        guard storeFollowing.holds == 0 else { return }
        let generation = store.feed.generation
        if generation != storeFollowing.generation {
            // Another program replaced the file and the store opened the new one: what this
            // context holds came from the old file.
            do {
                let (changes, token) = try changesAfterHistoryGap()
                storeFollowing = StoreFollowing(token: token, generation: generation, intervals: storeFollowing.intervals,
                                                holds: storeFollowing.holds)
                if !changes.isEmpty { mergeChanges(fromContextDidSave: changes) }
            } catch {
                return retryTakingStoreChanges()
            }
        }
        let following = !storeFollowing.intervals.isEmpty
        let upTo: Int64?
        do {
            upTo = following ? try store.currentHistoryToken() : store.lastLocalSaveToken
        } catch {
            // The store cannot be read right now (locked, I/O): try again shortly.
            return retryTakingStoreChanges()
        }
        guard let upTo else { return }
        // A stretch read ahead (below) is taken first.
        let readAhead = storeFollowing.readAhead
        storeFollowing.readAhead = nil
        do {
            try takeStoreChanges(upTo: upTo, readingHistory: following, readAhead: readAhead, mayReadAhead: true)
        } catch {
            retryTakingStoreChanges()
        }
    }

    /// Reads a long stretch of history (another process's page of thousands of rows) on a
    /// reader of the store rather than on the context's queue (the window's main loop, where
    /// a page of 5,000 rows took 10-20 ms), holding the store's changes back meanwhile, then
    /// takes it in on the queue (``takeStoreChanges()``). `last` is before the next save of
    /// this store's contexts, which is taken from its record as always.
    private func readHistoryAhead(through last: Int64) {
        let (store, since, queue) = (store, storeFollowing.token, queue)
        // Once from each token: a read that found nothing to use is not made again.
        storeFollowing.readAheadFrom = since
        holdStoreChanges()
        DispatchQueue.global(qos: .userInitiated).async { [weak self] in
            let read = store.readHistoryAhead(since: since, through: last)
            queue.async { [weak self] in
                guard let self else { return }
                storeFollowing.readAhead = read
                storeFollowing.holds -= 1
                keepHeldHistory()
                if storeFollowing.holds == 0 { takeStoreChanges() }
            }
        }
    }

    /// Takes the store's changes up to `last`: saves of this store's contexts from their
    /// records, the rest from the history (when `readingHistory`), starting with `readAhead`
    /// when it is the next stretch. With `mayReadAhead`, a long stretch of history is read on
    /// a reader (``readHistoryAhead(through:)``), and the rest taken once it is in.
    private func takeStoreChanges(upTo last: Int64, readingHistory: Bool = false, readAhead: HistoryReadAhead? = nil,
                                  mayReadAhead: Bool = false) throws {
        while storeFollowing.token < last {
            let next = storeFollowing.token + 1
            if let save = store.localSave(writing: next) {
                switch save.changes {
                case .pending:
                    // Committed but not yet published (or not yet committed): told again then.
                    return
                case .published(let changes):
                    storeFollowing.token = save.tokens.upperBound
                    if save.source != ObjectIdentifier(self) && automaticallyMergesChangesFromStore && !changes.isEmpty {
                        mergeChanges(fromContextDidSave: changes)
                    }
                case .dropped:
                    if save.source == ObjectIdentifier(self) || !automaticallyMergesChangesFromStore {
                        storeFollowing.token = save.tokens.upperBound
                    } else {
                        try mergeHistory(through: save.tokens.upperBound)
                    }
                }
            } else if readingHistory {
                // Written elsewhere, up to the next save of this store's contexts.
                let end = store.historyStretchEnd(after: storeFollowing.token, through: last)
                if mayReadAhead, end - storeFollowing.token > historyReadAheadMinimum, storeFollowing.readAheadFrom != storeFollowing.token,
                   readAhead?.since != storeFollowing.token {
                    return readHistoryAhead(through: end)
                }
                try mergeHistory(through: end, readAhead: readAhead)
            } else {
                // Written elsewhere: passed over up to the next recorded save only, never
                // beyond the records (tokens of a save that did not commit are used again).
                guard let nextSave = store.firstLocalSaveToken(after: next) else { return }
                storeFollowing.token = min(last, nextSave - 1)
            }
        }
    }

    /// Merges the history from the context's token through `last`, or only its first
    /// stretch when that was read ahead on a reader (`readAhead`, or the context's own): the
    /// caller goes on from where it ends.
    private func mergeHistory(through last: Int64, readAhead: HistoryReadAhead? = nil) throws {
        let readAhead = [readAhead, storeFollowing.readAhead].lazy.compactMap { $0 }.first {
            $0.since == self.storeFollowing.token && $0.through <= last && $0.generation == self.storeFollowing.generation
        }
        if let readAhead {
            historyReads.readAhead += 1
            storeFollowing.token = readAhead.through
            if !readAhead.changes.isEmpty { mergeChanges(fromContextDidSave: readAhead.changes) }
            return
        }
        historyReads.onQueue += 1
        do {
            let (changes, newToken) = try store.changes(since: storeFollowing.token, through: last)
            storeFollowing.token = newToken
            if !changes.isEmpty { mergeChanges(fromContextDidSave: changes) }
        } catch is HistoryGap {
            let (changes, token) = try changesAfterHistoryGap()
            storeFollowing.token = token
            if !changes.isEmpty { mergeChanges(fromContextDidSave: changes) }
        }
    }

    /// The store's history token up to which this context, following the store
    /// (``followStore(interval:)``), has taken in the store's changes: a read of the store
    /// that finds it at this token reads the data this context holds, less its unsaved
    /// changes and its own saves not yet told back to it. Nil when the context does not
    /// follow the store (it passes over what others commit), or the store's file was
    /// replaced since.
    package var mergedHistoryToken: Int64? {
        guard !storeFollowing.intervals.isEmpty, storeFollowing.generation == store.feed.generation else { return nil }
        return storeFollowing.token
    }

    /// Takes in the store's changes up to history `token` now, rather than when the change
    /// feed tells (a controller whose fetch read the store at `token` shows them with it):
    /// true when the context then holds the store's changes exactly up to `token`. False when
    /// it is past `token`, does not follow the store, or cannot read the history now.
    ///
    /// With `readAhead` (``PersistentStore/readHistoryAhead(since:through:)``, from the
    /// token the context is at), the stretch of history it holds is not read again.
    package func takeStoreChanges(through token: Int64, readAhead: HistoryReadAhead? = nil) -> Bool {
        guard let merged = mergedHistoryToken, merged <= token else { return false }
        if merged < token {
            do {
                try takeStoreChanges(upTo: token, readingHistory: true, readAhead: readAhead)
            } catch {
                return false
            }
        }
        return storeFollowing.token == token
    }

    /// Holds the store's changes back: until as many ``releaseStoreChanges()``, the change
    /// feed's wake-ups take nothing in, and ``mergedHistoryToken`` stays where it is. A
    /// controller fetching on a reader of the store holds them, so that the context can then
    /// take them in exactly up to the moment its read found (``takeStoreChanges(through:)``)
    /// however long the read took, rather than being past it.
    ///
    /// The store keeps the history from the context's token while it holds (up to ten times
    /// its ``PersistentStore/historyLimit``), so that the changes held are taken in from the
    /// history, not by fetching again.
    package func holdStoreChanges() {
        storeFollowing.holds += 1
        keepHeldHistory()
    }

    /// Ends a ``holdStoreChanges()``; the last one takes in what came meanwhile, on a later
    /// turn of the context's queue.
    package func releaseStoreChanges() {
        precondition(storeFollowing.holds > 0, "releaseStoreChanges() without holdStoreChanges()")
        storeFollowing.holds -= 1
        keepHeldHistory()
        if storeFollowing.holds == 0 { queue.async { [weak self] in self?.takeStoreChanges() } }
    }

    /// Tells the store the history this context holds back for
    /// (``PersistentStore/keepHistoryInProcess(after:for:)``): after its token while it
    /// holds the store's changes and follows the store, none otherwise.
    private func keepHeldHistory() {
        store.keepHistoryInProcess(after: storeFollowing.holds > 0 ? mergedHistoryToken : nil, for: ObjectIdentifier(self))
    }

    private func retryTakingStoreChanges() {
        queue.asyncAfter(deadline: .now() + .milliseconds(100)) { [weak self] in self?.takeStoreChanges() }
    }

    /// What changed after the history this context needed was pruned: every saved
    /// registered object is updated or deleted (its row is gone), and anything else may have
    /// changed too (``ObjectChanges/invalidatedAllObjects``), so controllers fetch again.
    ///
    /// Only the registered objects' rows are looked for. Reading every key of every entity
    /// took a window following a joining store of a million rows a second on its main
    /// thread, at each gap.
    private func changesAfterHistoryGap() throws -> (ObjectChanges, Int64) {
        let saved = registry.all.filter { !$0.id.isTemporaryID && !$0.object.isInserted }
        let (stored, token) = try store.database.read { db -> (Set<ObjectID>, Int64) in
            var ids = Set<ObjectID>()
            for (entityName, entityIDs) in Dictionary(grouping: saved.map(\.id), by: \.entityName) {
                guard let entity = model.entity(named: entityName) else { continue }
                try Self.forEachRow(of: entity, keys: entityIDs.compactMap(\.primaryKey), columns: "1", in: db) { row in
                    ids.insert(ObjectID(entityName: entityName, primaryKey: row[0]))
                }
            }
            return (ids, try PersistentStore.currentToken(db))
        }
        var changes = ObjectChanges(invalidatedAllObjects: true)
        for (id, object) in saved {
            if stored.contains(id) {
                changes.updated[id] = Set(Schema.columns(of: object.entity, in: model).map(\.name))
            } else {
                changes.deleted.insert(id)
            }
        }
        return (changes, token)
    }
}

/// How a context read the history of changes made elsewhere, counted for tests.
package struct HistoryReads {
    /// Stretches read on the context's queue.
    package var onQueue = 0
    /// Stretches read ahead on a reader (``PersistentStore/readHistoryAhead(since:through:)``).
    package var readAhead = 0
}

/// How far a context has taken the store's changes, and who asked it to follow every commit
/// (read and written on its queue).
struct StoreFollowing {
    /// The history token the context took changes up to.
    var token: Int64 = 0
    /// The store file's generation the token belongs to (``StoreChangeFeed/generation``).
    var generation = 0
    /// The fallback intervals of the ``ObjectContext/followStore(interval:)`` calls in force.
    var intervals: [UUID: DispatchTimeInterval] = [:]
    /// How many ``ObjectContext/holdStoreChanges()`` are in force: while any, nothing is taken in.
    var holds = 0
    /// A stretch of history read on a reader, waiting for the holds to end.
    var readAhead: HistoryReadAhead?
    /// The token the last read ahead started from.
    var readAheadFrom: Int64?
}
