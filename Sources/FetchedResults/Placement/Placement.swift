import Foundation
import ObjectStore

extension FetchedResultsController {
    struct Location {
        var section: Int
        var item: Int
    }

    /// A changed object that belongs to the results, with its section's name and, when
    /// many are placed, its sort values.
    struct Member {
        var key: Int64
        var object: ManagedObject
        var section: String
        var values: SortValues? = nil
    }

    /// The changed objects that belong to the results now (not deleted, the predicate
    /// evaluated in memory), their values read in one query, with their sections' names.
    func members(of changed: [Int64: Set<String>?], deleted: Set<Int64>, context: ObjectContext) -> [Member] {
        let candidates = changed.keys.filter { !deleted.contains($0) }.compactMap { key in
            (try? context.object(with: ObjectID(entityName: entityName, rowKey: key))).map { (key: key, object: $0) }
        }
        try? context.fulfillFaults(candidates.map(\.object))
        let sectionName = sectionNameKeyPath.map { context.sectionNamer(forKeyPath: $0, entityName: entityName) }
        return candidates.compactMap { key, object in
            guard object.managedObjectContext != nil, !object.isDeleted,
                  fetchRequest.predicate?.evaluate(with: object) ?? true else { return nil }
            return Member(key: key, object: object, section: sectionName?(object) ?? "")
        }
    }

    /// Steps 1–3 of a placement: the list less the changed objects (`layout` now), and what
    /// the batch needs of where they were.
    struct Placement {
        var oldLayout: [Section]
        var oldLocations: [Int64: Location] = [:]
        /// Each changed object's place among the unchanged objects of its old section.
        var oldGaps: [Int64: Int] = [:]
        /// The changed objects that belong to the results, in result order.
        var members: [Member] = []
        /// A section whose objects all changed is empty now: its first member stands for it.
        var firstMembers: [String: ManagedObject] = [:]
    }

    /// A placement whose searches run on a reader of the store
    /// (``BatchPolicy/backgroundPlacementThreshold``); the changes that come meanwhile are
    /// held by the state machine.
    struct Placing {
        var changes: ObjectChanges
        var placement: Placement
        /// The list with the changed objects taken out and the sections they enter made.
        var prepared: [Section]
        var sectionNames: [String]
    }
}
