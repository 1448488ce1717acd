import Foundation
import Synchronization
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

    /// The whole list, when the batch replaces it rather than changing it: every old section
    /// and object leaves and these arrive, with no other change in the batch. A controller
    /// sends one when a new fetch request orders the objects anew (another sort) on a list
    /// too long for a batch of moves to be worth its cost; follow it as a reload, keeping
    /// what is selected if it is still there.
    ///
    /// A controller's reload makes these snapshots the first time they are read: a list
    /// that follows the batch by its controller's sections never pays for a million object
    /// IDs.
    public var reloadedSections: [SectionSnapshot]? {
        get { reload?.snapshots }
        set { reload = newValue.map(ReloadedSections.init(snapshots:)) }
    }

    /// The reload's sections by name and row keys (see ``reloadedSections``).
    package var reload: ReloadedSections?

    /// Whether the batch replaces the whole list (``reloadedSections`` is not nil), asked
    /// without making its snapshots.
    package var isReload: Bool { reload != nil }

    public init(sectionChanges: [SectionChange] = [], objectChanges: [ObjectChange] = [],
                renamedObjectIDs: [ObjectID: ObjectID] = [:]) {
        self.sectionChanges = sectionChanges
        self.objectChanges = objectChanges
        self.renamedObjectIDs = renamedObjectIDs
    }

    public var isEmpty: Bool { sectionChanges.isEmpty && objectChanges.isEmpty && renamedObjectIDs.isEmpty && reload == nil }

    /// A batch that replaces the whole list by `sections`.
    public static func reload(_ sections: [SectionSnapshot]) -> ChangeBatch {
        var batch = ChangeBatch()
        batch.reloadedSections = sections
        return batch
    }

    /// A batch that replaces the whole list by `sections`, their snapshots made when read.
    package static func reload(_ sections: ReloadedSections) -> ChangeBatch {
        var batch = ChangeBatch()
        batch.reload = sections
        return batch
    }

    /// Applies the batch to `old` by the rules above; throws ``InvalidBatch`` when the batch
    /// breaks a rule or does not fit `old`.
    public func applied(to old: [SectionSnapshot]) throws -> [SectionSnapshot] {
        if let reloadedSections {
            guard sectionChanges.isEmpty && objectChanges.isEmpty && renamedObjectIDs.isEmpty else {
                throw InvalidBatch("a reload carries no other change")
            }
            return reloadedSections
        }
        // Every object a change names where it was must be there.
        for change in objectChanges where change.type != .insert {
            guard let path = change.indexPath, old.indices.contains(path.section),
                  old[path.section].objectIDs.indices.contains(path.item),
                  old[path.section].objectIDs[path.item] == change.objectID else {
                let what = change.type == .update ? "update (old)" : "\(change.type) source"
                throw InvalidBatch("\(what) of \(change.objectID) at \(change.indexPath.map { "\($0)" } ?? "nil") does not match")
            }
        }
        var steps = SnapshotSteps(sections: old)
        try walk(&steps)
        return steps.sections
    }

    /// The batch that turns `old` into `new`, sections matched by their object, else their
    /// name, and objects by ID. Objects in `updated` that keep their place are reported as
    /// updates. The classification is the one every batch gets: deletes and inserts are the
    /// objects on one side only; of the objects that keep their section, the longest run that
    /// keeps its order stays, the others move.
    public static func difference(from old: [SectionSnapshot], to new: [SectionSnapshot], updated: Set<ObjectID> = []) -> ChangeBatch {
        let placements = { (sections: [SectionSnapshot]) in
            var placements = ObjectPlacements<ObjectID>(capacity: sections.reduce(0) { $0 + $1.objectIDs.count })
            for (s, section) in sections.enumerated() {
                for (i, id) in section.objectIDs.enumerated() { placements.append(id, at: IndexPath(item: i, section: s)) }
            }
            return placements
        }
        let oldIDs = old.map(\.identity), newIDs = new.map(\.identity)
        return ChangeBatch(
            sectionChanges: sectionChanges(from: old, to: new),
            objectChanges: objectChanges(from: placements(old), to: placements(new),
                                         sameSection: { oldIDs[$0] == newIDs[$1] },
                                         isUpdated: updated.contains, objectID: { $0 }))
    }
}

/// ``ChangeBatch/applied(to:)``'s steps: section snapshots, each step checked against them.
private struct SnapshotSteps: ChangeBatchSteps {
    var sections: [SectionSnapshot]

    init(sections: [SectionSnapshot]) { self.sections = sections }

    mutating func reload(_ sections: ReloadedSections) { self.sections = sections.snapshots }

    private func fail(_ message: String) -> ChangeBatch.InvalidBatch { ChangeBatch.InvalidBatch(message) }

    mutating func removeObjects(at items: [Int], fromSection section: Int) throws {
        for item in items.reversed() { sections[section].objectIDs.remove(at: item) }
    }

    mutating func removeSection(for change: SectionChange) throws -> SectionSnapshot {
        guard sections.indices.contains(change.index) else {
            throw fail("section \(change.type) at \(change.index) does not fit \(sections.count) sections")
        }
        if change.type == .delete && !sections[change.index].objectIDs.isEmpty {
            throw fail("deleted section \(change.index) still has \(sections[change.index].objectIDs)")
        }
        return sections.remove(at: change.index)
    }

    mutating func insertSection(_ moved: SectionSnapshot?, at index: Int, for change: SectionChange) throws {
        guard index <= sections.count else { throw fail("section placed at \(index) past the end (\(sections.count))") }
        var section = moved ?? SectionSnapshot(name: change.name, objectIDs: [], sectionObjectID: change.sectionObjectID)
        section.name = change.name
        sections.insert(section, at: index)
    }

    /// The objects left once removals and section moves are done, read at the first arrival.
    private var remaining: Set<ObjectID>?

    mutating func insertObjects(_ arrivals: [ObjectChange], intoSection section: Int) throws {
        if remaining == nil { remaining = Set(sections.flatMap(\.objectIDs)) }
        for change in arrivals {
            if change.type == .insert && remaining!.contains(change.objectID) {
                throw fail("\(change.objectID) is inserted but already there")
            }
            guard let path = change.newIndexPath, sections.indices.contains(path.section), path.item <= sections[path.section].objectIDs.count else {
                throw fail("\(change.type) of \(change.objectID) to \(change.newIndexPath.map { "\($0)" } ?? "nil") does not fit")
            }
            sections[path.section].objectIDs.insert(change.objectID, at: path.item)
        }
    }

    mutating func update(objects: [ObjectChange], sections renamed: [SectionChange]) throws {
        for change in objects {
            guard let path = change.newIndexPath, sections.indices.contains(path.section),
                  sections[path.section].objectIDs.indices.contains(path.item),
                  sections[path.section].objectIDs[path.item] == change.objectID else {
                throw fail("update (new) of \(change.objectID) at \(change.newIndexPath.map { "\($0)" } ?? "nil") does not match")
            }
        }
        for change in renamed {
            guard let newIndex = change.newIndex, sections.indices.contains(newIndex) else {
                throw fail("section update at \(change.newIndex.map(String.init) ?? "nil") does not fit")
            }
            sections[newIndex].name = change.name
        }
    }

    mutating func rename(_ renamed: [ObjectID: ObjectID]) throws {
        for s in sections.indices {
            sections[s].objectIDs = sections[s].objectIDs.map { renamed[$0] ?? $0 }
            if let id = sections[s].sectionObjectID, let permanent = renamed[id] { sections[s].sectionObjectID = permanent }
        }
    }
}

/// The sections a reload (``ChangeBatch/reloadedSections``) brings: names and row keys, and
/// their snapshots, made once, the first time they are read (on any thread).
package final class ReloadedSections: Sendable, Hashable, CustomStringConvertible {
    /// A section by name and row keys.
    package struct Keyed: Sendable, Hashable {
        package var name: String
        package var keys: [Int64]
        /// The section object's row key, for sections from their own entity.
        package var sectionObjectKey: Int64?

        package init(name: String, keys: [Int64], sectionObjectKey: Int64? = nil) {
            self.name = name
            self.keys = keys
            self.sectionObjectKey = sectionObjectKey
        }
    }

    /// The sections, in order; a section's keys are row keys of objects of one entity.
    package let sections: [Keyed]
    private let entityName: String
    private let sectionEntityName: String?
    private let made: Mutex<[SectionSnapshot]?>

    /// Sections of objects of `entityName` (their section objects of `sectionEntityName`).
    package init(_ sections: [Keyed], entityName: String, sectionEntityName: String? = nil) {
        self.sections = sections
        self.entityName = entityName
        self.sectionEntityName = sectionEntityName
        made = Mutex(nil)
    }

    /// Sections given as snapshots (a batch made by hand).
    init(snapshots: [SectionSnapshot]) {
        sections = snapshots.map { Keyed(name: $0.name, keys: $0.objectIDs.map(\.rowKey), sectionObjectKey: $0.sectionObjectID?.rowKey) }
        entityName = ""   // never read: the snapshots are made
        sectionEntityName = nil
        made = Mutex(snapshots)
    }

    /// The sections as snapshots, made the first time they are asked for.
    var snapshots: [SectionSnapshot] {
        made.withLock { made in
            if let made { return made }
            let snapshots = sections.map { section in
                SectionSnapshot(name: section.name, objectIDs: section.keys.map { ObjectID(entityName: entityName, rowKey: $0) },
                                sectionObjectID: section.sectionObjectKey.flatMap { key in
                                    sectionEntityName.map { ObjectID(entityName: $0, rowKey: key) }
                                })
            }
            made = snapshots
            return snapshots
        }
    }

    /// The snapshots (what a printed or dumped batch shows).
    package var description: String { "\(snapshots)" }

    package static func == (a: ReloadedSections, b: ReloadedSections) -> Bool { a === b || a.snapshots == b.snapshots }
    package func hash(into hasher: inout Hasher) { hasher.combine(snapshots) }
}
