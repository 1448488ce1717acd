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
        let generations = backgroundFetches
        let generation = generations.next()
        guard hasFetched, sectionFetchRequest == nil, !managedObjectContext.hasChanges else {
            return setAtOnce(request, completion: completion)
        }
        let query: RowKeysQuery
        do {
            try validate(request)
            query = try managedObjectContext.rowKeysQuery(request, sectionNameKeyPath: sectionNameKeyPath)
        } catch {
            return completion(error)
        }
        let old = layout
        let sameOrder = request.sortDescriptors == fetchRequest.sortDescriptors
        let mayReload = delegate == nil || changeReporting == .batches || changeReporting == .snapshot
        let reloadThreshold = reloadThreshold
        let entityName = entityName
        let superseded = { @Sendable in generations.current != generation }
        let work = Unchecked((controller: self, completion: completion))
        DispatchQueue.global(qos: .userInitiated).async {
            let found: Found
            do {
                let rows = try query.run()
                guard !superseded() else { return }
                let new = Self.sections(of: rows)
                let batch: ChangeBatch
                if sameOrder, let membership = Self.membershipBatch(from: old, to: new, entityName: entityName,
                                                                    reloadingBeyond: mayReload ? reloadThreshold : nil) {
                    batch = membership
                } else if mayReload && max(old.reduce(0) { $0 + $1.keys.count }, rows.rowKeys.count) > reloadThreshold {
                    batch = .reload(Self.snapshot(of: new, entityName: entityName))
                } else {
                    batch = ChangeBatch.difference(from: Self.snapshot(of: old, entityName: entityName),
                                                   to: Self.snapshot(of: new, entityName: entityName))
                }
                found = Found(layout: new, batch: batch, error: nil)
            } catch {
                found = Found(layout: nil, batch: nil, error: error)
            }
            guard !superseded() else { return }
            work.value.controller.managedObjectContext.perform {
                // Superseded meanwhile: nothing to show.
                guard !superseded() else { return }
                work.value.controller.show(found, for: request, replacing: old, completion: work.value.completion)
            }
        }
    }

    /// What a background fetch found: the new sections and the batch to them, or an error.
    struct Found: @unchecked Sendable {
        var layout: [Section]?
        var batch: ChangeBatch?
        var error: Error?
    }

    /// Shows what a background fetch found, on the context's queue. When the list changed
    /// under the fetch (a save), the batch no longer fits: the request is fetched at once.
    private func show(_ found: Found, for request: FetchRequest<Result>, replacing old: [Section], completion: (Error?) -> Void) {
        if let error = found.error { return completion(error) }
        guard let new = found.layout, let batch = found.batch, layout == old else {
            return setAtOnce(request, completion: completion)
        }
        fetchRequest = request
        layout = new
        deliver(batch, from: old)
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
        if let limit, changes > limit { return .reload(snapshot(of: new, entityName: entityName)) }
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

/// Counts the requests a controller was given, across threads.
final class RequestGenerations: Sendable {
    private let count = Mutex(0)
    /// A new request: its number.
    @discardableResult
    func next() -> Int { count.withLock { $0 += 1; return $0 } }
    var current: Int { count.withLock { $0 } }
}

/// A value carried to another thread and back to the queue it belongs to, unused between.
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
