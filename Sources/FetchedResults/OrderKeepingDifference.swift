import Foundation
import ObjectStore

extension FetchedResultsController {
    /// The batch from `old` to `new` when it holds only inserts and deletes, every other
    /// object keeping its section and its order (a chunk of an import, a bulk delete), found
    /// in one pass over the row keys; nil otherwise, for
    /// ``ChangeBatch/difference(from:to:updated:)`` to decide.
    ///
    /// The general difference hashes an object ID per row into several dictionaries: about
    /// 100 ms for 100,000 rows, which a window's main loop cannot spare per chunk of an
    /// import. With `changedKeys` (the objects that may have changed: the others are known
    /// to keep their order) this takes a few milliseconds. Sections by key path only
    /// (identified by name).
    func orderKeepingBatch(from old: [Section], to new: [Section], changedKeys: Set<Int64>?) -> ChangeBatch? {
        guard sectionFetchRequest == nil, let changedKeys else { return nil }
        let newIndexByName = Dictionary(new.enumerated().map { ($1.name, $0) }) { a, _ in a }
        let oldIndexByName = Dictionary(old.enumerated().map { ($1.name, $0) }) { a, _ in a }
        // Sections in both keep their order.
        let common = old.indices.compactMap { newIndexByName[old[$0].name] }
        guard common == common.sorted() else { return nil }

        var batch = ChangeBatch()
        var oldPaths: [Int64: IndexPath] = [:], newPaths: [Int64: IndexPath] = [:]
        for (s, section) in old.enumerated() {
            let kept = newIndexByName[section.name] != nil
            if !kept { batch.sectionChanges.append(SectionChange(type: .delete, index: s, name: section.name)) }
            for (i, key) in section.keys.enumerated() {
                if changedKeys.contains(key) {
                    oldPaths[key] = IndexPath(item: i, section: s)
                } else if !kept {
                    return nil  // cannot happen: an unchanged object left its section
                }
            }
        }
        batch.sectionChanges.reverse()  // deletes from the last, as ChangeBatch.difference lists them
        for (s, section) in new.enumerated() {
            let oldIndex = oldIndexByName[section.name]
            if oldIndex == nil { batch.sectionChanges.append(SectionChange(type: .insert, index: s, name: section.name)) }
            // The unchanged objects, in the order of each side, must be the same sequence.
            var unchangedBefore = oldIndex.map { old[$0].keys.lazy.filter { !changedKeys.contains($0) }.makeIterator() }
            for (i, key) in section.keys.enumerated() {
                if changedKeys.contains(key) {
                    guard oldPaths[key] == nil else { return nil }  // changed in place or moved: the general difference decides
                    newPaths[key] = IndexPath(item: i, section: s)
                } else if unchangedBefore?.next() != key {
                    return nil
                }
            }
            if unchangedBefore?.next() != nil { return nil }
        }
        let id = { (key: Int64) in ObjectID(entityName: self.entityName, rowKey: key) }
        batch.objectChanges = oldPaths.sorted { $0.value < $1.value }.map { ObjectChange(type: .delete, objectID: id($0.key), indexPath: $0.value, newIndexPath: nil) }
            + newPaths.sorted { $0.value < $1.value }.map { ObjectChange(type: .insert, objectID: id($0.key), indexPath: nil, newIndexPath: $0.value) }
        return batch
    }
}
