import Foundation
import ObjectStore

extension FetchedResultsController {
    /// The batch from `old` to `new` when only the objects in `changedKeys` can have changed
    /// (a chunk of an import, a bulk edit, any change under a limit or with sections from
    /// their own entity); nil when that is not known (`changedKeys` nil) or does not hold,
    /// for ``ChangeBatch/difference(from:to:updated:)`` to decide.
    ///
    /// The other objects keep their section and their order, so they never move (they travel
    /// with a section that moves): with a limit or offset some enter or leave the window
    /// (inserts and deletes), otherwise they stay untouched. A changed object on both sides
    /// stays (an update) by the rule of the in-memory placement (``stayingKeys(_:)``), so a
    /// bulk save names the same moves a small one would, where the general difference, which
    /// knows no changed objects, can name an unchanged neighbour as moved.
    ///
    /// One pass over the row keys, a bitmap look-up for each (``KeyMembership``), hashing only
    /// the changed ones (and the window's keys with a limit or offset): about 2 ms for 100,000
    /// rows, where the general difference hashes an object ID per row into several
    /// dictionaries (about 100 ms).
    func knownChangesBatch(from old: [Section], to new: [Section], changedKeys: Set<Int64>?) -> ChangeBatch? {
        guard let changedKeySet = changedKeys else { return nil }
        let changedKeys = KeyMembership(changedKeySet)
        // Sections: a section object (sections from their own entity), else the name.
        let identity = { (section: Section) in section.sectionObjectKey.map { "object \($0)" } ?? "name " + section.name }
        let oldIDs = old.map(identity), newIDs = new.map(identity)
        let newIndexByID = Dictionary(newIDs.enumerated().map { ($1, $0) }) { a, _ in a }
        let oldIndexByID = Dictionary(oldIDs.enumerated().map { ($1, $0) }) { a, _ in a }
        // Their inserts, deletes, moves and renames as the general difference finds them:
        // a result has few sections.
        let sectionsOnly = { (sections: [Section]) in
            sections.map { SectionSnapshot(name: $0.name, objectIDs: [], sectionObjectID: $0.sectionObjectKey.map { ObjectID(entityName: self.sectionEntityName!, rowKey: $0) }) }
        }
        var batch = ChangeBatch(sectionChanges: ChangeBatch.difference(from: sectionsOnly(old), to: sectionsOnly(new)).sectionChanges)

        // Unchanged objects on one side only: those a limit or offset moved out of or into the window.
        var leaving = Set<Int64>(), entering = Set<Int64>()
        if fetchRequest.fetchLimit > 0 || fetchRequest.fetchOffset > 0 {
            let before = Set(old.lazy.flatMap(\.keys).filter { !changedKeys.contains($0) })
            let after = Set(new.lazy.flatMap(\.keys).filter { !changedKeys.contains($0) })
            leaving = before.subtracting(after)
            entering = after.subtracting(before)
        }
        // Where each changed object was, with its place among the unchanged objects that stay.
        var oldPlaces: [Int64: Place] = [:], newPlaces: [Int64: Place] = [:]
        var deletes: [ObjectChange] = [], inserts: [ObjectChange] = []
        let id = { (key: Int64) in ObjectID(entityName: self.entityName, rowKey: key) }
        // Unchanged objects of a section that goes (its section object was deleted or left
        // the section request): they go with it.
        var goneWithSection = Set<Int64>()
        // The loops below run once per row: a bitmap look-up for most (no hashing, no
        // index paths made).
        for (s, section) in old.enumerated() {
            let kept = newIndexByID[oldIDs[s]] != nil
            var staying = 0
            for (i, key) in section.keys.enumerated() {
                if changedKeys.contains(key) {
                    oldPlaces[key] = Place(path: IndexPath(item: i, section: s), gap: staying)
                } else if !kept || (!leaving.isEmpty && leaving.contains(key)) {
                    if !kept { goneWithSection.insert(key) }
                    deletes.append(ObjectChange(type: .delete, objectID: id(key), indexPath: IndexPath(item: i, section: s), newIndexPath: nil))
                } else {
                    staying += 1
                }
            }
        }
        for (s, section) in new.enumerated() {
            let oldIndex = oldIndexByID[newIDs[s]]
            // The unchanged objects that stay must be the same sequence on both sides.
            let before = oldIndex.map { old[$0].keys } ?? []
            let skipped = { (key: Int64) in changedKeys.contains(key) || (!leaving.isEmpty && leaving.contains(key)) }
            var next = 0   // in `before`
            var staying = 0
            for (i, key) in section.keys.enumerated() {
                if changedKeys.contains(key) {
                    newPlaces[key] = Place(path: IndexPath(item: i, section: s), gap: staying)
                } else if (!entering.isEmpty && entering.contains(key)) || (oldIndex == nil && !goneWithSection.contains(key)) {
                    // Entering the window, or coming with a new section (one whose object
                    // came in); an object of a section that went is on both sides: not
                    // what the changes say.
                    inserts.append(ObjectChange(type: .insert, objectID: id(key), indexPath: nil, newIndexPath: IndexPath(item: i, section: s)))
                } else {
                    while next < before.count && skipped(before[next]) { next += 1 }
                    guard next < before.count, before[next] == key else { return nil }
                    next += 1
                    staying += 1
                }
            }
            while next < before.count && skipped(before[next]) { next += 1 }
            if next < before.count { return nil }
        }
        let stays = stayingKeys(oldPlaces.sorted { $0.value.path < $1.value.path }.compactMap { key, before in
            guard let after = newPlaces[key], oldIDs[before.path.section] == newIDs[after.path.section],
                  before.gap == after.gap else { return nil }
            return (key, after.path, after.gap)
        })
        var moves: [ObjectChange] = [], updates: [ObjectChange] = []
        for (key, before) in oldPlaces {
            if let after = newPlaces[key] {
                if stays.contains(key) {
                    updates.append(ObjectChange(type: .update, objectID: id(key), indexPath: before.path, newIndexPath: after.path))
                } else {
                    moves.append(ObjectChange(type: .move, objectID: id(key), indexPath: before.path, newIndexPath: after.path))
                }
            } else {
                deletes.append(ObjectChange(type: .delete, objectID: id(key), indexPath: before.path, newIndexPath: nil))
            }
        }
        for (key, after) in newPlaces where oldPlaces[key] == nil {
            inserts.append(ObjectChange(type: .insert, objectID: id(key), indexPath: nil, newIndexPath: after.path))
        }
        let inOrder = { (changes: [ObjectChange], path: KeyPath<ObjectChange, IndexPath?>) in
            changes.sorted { $0[keyPath: path]! < $1[keyPath: path]! }
        }
        batch.objectChanges = inOrder(deletes, \.indexPath) + inOrder(moves, \.indexPath) + inOrder(inserts, \.newIndexPath) + inOrder(updates, \.indexPath)
        return batch
    }
}

/// The changed objects that stay in place (updates, not moves), from those that keep their
/// section and their gap (how many unchanged objects that stay precede them), listed in old
/// order with their new index path: in each section and gap, the longest run that keeps its
/// order. The rule of both the in-memory placement and ``FetchedResultsController/knownChangesBatch(from:to:changedKeys:)``.
func stayingKeys(_ candidates: [(key: Int64, newPath: IndexPath, gap: Int)]) -> Set<Int64> {
    var groups: [IndexPath: [(key: Int64, item: Int)]] = [:]   // (new section, gap) -> in old order
    for candidate in candidates {
        groups[IndexPath(item: candidate.gap, section: candidate.newPath.section), default: []].append((candidate.key, candidate.newPath.item))
    }
    var stays = Set<Int64>()
    for group in groups.values {
        for i in longestIncreasingSubsequence(group.map(\.item)) { stays.insert(group[i].key) }
    }
    return stays
}

/// Where a changed object is: its index path, and how many unchanged objects that stay
/// precede it in its section.
private struct Place {
    var path: IndexPath
    var gap: Int
}

/// Membership in a set of row keys, asked once or twice per row of a result: a bitmap over
/// the keys' range when that is small (an import's chunk: consecutive new keys), else the
/// set. Hashing every row key of a 100,000-row result took about 10 ms per chunk of an
/// import, on the main thread; the bitmap a tenth of that.
struct KeyMembership {
    private let set: Set<Int64>
    private let low: Int64, high: Int64
    private let bits: [UInt64]

    init(_ set: Set<Int64>) {
        self.set = set
        guard let low = set.min(), let high = set.max(), case let (range, overflow) = high.subtractingReportingOverflow(low),
              !overflow, range < max(1 << 20, Int64(set.count) * 64) else {
            (self.low, self.high, bits) = (0, 0, [])
            return
        }
        (self.low, self.high) = (low, high)
        var bits = [UInt64](repeating: 0, count: Int((high - low) >> 6) + 1)
        for key in set {
            let offset = key - low
            bits[Int(offset >> 6)] |= 1 << UInt64(offset & 63)
        }
        self.bits = bits
    }

    @inline(__always)
    func contains(_ key: Int64) -> Bool {
        guard !bits.isEmpty else { return set.contains(key) }
        guard key >= low && key <= high else { return false }
        let offset = key - low
        return bits[Int(offset >> 6)] & (1 << UInt64(offset & 63)) != 0
    }
}

