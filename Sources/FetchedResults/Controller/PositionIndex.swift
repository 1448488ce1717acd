import Foundation

/// Where each row key of a controller's results was last seen, so that `indexPath(for:)`
/// answers without scanning the list.
///
/// Each place is a hint, checked against the list before it is answered: a change usually
/// shifts a place by a row or two (a tap moves one row), so the key is looked for around its
/// hint first; only when it is not there is the whole index made again (one pass over the
/// row keys, about 2 ms for a million). A slot array over the keys' range when they are
/// dense (SQLite's row IDs are), else a dictionary.
struct PositionIndex {
    /// How far from its hint a key is looked for before the index is made again.
    private static let reach = 8

    private var low: Int64 = 0
    private var slots: [Int64] = []          // (section << 32 | item) + 1; 0 for none
    private var places: [Int64: Int64] = [:] // when the keys are sparse or not positive
    private var isBuilt = false
    /// How many times the index was made (tests count them).
    private(set) var builds = 0

    /// The list changed: hints may be off, and keys may have come or gone.
    mutating func listChanged() {
        // Hints stay: they are checked before use. Keys that came have no hint yet.
        if isBuilt { hasNewKeys = true }
    }
    private var hasNewKeys = false

    /// Takes the places a batch gives the objects it moves or inserts, so that a row that
    /// moved far (a tap that passes a thousand ties) is found at once; the others shift by
    /// at most the batch's size, within ``reach`` for a small one.
    mutating func follow(_ batch: ChangeBatch) {
        guard isBuilt, batch.sectionChanges.isEmpty else { return }
        for change in batch.objectChanges where change.type == .move || change.type == .insert {
            guard let path = change.newIndexPath else { continue }
            let key = change.objectID.rowKey, packed = (Int64(path.section) << 32 | Int64(path.item)) + 1
            if slots.isEmpty {
                places[key] = packed - 1
            } else if key >= low, key - low < Int64(slots.count) {
                slots[Int(key - low)] = packed
            } else {
                hasNewKeys = true   // outside the slots: found by the next rebuild
            }
        }
    }

    /// The index path of `key` in `sections`, or nil when it is not there.
    mutating func indexPath<S: Collection>(of key: Int64, in sections: S) -> IndexPath?
    where S.Element == FetchedResultsControllerLayoutSection, S.Index == Int {
        if isBuilt, let found = lookUp(key, in: sections) { return found }
        if isBuilt && !hasNewKeys && hint(for: key) == nil { return nil }   // never in the list
        build(from: sections)
        return lookUp(key, in: sections)
    }

    private func hint(for key: Int64) -> (section: Int, item: Int)? {
        let packed: Int64
        if slots.isEmpty {
            guard let place = places[key] else { return nil }
            packed = place
        } else {
            let offset = key &- low
            guard offset >= 0, offset < Int64(slots.count), slots[Int(offset)] != 0 else { return nil }
            packed = slots[Int(offset)] - 1
        }
        return (Int(packed >> 32), Int(packed & 0xFFFF_FFFF))
    }

    /// The checked place of `key` near its hint.
    private func lookUp<S: Collection>(_ key: Int64, in sections: S) -> IndexPath?
    where S.Element == FetchedResultsControllerLayoutSection, S.Index == Int {
        guard let (section, item) = hint(for: key), sections.indices.contains(section) else { return nil }
        let keys = sections[section].keys
        for distance in 0...Self.reach {
            for candidate in distance == 0 ? [item] : [item - distance, item + distance]
            where keys.indices.contains(candidate) && keys[candidate] == key {
                return IndexPath(item: candidate, section: section)
            }
        }
        return nil
    }

    private mutating func build<S: Collection>(from sections: S)
    where S.Element == FetchedResultsControllerLayoutSection, S.Index == Int {
        var count = 0, minimum = Int64.max, maximum = Int64.min
        for section in sections {
            count += section.keys.count
            for key in section.keys {
                minimum = min(minimum, key)
                maximum = max(maximum, key)
            }
        }
        slots = []
        places = [:]
        if count > 0, minimum > 0, maximum - minimum < Int64(4 * count + 1024) {
            low = minimum
            slots = [Int64](repeating: 0, count: Int(maximum - minimum) + 1)
            for (s, section) in sections.enumerated() {
                for (i, key) in section.keys.enumerated() { slots[Int(key - minimum)] = (Int64(s) << 32 | Int64(i)) + 1 }
            }
        } else {
            places.reserveCapacity(count)
            for (s, section) in sections.enumerated() {
                for (i, key) in section.keys.enumerated() { places[key] = Int64(s) << 32 | Int64(i) }
            }
        }
        isBuilt = true
        hasNewKeys = false
        builds += 1
    }
}

/// What ``PositionIndex`` reads of a section: its row keys in order.
protocol FetchedResultsControllerLayoutSection {
    var keys: [Int64] { get }
}
