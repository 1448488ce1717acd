import Foundation
import ObjectStore

// The one classification of a change: which sections and objects are deleted, moved,
// inserted or updated. Every path that makes a batch (the in-memory placement, the
// difference of a refetch whose changed objects are known, and the general difference) lists
// where objects were and are, and asks these functions which changes that makes, so that the
// same change is named the same way whichever path computed it.

/// Where an object is on one side of a change: its index path, and its gap (how many of the
/// objects that stay unchanged in its section precede it; 0 when every object is classified).
struct Placement {
    var path: IndexPath
    var gap: Int
}

/// The objects of one side of a change that the classification is about, in index-path
/// order (the order ``append(_:at:gap:)`` is called in), with their places.
///
/// Objects left out are unchanged ones that stay: they are the anchors the gaps count.
struct ObjectPlacements<Key: Hashable> {
    private(set) var order: [Key] = []
    private(set) var places: [Key: Placement] = [:]

    init(capacity: Int = 0) {
        order.reserveCapacity(capacity)
        places.reserveCapacity(capacity)
    }

    /// Adds `key` at `path`; keys are added in index-path order.
    mutating func append(_ key: Key, at path: IndexPath, gap: Int = 0) {
        assert(order.last.map { places[$0]!.path < path } ?? true, "placements are appended in index-path order")
        order.append(key)
        places[key] = Placement(path: path, gap: gap)
    }

    subscript(key: Key) -> Placement? { places[key] }
}

extension ChangeBatch {
    /// The object changes from `old` to `new`: an object on the old side only is deleted, on
    /// the new side only inserted; one on both sides stays (an update, when `isUpdated` says
    /// it changed, else nothing) when it keeps its section and its gap and belongs to the
    /// longest run of such objects that keeps its order (``stayingKeys(_:)``); any other moves.
    ///
    /// In delivery order: deletes, moves and updates by old index path, inserts by new.
    static func objectChanges<Key: Hashable>(
        from old: ObjectPlacements<Key>, to new: ObjectPlacements<Key>,
        sameSection: (_ oldSection: Int, _ newSection: Int) -> Bool,
        isUpdated: (Key) -> Bool,
        objectID: (Key) -> ObjectID
    ) -> [ObjectChange] {
        let stays: Set<Key> = stayingKeys(old.order.compactMap { key -> (key: Key, newPath: IndexPath, gap: Int)? in
            guard let before = old[key], let after = new[key], sameSection(before.path.section, after.path.section),
                  before.gap == after.gap else { return nil }
            return (key, after.path, after.gap)
        })
        var deletes: [ObjectChange] = [], moves: [ObjectChange] = [], inserts: [ObjectChange] = [], updates: [ObjectChange] = []
        for key in old.order {
            let before = old[key]!.path
            if let after = new[key]?.path {
                if !stays.contains(key) {
                    moves.append(ObjectChange(type: .move, objectID: objectID(key), indexPath: before, newIndexPath: after))
                } else if isUpdated(key) {
                    updates.append(ObjectChange(type: .update, objectID: objectID(key), indexPath: before, newIndexPath: after))
                }
            } else {
                deletes.append(ObjectChange(type: .delete, objectID: objectID(key), indexPath: before, newIndexPath: nil))
            }
        }
        for key in new.order where old[key] == nil {
            inserts.append(ObjectChange(type: .insert, objectID: objectID(key), indexPath: nil, newIndexPath: new[key]!.path))
        }
        return deletes + moves + inserts + updates
    }

    /// The section changes from `old` to `new`, sections told apart by their object, else
    /// their name: those on one side only are deleted or inserted; of those on both, the
    /// longest run that keeps its order stays (an update when renamed), the others move.
    ///
    /// In delivery order: deletes by descending old index, moves, updates, inserts by
    /// ascending new index.
    static func sectionChanges(from old: [SectionSnapshot], to new: [SectionSnapshot]) -> [SectionChange] {
        var changes: [SectionChange] = []
        let oldIndex = Dictionary(old.enumerated().map { ($1.identity, $0) }) { a, _ in a }
        let newIndex = Dictionary(new.enumerated().map { ($1.identity, $0) }) { a, _ in a }
        let common = old.indices.filter { newIndex[old[$0].identity] != nil }
        let staying = Set(longestIncreasingSubsequence(common.map { newIndex[old[$0].identity]! }).map { common[$0] })
        for index in old.indices.reversed() where newIndex[old[index].identity] == nil {
            changes.append(SectionChange(type: .delete, index: index, name: old[index].name, sectionObjectID: old[index].sectionObjectID))
        }
        for index in common where !staying.contains(index) {
            let to = newIndex[old[index].identity]!
            changes.append(SectionChange(type: .move, index: index, newIndex: to, name: new[to].name, sectionObjectID: old[index].sectionObjectID))
        }
        for index in common where staying.contains(index) && new[newIndex[old[index].identity]!].name != old[index].name {
            let to = newIndex[old[index].identity]!
            changes.append(SectionChange(type: .update, index: index, newIndex: to, name: new[to].name, sectionObjectID: old[index].sectionObjectID))
        }
        for index in new.indices where oldIndex[new[index].identity] == nil {
            changes.append(SectionChange(type: .insert, index: index, name: new[index].name, sectionObjectID: new[index].sectionObjectID))
        }
        return changes
    }
}

/// The objects that stay in place (updates, not moves), from those that keep their section
/// and their gap, listed in old order with their new index path: in each new section and
/// gap, the longest run that keeps its order.
func stayingKeys<Key: Hashable>(_ candidates: [(key: Key, newPath: IndexPath, gap: Int)]) -> Set<Key> {
    var groups: [IndexPath: [(key: Key, item: Int)]] = [:]   // (new section, gap) -> in old order
    for candidate in candidates {
        groups[IndexPath(item: candidate.gap, section: candidate.newPath.section), default: []].append((candidate.key, candidate.newPath.item))
    }
    var stays = Set<Key>()
    for group in groups.values {
        for i in longestIncreasingSubsequence(group.map(\.item)) { stays.insert(group[i].key) }
    }
    return stays
}

/// The indexes (into `values`) of a longest strictly increasing subsequence, in order.
func longestIncreasingSubsequence(_ values: [Int]) -> [Int] {
    var tails: [Int] = []          // index into values of the smallest tail of each length
    var previous = [Int](repeating: -1, count: values.count)
    for (i, value) in values.enumerated() {
        var low = 0, high = tails.count
        while low < high {
            let mid = (low + high) / 2
            if values[tails[mid]] < value { low = mid + 1 } else { high = mid }
        }
        if low > 0 { previous[i] = tails[low - 1] }
        if low == tails.count { tails.append(i) } else { tails[low] = i }
    }
    var result: [Int] = []
    var i = tails.last ?? -1
    while i >= 0 {
        result.append(i)
        i = previous[i]
    }
    return result.reversed()
}
