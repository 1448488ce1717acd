import Foundation
import ObjectStore

extension IndexPath {
    /// The index path of row `item` in section `section`.
    public init(item: Int, section: Int) {
        self.init(indexes: [section, item])
    }

    /// The section index.
    public var section: Int { self[0] }
    /// The row index within the section.
    public var item: Int { self[1] }
}

/// What happened to a section or an object.
public enum ChangeType: String, Sendable, Hashable, Codable {
    case insert, delete, move, update
}

/// A section inserted, deleted, moved, or renamed in place (update).
public struct SectionChange: Sendable, Hashable {
    public var type: ChangeType
    /// The old index for a delete or move, the new index for an insert.
    public var index: Int
    /// The new index of a move or update.
    public var newIndex: Int?
    /// The section's name.
    public var name: String
    /// The section's own object, for a controller with a section fetch request.
    public var sectionObjectID: ObjectID? = nil

    public init(type: ChangeType, index: Int, newIndex: Int? = nil, name: String, sectionObjectID: ObjectID? = nil) {
        self.type = type
        self.index = index
        self.newIndex = newIndex
        self.name = name
        self.sectionObjectID = sectionObjectID
    }
}

/// An object inserted, deleted, moved or updated.
public struct ObjectChange: Sendable, Hashable {
    public var type: ChangeType
    public var objectID: ObjectID
    /// Where the object was, in the old sections (delete, move, update).
    public var indexPath: IndexPath?
    /// Where the object is, in the new sections (insert, move, update).
    public var newIndexPath: IndexPath?

    public init(type: ChangeType, objectID: ObjectID, indexPath: IndexPath?, newIndexPath: IndexPath?) {
        self.type = type
        self.objectID = objectID
        self.indexPath = indexPath
        self.newIndexPath = newIndexPath
    }
}

/// The sections of a result at one moment: names and object IDs.
public struct SectionSnapshot: Sendable, Hashable, CustomStringConvertible {
    public var name: String
    public var objectIDs: [ObjectID]
    /// The section's own object, for a controller with a section fetch request.
    public var sectionObjectID: ObjectID?

    public init(name: String, objectIDs: [ObjectID], sectionObjectID: ObjectID? = nil) {
        self.name = name
        self.objectIDs = objectIDs
        self.sectionObjectID = sectionObjectID
    }

    /// What tells sections apart across changes: the section object, else the name.
    var identity: String { sectionObjectID?.description ?? "name:" + name }

    public var description: String { "\(name)\(sectionObjectID.map { " (\($0))" } ?? ""): \(objectIDs)" }
}

/// Everything one change to the data did to a controller's sections, valid under
/// table-view batch rules.
///
/// The rules, which ``applied(to:)`` follows: object deletes and move sources are removed
/// at their old index paths; then deleted sections (which must be empty by then) and
/// move-source sections are removed at their old indexes; inserted and moved sections are
/// placed at their new indexes; then inserted objects and move destinations are placed at
/// their new index paths. Updates name an object that stays in place (old and new index
/// path). No object appears in two changes; an object whose place did not change is an
/// update, never a move. Last, objects (and section objects) saved for the first time take
/// their permanent IDs in place (``renamedObjectIDs``).
///
/// Every ID a batch names is the one the object has when the batch is delivered: objects
/// inserted and saved before the controller heard of them come with their permanent IDs; an
/// unsaved object that a list already shows under its temporary ID is renamed by a later
/// batch, the one its first save makes.
public struct ChangeBatch: Sendable, Hashable {
    /// Section changes, in delivery order: deletes (by descending old index), moves, updates
    /// (a section object whose name changed in place), inserts (by ascending new index).
    public var sectionChanges: [SectionChange] = []
    /// Object changes, in delivery order: deletes, moves, inserts, updates.
    public var objectChanges: [ObjectChange] = []
    /// The permanent IDs of objects saved for the first time, by the temporary IDs the list
    /// knew them by: the same rows, in the same places, from now on named by the new ID.
    /// Applied after every other change; the changes above use the temporary IDs.
    public var renamedObjectIDs: [ObjectID: ObjectID] = [:]

    public init(sectionChanges: [SectionChange] = [], objectChanges: [ObjectChange] = [],
                renamedObjectIDs: [ObjectID: ObjectID] = [:]) {
        self.sectionChanges = sectionChanges
        self.objectChanges = objectChanges
        self.renamedObjectIDs = renamedObjectIDs
    }

    public var isEmpty: Bool { sectionChanges.isEmpty && objectChanges.isEmpty && renamedObjectIDs.isEmpty }

    /// Why a batch cannot be applied to some sections.
    public struct InvalidBatch: Error, CustomStringConvertible {
        public var description: String
    }

    /// Applies the batch to `old` by the rules above; throws ``InvalidBatch`` when the batch
    /// breaks a rule or does not fit `old`.
    public func applied(to old: [SectionSnapshot]) throws -> [SectionSnapshot] {
        func fail(_ message: String) -> InvalidBatch { InvalidBatch(description: message) }
        var seen = Set<ObjectID>()
        for change in objectChanges where !seen.insert(change.objectID).inserted {
            throw fail("\(change.objectID) appears in two changes")
        }
        func check(_ path: IndexPath?, in sections: [SectionSnapshot], is id: ObjectID, _ what: String) throws {
            guard let path, sections.indices.contains(path.section),
                  sections[path.section].objectIDs.indices.contains(path.item),
                  sections[path.section].objectIDs[path.item] == id else {
                throw fail("\(what) of \(id) at \(path.map { "\($0)" } ?? "nil") does not match")
            }
        }
        // 1. Remove deleted and moved objects, in old coordinates.
        var sections = old
        var removals: [IndexPath] = []
        for change in objectChanges {
            switch change.type {
            case .delete, .move:
                try check(change.indexPath, in: old, is: change.objectID, "\(change.type) source")
                removals.append(change.indexPath!)
            case .update:
                try check(change.indexPath, in: old, is: change.objectID, "update (old)")
            case .insert:
                break
            }
        }
        for path in removals.sorted(by: >) { sections[path.section].objectIDs.remove(at: path.item) }
        // 2. Remove deleted and moved sections, in old coordinates.
        var moved: [Int: SectionSnapshot] = [:]
        var removedSections: [Int] = []
        for change in sectionChanges where change.type == .delete || change.type == .move {
            guard old.indices.contains(change.index), !removedSections.contains(change.index) else {
                throw fail("section \(change.type) at \(change.index) does not fit \(old.count) sections")
            }
            removedSections.append(change.index)
            if change.type == .delete {
                guard sections[change.index].objectIDs.isEmpty else {
                    throw fail("deleted section \(change.index) still has \(sections[change.index].objectIDs)")
                }
            } else {
                guard let newIndex = change.newIndex else { throw fail("section move without a new index") }
                guard moved[newIndex] == nil else { throw fail("two sections moved to index \(newIndex)") }
                moved[newIndex] = sections[change.index]
                moved[newIndex]!.name = change.name
            }
        }
        for index in removedSections.sorted(by: >) { sections.remove(at: index) }
        // 3. Place inserted and moved sections, in new coordinates.
        var placements: [(Int, SectionSnapshot)] = moved.map { ($0.key, $0.value) }
        for change in sectionChanges where change.type == .insert {
            placements.append((change.index, SectionSnapshot(name: change.name, objectIDs: [], sectionObjectID: change.sectionObjectID)))
        }
        if Set(placements.map(\.0)).count != placements.count {
            throw fail("two sections placed at one index")
        }
        for (index, section) in placements.sorted(by: { $0.0 < $1.0 }) {
            guard index <= sections.count else { throw fail("section placed at \(index) past the end (\(sections.count))") }
            sections.insert(section, at: index)
        }
        // 4. Place inserted and moved objects, in new coordinates.
        let insertions = objectChanges.filter { $0.type == .insert || $0.type == .move }
        if Set(insertions.compactMap(\.newIndexPath)).count != insertions.count {
            throw fail("two objects placed at one index path")
        }
        let remaining = Set(sections.flatMap(\.objectIDs))
        for change in insertions where change.type == .insert && remaining.contains(change.objectID) {
            throw fail("\(change.objectID) is inserted but already there")
        }
        for change in insertions.sorted(by: { ($0.newIndexPath ?? []) < ($1.newIndexPath ?? []) }) {
            guard let path = change.newIndexPath, sections.indices.contains(path.section),
                  path.item <= sections[path.section].objectIDs.count else {
                throw fail("\(change.type) of \(change.objectID) to \(change.newIndexPath.map { "\($0)" } ?? "nil") does not fit")
            }
            sections[path.section].objectIDs.insert(change.objectID, at: path.item)
        }
        for change in objectChanges where change.type == .update {
            try check(change.newIndexPath, in: sections, is: change.objectID, "update (new)")
        }
        for change in sectionChanges where change.type == .update {
            guard let newIndex = change.newIndex, sections.indices.contains(newIndex) else {
                throw fail("section update at \(change.newIndex.map(String.init) ?? "nil") does not fit")
            }
            sections[newIndex].name = change.name
        }
        // 5. Rename objects saved for the first time, in place.
        if !renamedObjectIDs.isEmpty {
            for s in sections.indices {
                sections[s].objectIDs = sections[s].objectIDs.map { renamedObjectIDs[$0] ?? $0 }
                if let id = sections[s].sectionObjectID, let renamed = renamedObjectIDs[id] { sections[s].sectionObjectID = renamed }
            }
        }
        return sections
    }

    /// The batch that turns `old` into `new`, sections matched by name and objects by ID.
    /// Objects in `updated` that keep their place are reported as updates.
    public static func difference(from old: [SectionSnapshot], to new: [SectionSnapshot], updated: Set<ObjectID> = []) -> ChangeBatch {
        var batch = ChangeBatch()
        let oldIndex = Dictionary(old.enumerated().map { ($1.identity, $0) }) { a, _ in a }
        let newIndex = Dictionary(new.enumerated().map { ($1.identity, $0) }) { a, _ in a }
        // Sections: the longest run of common sections in the same order stays; others move.
        let common = old.indices.filter { newIndex[old[$0].identity] != nil }
        let staying = Set(longestIncreasingSubsequence(common.map { newIndex[old[$0].identity]! }).map { common[$0] })
        for index in old.indices.reversed() where newIndex[old[index].identity] == nil {
            batch.sectionChanges.append(SectionChange(type: .delete, index: index, name: old[index].name, sectionObjectID: old[index].sectionObjectID))
        }
        for index in common where !staying.contains(index) {
            batch.sectionChanges.append(SectionChange(type: .move, index: index, newIndex: newIndex[old[index].identity]!,
                                                      name: new[newIndex[old[index].identity]!].name, sectionObjectID: old[index].sectionObjectID))
        }
        for index in common where staying.contains(index) && new[newIndex[old[index].identity]!].name != old[index].name {
            batch.sectionChanges.append(SectionChange(type: .update, index: index, newIndex: newIndex[old[index].identity]!,
                                                      name: new[newIndex[old[index].identity]!].name, sectionObjectID: old[index].sectionObjectID))
        }
        for index in new.indices where oldIndex[new[index].identity] == nil {
            batch.sectionChanges.append(SectionChange(type: .insert, index: index, name: new[index].name, sectionObjectID: new[index].sectionObjectID))
        }
        // Objects.
        var oldPaths: [ObjectID: IndexPath] = [:]
        for (s, section) in old.enumerated() {
            for (i, id) in section.objectIDs.enumerated() { oldPaths[id] = IndexPath(item: i, section: s) }
        }
        var newPaths: [ObjectID: IndexPath] = [:]
        for (s, section) in new.enumerated() {
            for (i, id) in section.objectIDs.enumerated() { newPaths[id] = IndexPath(item: i, section: s) }
        }
        var stays = Set<ObjectID>()
        for (s, section) in new.enumerated() {
            guard let o = oldIndex[section.identity] else { continue }
            // Objects of this section before and after, in old order; the longest run that
            // keeps its order stays, the rest move.
            let kept = old[o].objectIDs.filter { newPaths[$0]?.section == s }
            for i in longestIncreasingSubsequence(kept.map { newPaths[$0]!.item }) { stays.insert(kept[i]) }
        }
        var deletes: [ObjectChange] = [], moves: [ObjectChange] = [], inserts: [ObjectChange] = [], updates: [ObjectChange] = []
        for section in old {
            for id in section.objectIDs {
                if let newPath = newPaths[id] {
                    if stays.contains(id) {
                        if updated.contains(id) { updates.append(ObjectChange(type: .update, objectID: id, indexPath: oldPaths[id], newIndexPath: newPath)) }
                    } else {
                        moves.append(ObjectChange(type: .move, objectID: id, indexPath: oldPaths[id], newIndexPath: newPath))
                    }
                } else {
                    deletes.append(ObjectChange(type: .delete, objectID: id, indexPath: oldPaths[id], newIndexPath: nil))
                }
            }
        }
        for section in new {
            for id in section.objectIDs where oldPaths[id] == nil {
                inserts.append(ObjectChange(type: .insert, objectID: id, indexPath: nil, newIndexPath: newPaths[id]))
            }
        }
        batch.objectChanges = deletes + moves + inserts + updates
        return batch
    }
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
