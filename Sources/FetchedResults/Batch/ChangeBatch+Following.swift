import Foundation
import ObjectStore

extension ChangeBatch {
    /// Where the object `objectID`, at `indexPath` before the batch, is after it: the new
    /// index path the batch gives it, or, when the batch does not name it, `indexPath` moved
    /// by the changes ahead of it (objects removed and inserted before it in its section,
    /// sections removed, inserted or moved before its own). Nil when the batch deletes it,
    /// replaces the whole list (``reloadedSections``) or does not fit the index path.
    ///
    /// A list that follows one object (its selection) finds it this way without a search.
    package func indexPath(of objectID: ObjectID, from indexPath: IndexPath) -> IndexPath? {
        if reload == nil && sectionChanges.isEmpty { return indexPathInItsSection(of: objectID, from: indexPath) }
        if let change = objectChanges.first(where: { $0.objectID == objectID }) {
            return change.type == .delete ? nil : change.newIndexPath
        }
        var follower = PathFollower(section: indexPath.section, item: indexPath.item)
        do {
            try walk(&follower)
        } catch {
            return nil
        }
        guard follower.isKnown, follower.section >= 0 else { return nil }
        return IndexPath(item: follower.item, section: follower.section)
    }
}

extension ChangeBatch {
    /// ``indexPath(of:from:)`` for a batch that changes no section: one pass over the
    /// changes, with no index of them. A joining desktop's page of 5,000 rows is followed
    /// this way for the selected row (the walk through the batch checks it first, and sorts
    /// and groups every change).
    private func indexPathInItsSection(of objectID: ObjectID, from indexPath: IndexPath) -> IndexPath? {
        let section = indexPath.section
        var removedBefore = 0
        var insertedAt: [Int] = []
        for change in objectChanges {
            if change.objectID.rowKey == objectID.rowKey && change.objectID == objectID {
                return change.type == .delete ? nil : change.newIndexPath
            }
            if change.type == .delete || change.type == .move, let old = change.indexPath,
               old.section == section, old.item < indexPath.item {
                removedBefore += 1
            }
            if change.type == .insert || change.type == .move, let new = change.newIndexPath, new.section == section {
                insertedAt.append(new.item)
            }
        }
        // The objects removed before it leave first; then the arrivals, in new positions,
        // from the first: each at or before it pushes it down a row.
        var item = indexPath.item - removedBefore
        for position in insertedAt.sorted() {
            guard position <= item else { break }
            item += 1
        }
        return IndexPath(item: item, section: section)
    }
}

/// ``ChangeBatch/indexPath(of:from:)``'s steps: one index path carried through the batch.
private struct PathFollower: ChangeBatchSteps {
    /// The path's section (-1 while its section is moved) and item.
    var section: Int
    var item: Int
    /// False once the batch replaced the list.
    var isKnown = true

    mutating func removeObjects(at items: [Int], fromSection section: Int) {
        guard section == self.section else { return }
        item -= items.prefix { $0 < item }.count
    }

    /// Carries the path (true) when its section is the one moved.
    mutating func removeSection(for change: SectionChange) -> Bool {
        guard section >= 0 else { return false }
        if change.index == section {
            section = -1
            return true
        }
        if change.index < section { section -= 1 }
        return false
    }

    mutating func insertSection(_ carriesPath: Bool?, at index: Int, for change: SectionChange) {
        if carriesPath == true {
            section = index
        } else if section >= 0 && index <= section {
            section += 1
        }
    }

    mutating func insertObjects(_ arrivals: [ObjectChange], intoSection section: Int) {
        guard section == self.section else { return }
        for arrival in arrivals where arrival.newIndexPath!.item <= item { item += 1 }
    }

    mutating func update(objects: [ObjectChange], sections: [SectionChange]) {}

    mutating func rename(_ renamed: [ObjectID: ObjectID]) {}

    mutating func reload(_ sections: ReloadedSections) { isKnown = false }
}
