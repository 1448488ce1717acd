import Foundation
import ObjectStore

extension FetchedResultsController {
    /// Places the changed objects in the list, then tells the delegate. With `inBackground`
    /// (the changes, merged from a save elsewhere, on a long list), the searches of many
    /// objects placed together run on a reader of the store, off the context's queue: the
    /// list and the delegate take them on a later turn of the queue, and changes that come
    /// meanwhile wait for them.
    func placeInMemory(changed: [Int64: Set<String>?], deleted: Set<Int64>, context: ObjectContext, inBackground: ObjectChanges?) {
        let placement = takeOut(changed: changed, deleted: deleted, context: context)
        // 4. Put each one in its place: its section (made when new), then a search, in the
        // way the policy picks (see PlacementWay).
        let way = policy.placement(memberCount: placement.members.count, mayRunInBackground: inBackground != nil).way
        var result = way.place(placement, in: self, context: context, changes: inBackground)
        if case .needsOneByOne = result { result = PlacingOneByOne().place(placement, in: self, context: context, changes: nil) }
        if case .placed(let items, let gaps) = result { finish(placement, placed: (items, gaps)) }
    }

    /// Steps 1–3: finds where each changed object was, takes it out of `layout`, and
    /// lists those that belong to the results now, in result order.
    func takeOut(changed: [Int64: Set<String>?], deleted: Set<Int64>, context: ObjectContext) -> Placement {
        var placement = Placement(oldLayout: layout)
        // 1. Where each changed object was.
        let oldLocations = locations(of: changed.keys, context: context)
        placement.oldLocations = oldLocations
        // 2. Take them out; remember their gap among the unchanged objects of their section.
        for s in layout.indices {
            let mine = oldLocations.filter { $0.value.section == s }.sorted { $0.value.item < $1.value.item }
            for (n, entry) in mine.enumerated() { placement.oldGaps[entry.key] = entry.value.item - n }
            if mine.count > 8 {
                // One pass, not a move of the section's tail for each: the leaving items
                // are in order, so each is met in turn (no set asked for every row).
                var kept: [Int64] = []
                kept.reserveCapacity(layout[s].keys.count - mine.count)
                var next = mine.startIndex
                for (item, key) in layout[s].keys.enumerated() {
                    if next < mine.endIndex && mine[next].value.item == item { next += 1 } else { kept.append(key) }
                }
                layout[s].keys = kept
            } else {
                for entry in mine.reversed() { layout[s].keys.remove(at: entry.value.item) }
            }
        }
        // 3. Which changed objects belong to the results now, in result order. Those not
        // in memory (merged from another context's save) are read in one query, not one each.
        let members = inResultOrder(self.members(of: changed, deleted: deleted, context: context))
        placement.members = members
        for member in members where placement.firstMembers[member.section] == nil { placement.firstMembers[member.section] = member.object }
        return placement
    }

    /// Where each of `keys` is in `layout`: for a few, first in the section its values name
    /// now (a change seldom moves an object to another section), then in the others; for
    /// many, one pass, a bitmap look-up a row, hashing only the changed ones.
    func locations(of keys: Dictionary<Int64, Set<String>?>.Keys, context: ObjectContext) -> [Int64: Location] {
        var oldLocations: [Int64: Location] = [:]
        if keys.count <= 16 {
            for key in keys {
                let likely = sectionNameKeyPath.flatMap { keyPath in
                    (try? context.object(with: ObjectID(entityName: entityName, rowKey: key))).flatMap { object in
                        let name = context.sectionName(forKeyPath: keyPath, of: object)
                        return layout.firstIndex { $0.name == name }
                    }
                }
                for s in (likely.map { [$0] } ?? []) + layout.indices.filter({ $0 != likely }) {
                    if let i = layout[s].keys.firstIndex(of: key) { oldLocations[key] = Location(section: s, item: i); break }
                }
            }
        } else {
            let changedKeys = KeyMembership(Set(keys))
            for (s, section) in layout.enumerated() {
                for (i, key) in section.keys.enumerated() where changedKeys.contains(key) { oldLocations[key] = Location(section: s, item: i) }
            }
        }
        return oldLocations
    }

    /// `members` in result order. Many: each object's sort values read once, not at every
    /// comparison, and their indexes sorted (moving the members themselves costs more than
    /// comparing them).
    private func inResultOrder(_ members: [Member]) -> [Member] {
        var members = members
        let sorts = fetchRequest.sortDescriptors
        if members.count > 16, sorts.allSatisfy({ !$0.key.contains(".") }) {
            let values = members.map { SortValues(of: $0.object, sortedBy: sorts) }
            let order = members.indices.sorted { a, b in
                switch sorts.compare(values[a], values[b]) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: return members[a].object.objectID < members[b].object.objectID
                }
            }
            members = order.map { i in
                var member = members[i]
                member.values = values[i]
                return member
            }
        } else {
            members.sort { a, b in Self.precedes(a.object, b.object, sorts) }
        }
        return members
    }


    /// Steps 5–6: sections left empty go, and the delegate is told, by the one
    /// classification: the changed objects, where they were and are, with their gaps among
    /// the unchanged objects, which stay.
    func finish(_ placement: Placement, placed: (items: [Int64: Int], gaps: [Int64: Int])) {
        // 5. Sections left empty go.
        layout.removeAll { $0.keys.isEmpty }

        // 6. The batch.
        let oldNames = placement.oldLayout.map(\.name)
        let sectionsOnly = { (names: [String]) in names.map { SectionSnapshot(name: $0, objectIDs: []) } }
        var batch = ChangeBatch(sectionChanges: ChangeBatch.sectionChanges(from: sectionsOnly(oldNames), to: sectionsOnly(layout.map(\.name))))
        let newIndexByName = Dictionary(layout.enumerated().map { ($1.name, $0) }) { a, _ in a }
        var oldPlaces = ObjectPlacements<Int64>(capacity: placement.oldLocations.count)
        for (key, old) in placement.oldLocations.sorted(by: { ($0.value.section, $0.value.item) < ($1.value.section, $1.value.item) }) {
            oldPlaces.append(key, at: IndexPath(item: old.item, section: old.section), gap: placement.oldGaps[key]!)
        }
        var newPlaces = ObjectPlacements<Int64>(capacity: placement.members.count)
        // Members went in in result order: a later one never moved an earlier one.
        for member in placement.members {
            newPlaces.append(member.key, at: IndexPath(item: placed.items[member.key]!, section: newIndexByName[member.section]!),
                             gap: placed.gaps[member.key]!)
        }
        batch.objectChanges = ChangeBatch.objectChanges(
            from: oldPlaces, to: newPlaces, sameSection: { oldNames[$0] == self.layout[$1].name },
            isUpdated: { _ in true }, objectID: { ObjectID(entityName: self.entityName, rowKey: $0) })
        deliver(batch, from: placement.oldLayout)
    }

    /// Where `object` goes among the objects of section `s`. The context's search reads one
    /// row a probe in one transaction (about 1 ms among 170,000 objects); sorts across
    /// relationships use the binary search below, which faults a batch around each probe,
    /// each in a query of its own (about 3 ms).
    func insertionIndex(of object: ManagedObject, inSection s: Int, sorts: [FetchSortDescriptor], context: ObjectContext) -> Int {
        if let index = try? context.insertionIndex(of: object, in: layout[s].keys, entityName: entityName, sortedBy: sorts) {
            return index
        }
        let keys = layout[s].keys
        var low = 0, high = keys.count
        while low < high {
            let mid = (low + high) / 2
            let other = context.object(at: mid, ofRowKeys: keys, entityName: entityName, batchSize: max(fetchRequest.fetchBatchSize, 0))
            if Self.precedes(other, object, sorts) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The index of the section named `name`, inserting it (empty) in section order when new.
    /// A section emptied by this change is placed by its first member in `firstMembers`
    /// (one without members goes once the members are placed).
    func sectionIndex(named name: String, for object: ManagedObject, firstMembers: [String: ManagedObject],
                      sorts: [FetchSortDescriptor], context: ObjectContext) -> Int {
        if let index = layout.firstIndex(where: { $0.name == name }) { return index }
        // Sections are in the order of the first sort descriptor, which sorts by the section key.
        let first = Array(sorts.prefix(1))
        let index = layout.firstIndex { section in
            let other = section.keys.first.flatMap { try? context.object(with: ObjectID(entityName: entityName, rowKey: $0)) }
                ?? firstMembers[section.name]
            guard let other else { return false }
            return first.compare(object, other) == .orderedAscending
        } ?? layout.count
        layout.insert(Section(name: name, keys: []), at: index)
        return index
    }

    /// Whether `a` comes before `b`: by the sort descriptors, then by object ID, as SQL orders ties.
    static func precedes(_ a: ManagedObject, _ b: ManagedObject, _ sorts: [FetchSortDescriptor]) -> Bool {
        switch sorts.compare(a, b) {
        case .orderedAscending: return true
        case .orderedDescending: return false
        case .orderedSame: return a.objectID < b.objectID
        }
    }
}

/// Step 4 for a few members (a person's edits), and wherever placing together cannot: each
/// placed by a binary search of its own, its section made when new.
struct PlacingOneByOne: PlacementWay {
    func place<Result>(_ placement: FetchedResultsController<Result>.Placement, in controller: FetchedResultsController<Result>,
                       context: ObjectContext, changes: ObjectChanges?) -> PlacementResult {
        let sorts = controller.fetchRequest.sortDescriptors
        var items: [Int64: Int] = [:], gaps: [Int64: Int] = [:]
        var insertedHere: [String: Int] = [:]
        for member in placement.members {
            let s = controller.sectionIndex(named: member.section, for: member.object, firstMembers: placement.firstMembers, sorts: sorts, context: context)
            let low = controller.insertionIndex(of: member.object, inSection: s, sorts: sorts, context: context)
            controller.layout[s].keys.insert(member.key, at: low)
            items[member.key] = low
            gaps[member.key] = low - insertedHere[member.section, default: 0]
            insertedHere[member.section, default: 0] += 1
        }
        return .placed(items: items, gaps: gaps)
    }
}
