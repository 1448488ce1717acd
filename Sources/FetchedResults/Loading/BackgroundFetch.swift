import Foundation
import ObjectStore
import Synchronization

extension FetchedResultsController {
    /// Replaces the request and fetches its results **off the context's queue** (a reader of
    /// the store, beside the writer), so that typing a search or picking another sort on a
    /// long list never stalls the window; when the results are ready the list takes them, on
    /// the context's queue, as one batch to the delegate.
    ///
    /// A newer call, ``setFetchRequest(_:)`` or ``performFetch()`` supersedes a call still
    /// fetching: its results are never shown and its `completion` is not called. `completion`
    /// runs on the context's queue once the list shows the new results (with nil), or with
    /// the error that stopped the fetch.
    ///
    /// The batch: when only which objects match changed (a search, a predicate: the order of
    /// those that stay is the same), their deletes and inserts, computed in one pass over the
    /// rows. When the order changed (another sort), the moves of a difference, or, on a list
    /// longer than ``reloadThreshold`` with a delegate that takes whole batches (or
    /// snapshots), a reload (``ChangeBatch/reloadedSections``).
    ///
    /// The results are the store's saved data: with unsaved changes in the context (which a
    /// fetch must include), or sections from their own entity, the fetch happens at once, as
    /// ``setFetchRequest(_:)`` does.
    public func setFetchRequest(_ request: FetchRequest<Result>, completion: @escaping (Error?) -> Void) {
        guard hasFetched, sectionFetchRequest == nil, !managedObjectContext.hasChanges else {
            return setAtOnce(request, completion: completion)
        }
        fetchInBackground(request, cacheDependencies: nil, completion: completion)
    }

    /// Fetches the results **off the context's queue**, so that a window on a long list shows
    /// at once rather than after the fetch: from the section cache when it is valid (a read of
    /// the cache file, on the queue), else the controller starts with no sections
    /// (``isLoading``), and once the results are fetched the list takes them, on the context's
    /// queue, as one batch to the delegate (a reload, ``ChangeBatch/reloadedSections``, on a
    /// list longer than ``reloadThreshold``); then the cache is written, off the queue.
    ///
    /// Changes the context makes meanwhile (an edit, another context's save merged) are held
    /// and placed on the fetched results, in a batch of their own, right after them: none is
    /// lost, whether the fetch read the store before or after they were saved.
    ///
    /// `completion` runs on the context's queue, never before this returns: once the results
    /// show (with nil), also when a newer request (``setFetchRequest(_:completion:)``)
    /// superseded this fetch and showed its own, or with the error that stopped the fetch.
    /// With unsaved changes in the context, or sections from their own entity, the fetch
    /// happens at once, as ``performFetch()`` does.
    public func performFetch(completion: @escaping (Error?) -> Void) {
        let context = managedObjectContext
        let waiting = Unchecked(completion)
        let finish = { (error: Error?) in context.perform { waiting.value(error) } }
        guard sectionFetchRequest == nil, !context.hasChanges else {
            do {
                try performFetch()
                return finish(nil)
            } catch {
                return finish(error)
            }
        }
        let request = fetchRequest
        do {
            try validate(request)
        } catch {
            return finish(error)
        }
        let dependencies = cacheName == nil ? nil
            : SectionCache.dependencies(request: request, sectionNameKeyPath: sectionNameKeyPath, context: context)
        guard !hasFetched || isLoading else {
            // Shown already: fetched again as a new request is, one batch from what shows.
            return fetchInBackground(request, cacheDependencies: dependencies, completion: finish)
        }
        if !hasFetched, let cacheName, let dependencies,
           let cached: [Section] = SectionCache.read(name: cacheName, dependencies: dependencies) {
            backgroundFetches.next()
            layout = cached
            run(machine.fetchedAtOnce())
            updateObservation()
            return finish(nil)
        }
        if !hasFetched { layout = [] }
        // Told when the first results show, whichever request's they are.
        machine.loadingStarted(finish)
        updateObservation()
        fetchInBackground(request, cacheDependencies: dependencies, completion: { _ in })
    }

    /// Fetches `request` on a reader of the store and shows its results on the context's
    /// queue as one batch (see ``setFetchRequest(_:completion:)``). With `cacheDependencies`
    /// (computed before the fetch, so that a commit meanwhile makes the cache look stale,
    /// never fresh), the results are written to the section cache once shown.
    private func fetchInBackground(_ request: FetchRequest<Result>, cacheDependencies: String?, completion: @escaping (Error?) -> Void) {
        let generations = backgroundFetches
        let generation = generations.next()
        let query: RowKeysQuery
        let split: SplitRowKeysQuery?
        do {
            try validate(request)
            query = try managedObjectContext.rowKeysQuery(request, sectionNameKeyPath: sectionNameKeyPath)
            split = try sectionNameKeyPath.flatMap { keyPath in
                try Self.splitBoundary(of: layout, minimumRows: policy.splitFetchThreshold).flatMap {
                    try managedObjectContext.splitRowKeysQuery(request, sectionNameKeyPath: keyPath, at: $0)
                }
            }
        } catch {
            run(machine.fetchedInBackground(error: error))
            return completion(error)
        }
        if split != nil { counts.splitFetches += 1 }
        let old = layout
        let sameOrder = request.sortDescriptors == fetchRequest.sortDescriptors
        let mayReload = delegate == nil || changeReporting == .batches || changeReporting == .snapshot
        let reloadThreshold = policy.reloadThreshold
        let entityName = entityName
        let superseded = { @Sendable in generations.current != generation }
        let work = Unchecked((controller: self, request: request, old: old, completion: completion))
        // A newer request cancels the task (`RequestGenerations.next()`): GRDB interrupts
        // its statements, so a superseded search stops taking the cores from the next one.
        let task = Task.detached(priority: .userInitiated) {
            let found: Found
            do {
                let rows: SectionedRowKeys
                if let split { rows = try await split.run(orElse: query) } else { rows = try await query.run() }
                guard !superseded() else { return }
                // Named, not `Self`: the region checker cannot follow `Self` in the task.
                found = FetchedResultsController<Result>.found(
                    rows, replacing: work.value.old, sameOrder: sameOrder, reloadingBeyond: mayReload ? reloadThreshold : nil,
                    entityName: entityName, cacheDependencies: cacheDependencies)
            } catch {
                if Task.isCancelled { generations.noteInterrupted() }
                found = Found(layout: nil, batch: nil, error: error, cacheDependencies: nil)
            }
            // Superseded (and so cancelled, its error an interruption): nothing to show.
            guard !superseded() else { return }
            work.value.controller.managedObjectContext.perform {
                guard !superseded() else { return }
                work.value.controller.show(found, for: work.value.request, replacing: work.value.old, completion: work.value.completion)
            }
        }
        generations.attach(task, to: generation)
    }

    /// The sections of the fetched `rows` and the batch to them from `old`: by membership
    /// when the order is the same, else a reload beyond `limit` changes, else the difference.
    private static func found(_ rows: SectionedRowKeys, replacing old: [Section], sameOrder: Bool, reloadingBeyond limit: Int?,
                              entityName: String, cacheDependencies: String?) -> Found {
        let new = sections(of: rows)
        let batch: ChangeBatch
        if let limit, old.isEmpty, rows.rowKeys.count > limit {
            // The first rows (a million): nothing to compare with.
            batch = .reload(reloaded(new, entityName: entityName))
        } else if sameOrder, let membership = membershipBatch(from: old, to: new, entityName: entityName, reloadingBeyond: limit) {
            batch = membership
        } else if let limit, max(old.reduce(0) { $0 + $1.keys.count }, rows.rowKeys.count) > limit {
            batch = .reload(reloaded(new, entityName: entityName))
        } else {
            batch = ChangeBatch.difference(from: snapshot(of: old, entityName: entityName), to: snapshot(of: new, entityName: entityName))
        }
        return Found(layout: new, batch: batch, error: nil, cacheDependencies: cacheDependencies)
    }

    /// Where to split a long list's fetch in two, to run the halves at once: the name of the
    /// section that starts nearest the middle of `layout` (the list now; the new request's
    /// rows are likely spread alike). Nil on one core, for a list of fewer than `minimumRows`
    /// rows, or when that section has no name.
    static func splitBoundary(of layout: [Section], minimumRows: Int) -> String? {
        let total = layout.reduce(0) { $0 + $1.keys.count }
        guard ProcessInfo.processInfo.activeProcessorCount >= 2, total >= minimumRows, layout.count >= 2 else { return nil }
        var start = 0, best: (distance: Int, name: String)?
        for (s, section) in layout.enumerated() {
            if s > 0, abs(start - total / 2) < best?.distance ?? .max { best = (abs(start - total / 2), section.name) }
            start += section.keys.count
        }
        return best.flatMap { $0.name.isEmpty ? nil : $0.name }
    }

    /// What a background fetch found: the new sections and the batch to them, or an error.
    struct Found: @unchecked Sendable {
        var layout: [Section]?
        var batch: ChangeBatch?
        var error: Error?
        /// What the section cache to write depends on; nil for no cache.
        var cacheDependencies: String?
    }

    /// Shows what a background fetch found, on the context's queue. When the list changed
    /// under the fetch (a save), the batch no longer fits: the request is fetched at once.
    /// While the first results are fetched, changes are held (``isLoading``), so the list is
    /// the one the fetch started from; the changes held are placed once the results show.
    private func show(_ found: Found, for request: FetchRequest<Result>, replacing old: [Section], completion: (Error?) -> Void) {
        if let error = found.error {
            run(machine.fetchedInBackground(error: error))
            return completion(error)
        }
        guard let new = found.layout, let batch = found.batch, layout == old else {
            return setAtOnce(request, completion: completion)
        }
        fetchRequest = request
        layout = new
        deliver(batch, from: old)
        run(machine.fetchedInBackground(error: nil))
        if let cacheName, let dependencies = found.cacheDependencies {
            let sections = Unchecked(new)
            DispatchQueue.global(qos: .utility).async {
                SectionCache.write(sections.value, name: cacheName, dependencies: dependencies)
            }
        }
        completion(nil)
    }

    /// ``setFetchRequest(_:)``, its outcome told to `completion`.
    private func setAtOnce(_ request: FetchRequest<Result>, completion: (Error?) -> Void) {
        do {
            try setFetchRequest(request)
            completion(nil)
        } catch {
            completion(error)
        }
    }

    /// The sections of fetched row keys.
    static func sections(of rows: SectionedRowKeys) -> [Section] {
        var sections: [Section] = []
        sections.reserveCapacity(rows.sections.count)
        var start = 0
        for run in rows.sections {
            sections.append(Section(name: run.name, keys: Array(rows.rowKeys[start..<start + run.count])))
            start += run.count
        }
        return sections
    }

    /// The batch from `old` to `new` when the objects on both sides are in the same order
    /// (same sort): those on one side only are deleted or inserted, sections that empty or
    /// fill likewise; one pass over the rows, a bitmap look-up for each. Nil when that does
    /// not hold (the data changed too: an object on both sides changed section or place).
    /// With `limit`, more changes than that make a reload instead (one emission, not
    /// hundreds of thousands of rows announced one by one).
    static func membershipBatch(from old: [Section], to new: [Section], entityName: String, reloadingBeyond limit: Int?) -> ChangeBatch? {
        let oldKeys = KeyMembership(keysOf: old.map(\.keys)), newKeys = KeyMembership(keysOf: new.map(\.keys))
        // The objects on both sides: the same sequence, section by section.
        let newIndex = Dictionary(new.enumerated().map { ($1.name, $0) }) { a, _ in a }
        var stayingBefore: [[Int64]] = Array(repeating: [], count: new.count)
        for section in old {
            let staying = section.keys.filter(newKeys.contains)
            guard !staying.isEmpty else { continue }
            guard let s = newIndex[section.name] else { return nil }
            stayingBefore[s] = staying
        }
        var changes = 0
        for (s, section) in new.enumerated() {
            let staying = section.keys.lazy.filter(oldKeys.contains)
            guard staying.elementsEqual(stayingBefore[s]) else { return nil }
            changes += section.keys.count - stayingBefore[s].count
        }
        changes += old.reduce(0) { $0 + $1.keys.count } - stayingBefore.reduce(0) { $0 + $1.count }
        if let limit, changes > limit { return .reload(reloaded(new, entityName: entityName)) }
        let id = { (key: Int64) in ObjectID(entityName: entityName, rowKey: key) }
        var batch = ChangeBatch(sectionChanges: ChangeBatch.sectionChanges(
            from: old.map { SectionSnapshot(name: $0.name, objectIDs: []) }, to: new.map { SectionSnapshot(name: $0.name, objectIDs: []) }))
        var deletes: [ObjectChange] = [], inserts: [ObjectChange] = []
        for (s, section) in old.enumerated() {
            for (i, key) in section.keys.enumerated() where !newKeys.contains(key) {
                deletes.append(ObjectChange(type: .delete, objectID: id(key), indexPath: IndexPath(item: i, section: s), newIndexPath: nil))
            }
        }
        for (s, section) in new.enumerated() {
            for (i, key) in section.keys.enumerated() where !oldKeys.contains(key) {
                inserts.append(ObjectChange(type: .insert, objectID: id(key), indexPath: nil, newIndexPath: IndexPath(item: i, section: s)))
            }
        }
        batch.objectChanges = deletes + inserts
        return batch
    }
}

extension ObjectChanges {
    /// Adds `other`'s changes, which came after these.
    mutating func formUnion(_ other: ObjectChanges) {
        inserted.formUnion(other.inserted)
        deleted.formUnion(other.deleted)
        updated.merge(other.updated) { $0.union($1) }
        invalidatedAllObjects = invalidatedAllObjects || other.invalidatedAllObjects
    }

    /// The changes with the objects saved since named by their permanent IDs (a change held
    /// while the results were fetched may name an object by the temporary ID it had then).
    func namingSavedObjects(in context: ObjectContext) -> ObjectChanges {
        let named = { (id: ObjectID) in id.isTemporaryID ? (try? context.object(with: id))?.objectID ?? id : id }
        return ObjectChanges(inserted: Set(inserted.map(named)),
                             updated: Dictionary(updated.map { (named($0.key), $0.value) }) { $0.union($1) },
                             deleted: Set(deleted.map(named)), invalidatedAllObjects: invalidatedAllObjects)
    }
}

/// Counts the requests a controller was given, across threads, and cancels the background
/// fetch of the request a newer one supersedes.
final class RequestGenerations: Sendable {
    private let state = Mutex((count: 0, fetch: Task<Void, Never>?.none, interrupted: 0))
    /// A new request: its number. The fetch of the one before is cancelled.
    @discardableResult
    func next() -> Int {
        let (count, superseded) = state.withLock { state in
            state.count += 1
            defer { state.fetch = nil }
            return (state.count, state.fetch)
        }
        superseded?.cancel()
        return count
    }
    var current: Int { state.withLock { $0.count } }
    /// How many fetches a newer request stopped before they ended (for tests).
    var interrupted: Int { state.withLock { $0.interrupted } }
    func noteInterrupted() { state.withLock { $0.interrupted += 1 } }

    /// `fetch` fetches request `generation`: cancelled when a newer request comes (at once
    /// if one came already).
    func attach(_ fetch: Task<Void, Never>, to generation: Int) {
        let isCurrent = state.withLock { state in
            guard state.count == generation else { return false }
            state.fetch = fetch
            return true
        }
        if !isCurrent { fetch.cancel() }
    }
}

/// A value carried to another thread and back to the queue it belongs to, unused between.
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
