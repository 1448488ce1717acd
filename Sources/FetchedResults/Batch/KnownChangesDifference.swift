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
    /// stays (an update) or moves by the one classification every batch gets
    /// (``ChangeBatch/objectChanges(from:to:sameSection:isUpdated:objectID:)``), with the
    /// unchanged objects as anchors, so a bulk save names the same moves a small one would,
    /// where the general difference, which knows no changed objects, can name an unchanged
    /// neighbour as moved.
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
        // Their inserts, deletes, moves and renames as the general difference finds them:
        // a result has few sections.
        let sectionsOnly = { (sections: [Section]) in
            sections.map { SectionSnapshot(name: $0.name, objectIDs: [], sectionObjectID: $0.sectionObjectKey.map { ObjectID(entityName: self.sectionEntityName!, rowKey: $0) }) }
        }
        var batch = ChangeBatch(sectionChanges: ChangeBatch.sectionChanges(from: sectionsOnly(old), to: sectionsOnly(new)))
        var sides = KnownChangeSides(old: old, new: new, oldIDs: old.map(identity), newIDs: new.map(identity),
                                     changedKeys: changedKeys, capacity: changedKeySet.count)
        // Unchanged objects on one side only: those a limit or offset moved out of or into the window.
        if fetchRequest.fetchLimit > 0 || fetchRequest.fetchOffset > 0 {
            let before = Set(old.lazy.flatMap(\.keys).filter { !changedKeys.contains($0) })
            let after = Set(new.lazy.flatMap(\.keys).filter { !changedKeys.contains($0) })
            sides.leaving = before.subtracting(after)
            sides.entering = after.subtracting(before)
        }
        sides.placeBefore()
        guard sides.placeAfter() else { return nil }
        let (oldIDs, newIDs) = (sides.oldIDs, sides.newIDs)
        batch.objectChanges = ChangeBatch.objectChanges(
            from: sides.oldPlaces, to: sides.newPlaces, sameSection: { oldIDs[$0] == newIDs[$1] },
            isUpdated: { _ in true }, objectID: { ObjectID(entityName: self.entityName, rowKey: $0) })
        return batch
    }
}

/// The objects a batch of known changes classifies, where they were and are: the changed
/// ones, with their place among the unchanged objects that stay, and the unchanged ones that
/// leave or enter (a limit's window, a section that goes or comes). The unchanged objects
/// that stay are left out: they stay. The loops run once per row: a bitmap look-up for most
/// (no hashing, no index paths made).
private struct KnownChangeSides<Section: FetchedResultsControllerLayoutSection> {
    let old: [Section], new: [Section]
    let oldIDs: [String], newIDs: [String]
    let changedKeys: KeyMembership
    var leaving = Set<Int64>(), entering = Set<Int64>()
    var oldPlaces: ObjectPlacements<Int64>
    var newPlaces: ObjectPlacements<Int64>
    /// Unchanged objects of a section that goes (its section object was deleted or left the
    /// section request): they go with it.
    var goneWithSection = Set<Int64>()

    init(old: [Section], new: [Section], oldIDs: [String], newIDs: [String], changedKeys: KeyMembership, capacity: Int) {
        (self.old, self.new, self.oldIDs, self.newIDs, self.changedKeys) = (old, new, oldIDs, newIDs, changedKeys)
        oldPlaces = ObjectPlacements(capacity: capacity)
        newPlaces = ObjectPlacements(capacity: capacity)
    }

    mutating func placeBefore() {
        let newIndexByID = Dictionary(newIDs.enumerated().map { ($1, $0) }) { a, _ in a }
        for (s, section) in old.enumerated() {
            let kept = newIndexByID[oldIDs[s]] != nil
            var staying = 0
            for (i, key) in section.keys.enumerated() {
                if changedKeys.contains(key) {
                    oldPlaces.append(key, at: IndexPath(item: i, section: s), gap: staying)
                } else if !kept || (!leaving.isEmpty && leaving.contains(key)) {
                    if !kept { goneWithSection.insert(key) }
                    oldPlaces.append(key, at: IndexPath(item: i, section: s))
                } else {
                    staying += 1
                }
            }
        }
    }

    /// False when the unchanged objects that stay are not the same sequence on both sides:
    /// not what the changes say.
    mutating func placeAfter() -> Bool {
        let oldIndexByID = Dictionary(oldIDs.enumerated().map { ($1, $0) }) { a, _ in a }
        let (changedKeys, leaving) = (self.changedKeys, self.leaving)
        let skipped = { (key: Int64) in changedKeys.contains(key) || (!leaving.isEmpty && leaving.contains(key)) }
        for (s, section) in new.enumerated() {
            let oldIndex = oldIndexByID[newIDs[s]]
            let before = oldIndex.map { old[$0].keys } ?? []
            var next = 0   // in `before`
            var staying = 0
            for (i, key) in section.keys.enumerated() {
                if changedKeys.contains(key) {
                    newPlaces.append(key, at: IndexPath(item: i, section: s), gap: staying)
                } else if (!entering.isEmpty && entering.contains(key)) || (oldIndex == nil && !goneWithSection.contains(key)) {
                    // Entering the window, or coming with a new section (one whose object
                    // came in); an object of a section that went is on both sides: not
                    // what the changes say.
                    newPlaces.append(key, at: IndexPath(item: i, section: s))
                } else {
                    while next < before.count && skipped(before[next]) { next += 1 }
                    guard next < before.count, before[next] == key else { return false }
                    next += 1
                    staying += 1
                }
            }
            while next < before.count && skipped(before[next]) { next += 1 }
            if next < before.count { return false }
        }
        return true
    }
}

/// Membership in a set of row keys, asked once or twice per row of a result: a bitmap over
/// the keys' range when that is small (an import's chunk: consecutive new keys), else the
/// set. Hashing every row key of a 100,000-row result took about 10 ms per chunk of an
/// import, on the main thread; the bitmap a tenth of that.
struct KeyMembership {
    private let set: Set<Int64>
    private let low: Int64, high: Int64
    private let bits: [UInt64]

    /// Membership in the keys of `sections`, which are unique: a bitmap without hashing any
    /// key when their range is small (SQLite's row IDs), else a set.
    init(keysOf sections: [[Int64]]) {
        self.init(keysOf: sections, set: nil)
    }

    init(_ set: Set<Int64>) {
        self.init(keysOf: [Array(set)], set: set)
    }

    /// The bitmap over the keys' range when it is small, else `set` (made from the keys
    /// when not given).
    private init(keysOf sections: [[Int64]], set given: Set<Int64>?) {
        var low = Int64.max, high = Int64.min, count = 0
        for keys in sections {
            count += keys.count
            for key in keys {
                low = min(low, key)
                high = max(high, key)
            }
        }
        guard count > 0, case let (range, overflow) = high.subtractingReportingOverflow(low), !overflow,
              range < max(1 << 20, Int64(count) * 64) else {
            (set, self.low, self.high, bits) = (given ?? Set(sections.joined()), 0, 0, [])
            return
        }
        var bits = [UInt64](repeating: 0, count: Int((high - low) >> 6) + 1)
        for keys in sections {
            for key in keys {
                let offset = key - low
                bits[Int(offset >> 6)] |= 1 << UInt64(offset & 63)
            }
        }
        (set, self.low, self.high, self.bits) = ([], low, high, bits)
    }

    @inline(__always)
    func contains(_ key: Int64) -> Bool {
        guard !bits.isEmpty else { return set.contains(key) }
        guard key >= low && key <= high else { return false }
        let offset = key - low
        return bits[Int(offset >> 6)] & (1 << UInt64(offset & 63)) != 0
    }
}

