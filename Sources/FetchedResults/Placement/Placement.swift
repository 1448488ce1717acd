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
    /// (``BatchPolicy/backgroundThreshold``); the changes that come meanwhile are
    /// held by the state machine.
    struct Placing {
        var changes: ObjectChanges
        var placement: Placement
        /// The list with the changed objects taken out and the sections they enter made.
        var prepared: [Section]
        var sectionNames: [String]
    }
}

/// Where a way of placing left the changed objects.
enum PlacementResult {
    /// Each member's index in its section and its gap (its place among the objects that did
    /// not change), the members in `layout`.
    case placed(items: [Int64: Int], gaps: [Int64: Int])
    /// The searches run in the background: the list takes them on a later turn, and the
    /// state machine holds the changes that come meanwhile.
    case continuesInBackground
    /// This way cannot place them (a sort key across a relationship, a probed row changed
    /// under the searches), `layout` as it was: they are placed one by one.
    case needsOneByOne
}

/// A way of putting the changed objects that belong to the results in their places: step 4
/// of a placement, between taking them out of the list and finishing the batch
/// (`PlacingInMemory.swift`). ``BatchPolicy/placement(memberCount:mayRunInBackground:)``
/// chooses one by how many objects changed and whether they were saved elsewhere; each way is
/// one type, in a file of its own:
/// - ``PlacingOneByOne``: a binary search each (`PlacingInMemory.swift`);
/// - ``PlacingTogether``: all the searches in step, each section merged in one pass
///   (`PlacingTogether.swift`);
/// - ``PlacingInBackground``: the same searches on a reader of the store, off the context's
///   queue (`PlacingInBackground.swift`).
///
/// Every way gives the same places; the policy only picks the fastest.
protocol PlacementWay {
    /// Places `placement`'s members in `controller`'s layout; `changes` are the changes being
    /// placed when they may be placed in the background (merged from elsewhere, a long list).
    func place<Result>(_ placement: FetchedResultsController<Result>.Placement, in controller: FetchedResultsController<Result>,
                       context: ObjectContext, changes: ObjectChanges?) -> PlacementResult
}

extension BatchPolicy.Placement {
    /// The type that places this way.
    var way: any PlacementWay {
        switch self {
        case .oneByOne: PlacingOneByOne()
        case .together: PlacingTogether()
        case .togetherInBackground: PlacingInBackground()
        }
    }
}
