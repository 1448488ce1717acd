import Foundation
import ObjectStore

extension FetchedResultsController {
    /// Step 4 for many members, before their searches: every section they enter made (making
    /// one moves the indexes of those after it), and one search for all of them, each
    /// section's members among its keys (``InsertionSearch``). Returns the sections' names,
    /// in the search's order; nil when the searches cannot be made together (the caller
    /// places the members one by one).
    func prepareTogether(_ members: [Member], firstMembers: [String: ManagedObject], sorts: [FetchSortDescriptor],
                         context: ObjectContext) -> (names: [String], search: InsertionSearch)? {
        guard sorts.allSatisfy({ !$0.key.contains(".") }) else { return nil }
        var names: [String] = [], groups: [String: [Member]] = [:]
        for member in members {
            if groups[member.section] == nil { names.append(member.section) }
            groups[member.section, default: []].append(member)
        }
        for name in names {
            _ = sectionIndex(named: name, for: groups[name]![0].object, firstMembers: firstMembers, sorts: sorts, context: context)
        }
        let sectionIndexes = Dictionary(layout.enumerated().map { ($1.name, $0) }) { a, _ in a }
        let searched = names.map { name in
            let group = groups[name]!
            return (keys: layout[sectionIndexes[name]!].keys, objects: group.map(\.object),
                    values: group.allSatisfy { $0.values != nil } ? group.map { $0.values! } : nil)
        }
        guard let search = try? context.insertionSearch(of: searched, entityName: entityName, sortedBy: sorts) else { return nil }
        return (names, search)
    }

    /// Step 4 for many members, after their searches: each section's keys and its members
    /// (in result order) merged in one pass at the places found (`positions`, by section as
    /// in `names`). Returns each member's index and gap (its place among the objects that
    /// did not change); nil, with no member placed, when the places are out of order (a
    /// probed row changed under the search: the caller places them one by one).
    func mergeTogether(_ members: [Member], names: [String], at positions: [[Int]]) -> (items: [Int64: Int], gaps: [Int64: Int])? {
        var groups: [String: [Member]] = [:]
        for member in members { groups[member.section, default: []].append(member) }
        guard positions.count == names.count,
              positions.allSatisfy({ found in zip(found, found.dropFirst()).allSatisfy { $0 <= $1 } }) else { return nil }
        var items: [Int64: Int] = [:], gaps: [Int64: Int] = [:]
        for (name, found) in zip(names, positions) {
            let s = layout.firstIndex { $0.name == name }!
            let keys = layout[s].keys, group = groups[name]!
            var merged: [Int64] = []
            merged.reserveCapacity(keys.count + group.count)
            var next = 0
            for (member, position) in zip(group, found) {
                merged.append(contentsOf: keys[next..<position])
                next = position
                items[member.key] = merged.count
                gaps[member.key] = position
                merged.append(member.key)
            }
            merged.append(contentsOf: keys[next...])
            layout[s].keys = merged
        }
        return (items, gaps)
    }
}

/// Step 4 for many members whose sort keys are their own attributes: all their searches in
/// step (one query a step), then each section's keys and members merged in one pass.
struct PlacingTogether: PlacementWay {
    func place<Result>(_ placement: FetchedResultsController<Result>.Placement, in controller: FetchedResultsController<Result>,
                       context: ObjectContext, changes: ObjectChanges?) -> PlacementResult {
        guard let (names, search) = controller.prepareTogether(placement.members, firstMembers: placement.firstMembers,
                                                                sorts: controller.fetchRequest.sortDescriptors, context: context),
              let found = try? context.store.database.read({ db in try search.run(in: db) }),
              let placed = controller.mergeTogether(placement.members, names: names, at: found.positions) else { return .needsOneByOne }
        return .placed(items: placed.items, gaps: placed.gaps)
    }
}
