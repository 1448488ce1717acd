import Foundation
import ObjectStore

/// The steps of a ``ChangeBatch`` in the order the table-view batch rules take them, for
/// whatever follows batches: ``ChangeBatch/applied(to:)`` on section snapshots, GtkBinding's
/// list on its items. One walk (``ChangeBatch/walk(_:)``) orders the steps and checks the
/// batch's shape; each follower only carries them out (and checks that they fit its state).
package protocol ChangeBatchSteps {
    /// What a section is to the follower, carried from where a moved section leaves to where
    /// it arrives.
    associatedtype Section

    /// 1. Objects leave section `section` at `items` (old coordinates, ascending); sections
    /// are visited last first.
    mutating func removeObjects(at items: [Int], fromSection section: Int) throws
    /// 2. A deleted (empty by now) or moved section leaves at `change.index` (old
    /// coordinates); visited last first. Returns what a move carries to its new index.
    mutating func removeSection(for change: SectionChange) throws -> Section
    /// 3. A section arrives at `index` (new coordinates), first first: `moved`, the content a
    /// move carried (to be renamed `change.name`), or nil for an inserted, empty section.
    mutating func insertSection(_ moved: Section?, at index: Int, for change: SectionChange) throws
    /// 4. Objects (inserted or moved) arrive in section `section` at their new items,
    /// ascending; sections are visited first first.
    mutating func insertObjects(_ arrivals: [ObjectChange], intoSection section: Int) throws
    /// 5. Objects updated in place (at their new index paths) and sections renamed in place
    /// (at their new indexes), in no particular order.
    mutating func update(objects: [ObjectChange], sections: [SectionChange]) throws
    /// 6. Objects saved for the first time take their permanent IDs, in place.
    mutating func rename(_ renamed: [ObjectID: ObjectID]) throws
    /// Instead of all the steps above: the whole list is replaced by `sections`.
    mutating func reload(_ sections: ReloadedSections) throws
}

extension ChangeBatch {
    /// Why a batch cannot be applied to some sections.
    public struct InvalidBatch: Error, CustomStringConvertible {
        public var description: String
        package init(_ description: String) { self.description = description }
    }

    /// Takes the batch's steps in the order of the table-view batch rules (see
    /// ``ChangeBatch``), after checking what needs no state: no object in two changes, moves
    /// with a new index path, no two sections or objects placed at one place.
    package func walk<Steps: ChangeBatchSteps>(_ steps: inout Steps) throws {
        if let reload {
            guard sectionChanges.isEmpty && objectChanges.isEmpty && renamedObjectIDs.isEmpty else {
                throw InvalidBatch("a reload carries no other change")
            }
            return try steps.reload(reload)
        }
        var seen = Set<ObjectID>()
        for change in objectChanges where !seen.insert(change.objectID).inserted {
            throw InvalidBatch("\(change.objectID) appears in two changes")
        }
        // 1. Deleted objects and move sources leave, in old coordinates.
        let removals = objectChanges.filter { $0.type == .delete || $0.type == .move }
        for removal in removals where removal.indexPath == nil {
            throw InvalidBatch("\(removal.type) of \(removal.objectID) without an index path")
        }
        for (section, changes) in Dictionary(grouping: removals, by: { $0.indexPath!.section }).sorted(by: { $0.key > $1.key }) {
            try steps.removeObjects(at: changes.map { $0.indexPath!.item }.sorted(), fromSection: section)
        }
        // 2. Deleted and moved sections leave, in old coordinates.
        var moved: [Int: (section: Steps.Section, change: SectionChange)] = [:]
        let leaving = sectionChanges.filter { $0.type == .delete || $0.type == .move }
        if Set(leaving.map(\.index)).count != leaving.count {
            throw InvalidBatch("a section leaves twice")
        }
        for change in leaving.sorted(by: { $0.index > $1.index }) {
            if change.type == .move {
                guard let newIndex = change.newIndex else { throw InvalidBatch("section move without a new index") }
                guard moved[newIndex] == nil else { throw InvalidBatch("two sections moved to index \(newIndex)") }
                moved[newIndex] = (try steps.removeSection(for: change), change)
            } else {
                _ = try steps.removeSection(for: change)
            }
        }
        // 3. Inserted and moved sections arrive, in new coordinates.
        var arriving: [(index: Int, section: Steps.Section?, change: SectionChange)] = moved.map { ($0.key, $0.value.section, $0.value.change) }
        for change in sectionChanges where change.type == .insert { arriving.append((change.index, nil, change)) }
        if Set(arriving.map(\.index)).count != arriving.count {
            throw InvalidBatch("two sections placed at one index")
        }
        for arrival in arriving.sorted(by: { $0.index < $1.index }) {
            try steps.insertSection(arrival.section, at: arrival.index, for: arrival.change)
        }
        // 4. Inserted objects and move destinations arrive, in new coordinates.
        let insertions = objectChanges.filter { $0.type == .insert || $0.type == .move }
        for insertion in insertions where insertion.newIndexPath == nil {
            throw InvalidBatch("\(insertion.type) of \(insertion.objectID) to nil does not fit")
        }
        if Set(insertions.map { $0.newIndexPath! }).count != insertions.count {
            throw InvalidBatch("two objects placed at one index path")
        }
        for (section, changes) in Dictionary(grouping: insertions, by: { $0.newIndexPath!.section }).sorted(by: { $0.key < $1.key }) {
            try steps.insertObjects(changes.sorted { $0.newIndexPath!.item < $1.newIndexPath!.item }, intoSection: section)
        }
        // 5. Updated objects and sections renamed in place.
        try steps.update(objects: objectChanges.filter { $0.type == .update }, sections: sectionChanges.filter { $0.type == .update })
        // 6. First saves.
        if !renamedObjectIDs.isEmpty { try steps.rename(renamedObjectIDs) }
    }
}
