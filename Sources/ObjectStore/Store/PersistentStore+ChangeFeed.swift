import Dispatch
import Synchronization

/// Changes committed to a store's file, as ``PersistentStore/observeChanges(on:_:)`` and
/// ``PersistentStore/committedChanges()`` deliver them.
public struct StoreChanges: Sendable, Hashable {
    /// The objects inserted, updated and deleted since the last delivery, folded per object
    /// as ``PersistentStore/changes(since:)`` folds them. When the history was pruned past
    /// the last delivery, ``ObjectChanges/invalidatedAllObjects`` is set and the objects are
    /// not listed: anything may have changed, so fetch again.
    public var changes: ObjectChanges
    /// The history token after these changes: ``PersistentStore/changes(since:)`` from it
    /// reads what comes next.
    public var token: Int64
}

extension PersistentStore {
    /// Calls `handler` on `queue` with every change committed to the store's file after this
    /// call, whoever committed it (a context of this store, an import, the sharing engine,
    /// another process, the `sqlite3` shell): each change once, in commit order, commits
    /// that come close together in one call. Until the returned token is released or
    /// cancelled.
    ///
    /// Commits are known as they happen, without polling: this process's at commit, other
    /// processes' when the kernel says the file was written (inotify); a look every few
    /// seconds stands in only where the kernel cannot tell (see `Docs/DataFlow.md`). A slow
    /// handler holds up no writer: it is called once more after it returns, with everything
    /// committed meanwhile.
    ///
    /// This is the feed that every context (``ObjectContext/followStore(interval:)``,
    /// ``ObjectContext/automaticallyMergesChangesFromStore``) and the sharing engine follow.
    public func observeChanges(on queue: DispatchQueue = .main, _ handler: @escaping @Sendable (StoreChanges) -> Void) throws -> ObservationToken {
        let start = try currentHistoryToken()
        let cursor = Mutex((token: start, generation: feed.generation))
        let subscription = feed.subscribe(since: start, queue: queue) { [weak self] in
            guard let self else { return }
            // One call at a time for a subscriber, even on a concurrent queue.
            let delivery: StoreChanges? = cursor.withLock { cursor in
                do {
                    let generation = feed.generation
                    if generation != cursor.generation {
                        // The file was replaced by another program: anything may have changed.
                        cursor = (try currentHistoryToken(), generation)
                        return StoreChanges(changes: ObjectChanges(invalidatedAllObjects: true), token: cursor.token)
                    }
                    let (changes, newToken) = try self.changes(since: cursor.token)
                    cursor.token = newToken
                    return changes.isEmpty ? nil : StoreChanges(changes: changes, token: newToken)
                } catch is HistoryGap {
                    guard let current = try? self.currentHistoryToken() else { return nil }
                    cursor.token = current
                    return StoreChanges(changes: ObjectChanges(invalidatedAllObjects: true), token: current)
                } catch {
                    // The store cannot be read right now: the next commit tries again.
                    return nil
                }
            }
            if let delivery { handler(delivery) }
        }
        return ObservationToken { subscription.cancel() }
    }

    /// Every change committed to the store's file after this call, as
    /// ``observeChanges(on:_:)`` delivers them, as an asynchronous sequence that ends when
    /// the task iterating it is cancelled.
    public func committedChanges() throws -> AsyncStream<StoreChanges> {
        let (stream, continuation) = AsyncStream.makeStream(of: StoreChanges.self)
        let token = try observeChanges(on: DispatchQueue(label: "ObjectStore.committedChanges")) { continuation.yield($0) }
        continuation.onTermination = { _ in token.cancel() }
        return stream
    }
}
